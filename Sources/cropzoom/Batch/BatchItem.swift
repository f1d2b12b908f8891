import ArgumentParser
import CropZoomKit
import Foundation

/// One file of a batch and what became of it.
struct BatchItem: Codable, Sendable, Equatable {
    enum Result: String, Codable, Sendable, CaseIterable {
        case pending, ok, failed, skipped, interrupted
        case notRun = "not started"
    }
    var input: String
    var output: String
    var result: Result = .pending
    var frames: Int? = nil
    var fps: Double? = nil
    var seconds: Double? = nil
    var outputBytes: Int? = nil
    var error: String? = nil
    var exitCode: Int32? = nil
    /// Why a file found by scanning was skipped without running ("not a media file …", "no video stream"), or that
    /// an earlier run of its shard wrote it.
    var reason: String? = nil
}
