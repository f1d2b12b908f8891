import CropZoomFFmpeg
import Foundation

/// A bounded pool of pictures of one size and format, reused frame after frame: the
/// pixel-buffer pool between transform and encode.
///
/// `acquire()` hands out a frame whose buffers nobody else references (an encoder may keep a
/// reference to a frame it was sent; such a frame is given fresh buffers, which is counted as
/// an allocation). The pool never holds more than `capacity` frames: when all are out,
/// `acquire()` waits for a `release` (or, without a run to wait in, throws: a frame was leaked).
///
/// `@unchecked Sendable`: all state is behind `condition`; frames are handed over whole.
final class FramePool: @unchecked Sendable {
    let width: Int, height: Int, format: PixelFormat
    let capacity: Int
    private var free: [Frame] = []
    private var outstanding = 0
    private let condition = NSCondition()
    private var statistics = PoolStatistics()
    private let control: RunControl?

    init(width: Int, height: Int, format: PixelFormat, capacity: Int, control: RunControl? = nil) {
        self.width = width
        self.height = height
        self.format = format
        self.capacity = max(1, capacity)
        self.control = control
        free.reserveCapacity(self.capacity)
        statistics.capacity = self.capacity
        control?.wakeOnStop(condition)
    }

    /// Allocates every frame the pool may hold, before the first is needed, so that warm-up does
    /// not depend on how far the producer gets ahead: afterwards `acquire` only reuses (an
    /// encoder that keeps a reference still forces fresh buffers, counted as allocations).
    func prefill() throws(CropZoomError) {
        condition.lock()
        let missing = capacity - free.count - outstanding
        condition.unlock()
        guard missing > 0 else { return }
        var fresh: [Frame] = []
        fresh.reserveCapacity(missing)
        for _ in 0..<missing { fresh.append(try Frame(width: width, height: height, format: format)) }
        condition.lock()
        free.append(contentsOf: fresh)
        statistics.allocations += fresh.count
        condition.unlock()
    }

    /// A frame ready to be written.
    func acquire() throws(CropZoomError) -> Frame {
        condition.lock()
        while free.isEmpty && outstanding >= capacity {
            guard let control else {
                condition.unlock()
                throw CropZoomError(
                    .processing, what: "frame pool",
                    reason: "all \(capacity) frames are in use (a frame was not released)")
            }
            if control.isStopped { break }
            condition.wait()
        }
        if control?.isStopped == true {
            condition.unlock()
            throw CropZoomError(.processing, reason: "cancelled")
        }
        outstanding += 1
        statistics.highWater = max(statistics.highWater, outstanding)
        // Prefer a frame whose buffers no encoder references any more.
        if let i = free.lastIndex(where: { $0.isWritable }) {
            statistics.reuses += 1
            let f = free.remove(at: i)
            condition.unlock()
            return f
        }
        statistics.allocations += 1
        // Below capacity: a new frame (the referenced ones stay for later reuse); at capacity:
        // the oldest free frame gets fresh buffers.
        let victim = free.isEmpty || outstanding - 1 + free.count < capacity ? nil : free.removeFirst()
        condition.unlock()
        guard let victim else { return try Frame(width: width, height: height, format: format) }
        // Every pooled frame is still referenced elsewhere: give this one fresh buffers.
        try victim.allocatePicture(width: width, height: height, format: format)
        return victim
    }

    /// Every frame is out (the next `acquire` would wait for the encoder to give one back).
    var isExhausted: Bool {
        condition.lock()
        defer { condition.unlock() }
        return free.isEmpty && outstanding >= capacity
    }

    /// Gives a frame back for reuse.
    func release(_ frame: Frame) {
        condition.lock()
        outstanding -= 1
        free.append(frame)
        condition.signal()
        condition.unlock()
    }

    func snapshot() -> PoolStatistics {
        condition.lock()
        defer { condition.unlock() }
        return statistics
    }
}
