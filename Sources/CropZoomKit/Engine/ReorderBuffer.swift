import CropZoomCore
import CropZoomFFmpeg
import Foundation

/// Frames that workers finished, handed to the encoder in sequence.
///
/// `@unchecked Sendable`: all state is behind `condition`.
final class ReorderBuffer: @unchecked Sendable {
    private let condition = NSCondition()
    private var slots: [Int: Frame] = [:]
    private var liveWorkers: Int
    private let control: RunControl
    private(set) var waitSeconds = 0.0

    init(capacity: Int, workers: Int, control: RunControl) {
        slots.reserveCapacity(capacity * 2)
        liveWorkers = workers
        self.control = control
        control.wakeOnStop(condition)
    }

    func put(_ seq: Int, _ frame: Frame) throws(CropZoomError) {
        condition.lock()
        defer { condition.unlock() }
        if control.isStopped { throw .stopped }
        slots[seq] = frame
        condition.broadcast()
    }

    func workerFinished() {
        condition.lock()
        liveWorkers -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Frame `seq`, waiting for it; nil when every worker has finished and it never came.
    func take(_ seq: Int) throws(CropZoomError) -> Frame? {
        condition.lock()
        defer { condition.unlock() }
        let t0 = monotonicSeconds()
        defer { waitSeconds += monotonicSeconds() - t0 }
        while slots[seq] == nil && liveWorkers > 0 && !control.isStopped { condition.wait() }
        if control.isStopped { throw .stopped }
        return slots.removeValue(forKey: seq)
    }
}
