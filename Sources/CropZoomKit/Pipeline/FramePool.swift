import CFFmpeg

/// A bounded pool of pictures of one size and format, reused frame after frame.
///
/// `acquire()` hands out a frame whose buffers nobody else references (an encoder may keep a
/// reference to a frame it was sent; such a frame is skipped until it is released). The pool
/// never holds more than `capacity` frames; the counters say how often it had to allocate.
///
/// `@unchecked Sendable`: all state is behind `lock`; frames are handed over whole.
final class FramePool: @unchecked Sendable {
    let width: Int, height: Int, format: AVPixelFormat
    let capacity: Int
    private var free: [Frame] = []
    private var outstanding = 0
    private let lock = Mutex()
    private(set) var statistics = PoolStatistics()

    init(width: Int, height: Int, format: AVPixelFormat, capacity: Int) {
        self.width = width; self.height = height; self.format = format
        self.capacity = max(1, capacity)
        free.reserveCapacity(self.capacity)
        statistics.capacity = self.capacity
    }

    /// A frame ready to be written. Throws when all `capacity` frames are out (a leak: every
    /// acquired frame must come back through `release`).
    func acquire() throws(CropZoomError) -> Frame {
        let reused: Frame? = lock.withLock {
            // Prefer a frame whose buffers are no longer referenced by an encoder.
            if let i = free.lastIndex(where: { $0.isWritable }) {
                outstanding += 1
                statistics.reuses += 1
                statistics.highWater = max(statistics.highWater, outstanding)
                return free.remove(at: i)
            }
            return nil
        }
        if let reused { return reused }
        let mustAllocate: Bool = lock.withLock {
            if outstanding + free.count < capacity {
                outstanding += 1
                statistics.allocations += 1
                statistics.highWater = max(statistics.highWater, outstanding)
                return true
            }
            return false
        }
        if mustAllocate {
            return try Frame(width: width, height: height, format: format)
        }
        // Every pooled frame is still referenced elsewhere: give one fresh buffers.
        let victim: Frame? = lock.withLock {
            guard !free.isEmpty else { return nil }
            outstanding += 1
            statistics.allocations += 1
            statistics.highWater = max(statistics.highWater, outstanding)
            return free.removeFirst()
        }
        guard let victim else {
            throw CropZoomError(.processing, what: "frame pool",
                                reason: "all \(capacity) frames are in use (a frame was not released)")
        }
        victim.unref()
        victim.pointer.pointee.width = Int32(width)
        victim.pointer.pointee.height = Int32(height)
        victim.pointer.pointee.format = format.rawValue
        try check(av_frame_get_buffer(victim.pointer, 0), "allocating a \(width)x\(height) picture")
        return victim
    }

    /// Gives a frame back for reuse.
    func release(_ frame: Frame) {
        lock.withLock {
            outstanding -= 1
            free.append(frame)
        }
    }

    func snapshot() -> PoolStatistics { lock.withLock { statistics } }
}
