import ArgumentParser
import CropZoomKit
import Foundation

/// One file of a batch and what became of it.
struct BatchItem: Codable, Sendable, Equatable {
    enum Result: String, Codable, Sendable, CaseIterable {
        case pending, ok, failed, skipped, interrupted
        case notRun = "not started"
        /// Written, from a damaged input: what was there (a truncated file, damaged packets skipped); `warning` says
        /// what. `--strict` fails such an input instead.
        case salvaged

        /// A result whose output was written (ok or salvaged).
        var wrote: Bool { self == .ok || self == .salvaged }
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
    /// A salvaged input's damage ("truncated: the data ends at 0.87 s of 2.00 s", "3 damaged packets skipped").
    var warning: String? = nil

    /// The damage a finished transcode reported (`done`), or nil for a clean input.
    static func damage(_ done: JobRecord.Done) -> String? {
        var parts: [String] = []
        if let truncated = done.truncated { parts.append(truncated) }
        if done.corruptSkipped > 0 {
            parts.append("\(done.corruptSkipped) damaged packet\(done.corruptSkipped == 1 ? "" : "s") skipped")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
