import Foundation

/// A fixed-capacity FIFO between stages on different threads, with backpressure (`push` waits
/// while full, `pop` while empty) and both directions of "stop" (FFmpeg 7's `thread_queue.h`):
/// - end of stream: each producer calls `close` once; when the last has, `pop` returns nil once
///   the queue is drained;
/// - no more wanted: the consumer calls `refuse`; `push` then answers ``Demand/enough`` and
///   takes nothing (the producer keeps what it offered), and the consumer drains what is left.
/// Storage is a ring allocated once.
///
/// `@unchecked Sendable`: all state is behind `condition`; elements are handed over whole (the
/// producer gives up what it pushed).
package final class BoundedQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var ring: [Element?]
    private var head = 0, count = 0
    private var closed = false
    private var producers: Int
    private var refused = false
    private let control: RunControl
    package let capacity: Int
    /// Time producers and consumers spent blocked, in seconds.
    package private(set) var pushWait = 0.0, popWait = 0.0

    package init(capacity: Int, producers: Int = 1, control: RunControl) {
        self.capacity = max(1, capacity)
        self.producers = producers
        ring = Array(repeating: nil, count: self.capacity)
        self.control = control
        control.wakeOnStop(condition)
    }

    /// Appends `element`, waiting while the queue is full; ``Demand/enough`` (and nothing taken)
    /// once the consumer refused. Throws `CropZoomError.stopped` when the run stops.
    package func push(_ element: Element) throws(CropZoomError) -> Demand {
        condition.lock()
        defer { condition.unlock() }
        if refused { return .enough }
        if count == capacity {
            let t0 = monotonicSeconds()
            while count == capacity && !refused && !control.isStopped { condition.wait() }
            pushWait += monotonicSeconds() - t0
        }
        if control.isStopped { throw .stopped }
        if refused { return .enough }
        append(element)
        return .more
    }

    /// What `offer` did.
    package enum Offer: Sendable { case taken, full, refused }

    /// Appends `element` if there is room, never waiting (a live reader must not wait): `.full` or `.refused`
    /// take nothing.
    package func offer(_ element: Element) -> Offer {
        condition.lock()
        defer { condition.unlock() }
        if refused { return .refused }
        if count == capacity { return .full }
        append(element)
        return .taken
    }

    /// Appends `element`, never waiting: when the queue is full its oldest element is taken out first and
    /// returned, for the caller to drop (GStreamer's `queue leaky=downstream`: what a live engine puts between its
    /// decoder and the stages that may fall behind).
    package func pushEvictingOldest(_ element: Element) -> Element? {
        condition.lock()
        defer { condition.unlock() }
        let evicted = count == capacity ? removeFirst() : nil
        append(element)
        return evicted
    }

    /// The next element, waiting while empty; nil once closed and drained. Throws
    /// `CropZoomError.stopped` when the run stops.
    package func pop() throws(CropZoomError) -> Element? {
        condition.lock()
        defer { condition.unlock() }
        if count == 0 && !closed {
            let t0 = monotonicSeconds()
            while count == 0 && !closed && !control.isStopped { condition.wait() }
            popWait += monotonicSeconds() - t0
        }
        if control.isStopped { throw .stopped }
        if count == 0 { return nil }
        return removeFirst()
    }

    /// What ``pop(until:)`` found.
    package enum Popped {
        case element(Element)
        /// The deadline passed with the queue empty.
        case timedOut
        /// Closed and drained.
        case ended
    }

    /// The next element, waiting while empty until `deadline` (``monotonicSeconds()``; nil: no deadline, as
    /// ``pop()``). Throws `CropZoomError.stopped` when the run stops.
    package func pop(until deadline: Double?) throws(CropZoomError) -> Popped {
        guard let deadline else { return try pop().map { .element($0) } ?? .ended }
        condition.lock()
        defer { condition.unlock() }
        if count == 0 && !closed {
            let t0 = monotonicSeconds()
            while count == 0 && !closed && !control.isStopped {
                let left = deadline - monotonicSeconds()
                if left <= 0 { break }
                _ = condition.wait(until: Date(timeIntervalSinceNow: left))
            }
            popWait += monotonicSeconds() - t0
        }
        if control.isStopped { throw .stopped }
        if count > 0 { return removeFirst().map { .element($0) } ?? .ended }
        return closed ? .ended : .timedOut
    }

    /// The ring's two moves (under `condition`); each wakes whoever waits for the other.
    private func append(_ element: Element) {
        ring[(head + count) % capacity] = element
        count += 1
        condition.broadcast()
    }

    private func removeFirst() -> Element? {
        let e = ring[head]
        ring[head] = nil
        head = (head + 1) % capacity
        count -= 1
        condition.broadcast()
        return e
    }

    /// One producer is done; after the last, consumers get nil once the queue is drained.
    package func close() {
        condition.lock()
        producers -= 1
        if producers <= 0 { closed = true }
        condition.broadcast()
        condition.unlock()
    }

    /// The consumer wants no more: later pushes answer ``Demand/enough``.
    package func refuse() {
        condition.lock()
        refused = true
        condition.broadcast()
        condition.unlock()
    }
}

/// A bounded set of reusable objects (packet or frame shells): `acquire` waits while all are
/// out. Objects are created up front; none is allocated while the run goes on.
///
/// `@unchecked Sendable`: all state is behind `condition`; objects are handed over whole.
package final class ShellPool<Shell: AnyObject>: @unchecked Sendable {
    private let condition = NSCondition()
    private var free: [Shell]
    private let control: RunControl
    package let capacity: Int
    package private(set) var highWater = 0
    package private(set) var acquisitions = 0

    package init(capacity: Int, control: RunControl, make: () throws(CropZoomError) -> Shell) throws(CropZoomError) {
        self.capacity = capacity
        var shells: [Shell] = []
        shells.reserveCapacity(capacity)
        for _ in 0..<capacity { shells.append(try make()) }
        free = shells
        self.control = control
        control.wakeOnStop(condition)
    }

    package func acquire() throws(CropZoomError) -> Shell {
        condition.lock()
        defer { condition.unlock() }
        while free.isEmpty && !control.isStopped { condition.wait() }
        if control.isStopped { throw .stopped }
        acquisitions += 1
        highWater = max(highWater, capacity - free.count + 1)
        return free.removeLast()
    }

    package func release(_ shell: Shell) {
        condition.lock()
        free.append(shell)
        condition.signal()
        condition.unlock()
    }
}

/// Monotonic clock in seconds (`clock_gettime(CLOCK_MONOTONIC)`; no allocation): the clock of
/// the engine's timings, public so that callers timing whole runs (the CLI's batch and bench)
/// read the same one.
@inlinable
public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// The calling thread's CPU time in seconds (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`; no allocation): with
/// ``monotonicSeconds()`` around a call, how much of it the thread spent working rather than blocked.
@inlinable
public func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}
