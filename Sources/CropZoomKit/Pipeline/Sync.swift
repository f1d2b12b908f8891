import Foundation

/// Thrown inside the engine when another stage failed or the run was cancelled: the stage
/// stops quietly and the first real error is the one reported.
struct Cancelled: Error {}

/// The run-wide stop switch and the first error. Every blocking queue and pool of a run
/// registers here so that `fail` wakes all of them.
///
/// `@unchecked Sendable`: all state is behind `lock`.
/// A one-way "stop" flag set from any thread (`Pipeline.cancel`) and polled by the engines.
///
/// `@unchecked Sendable`: the flag is read and written under its lock.
final class CancelFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var set = false
    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return set
    }
    func raise() {
        lock.lock()
        set = true
        lock.unlock()
    }
}

final class RunControl: @unchecked Sendable {
    private let lock = NSLock()
    private var error: CropZoomError?
    private var stopped = false
    private var waiters: [() -> Void] = []

    private var enough = false

    var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }
    /// The job's frame limit was reached: readers stop early; nothing failed.
    var hasEnough: Bool {
        lock.lock()
        defer { lock.unlock() }
        return enough
    }
    func markEnough() {
        lock.lock()
        enough = true
        lock.unlock()
    }
    var firstError: CropZoomError? {
        lock.lock()
        defer { lock.unlock() }
        return error
    }

    /// Registers a wake-up for blocked waiters (called once per queue/pool at set-up).
    func onStop(_ wake: @escaping () -> Void) {
        lock.lock()
        waiters.append(wake)
        lock.unlock()
    }

    /// Records `error` if it is the first, stops everything and wakes every waiter.
    func fail(_ e: CropZoomError) {
        lock.lock()
        if error == nil { error = e }
        let alreadyStopped = stopped
        stopped = true
        let wakes = waiters
        lock.unlock()
        if !alreadyStopped {
            for wake in wakes { wake() }
        }
    }
}

/// A fixed-capacity FIFO between two stages with backpressure: `push` waits while full, `pop`
/// waits while empty; `close` ends the stream (pop returns nil once drained). Storage is a ring
/// allocated once.
///
/// `@unchecked Sendable`: all state is behind `condition`; elements are handed over whole (the
/// producer gives up what it pushed).
final class BoundedQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var ring: [Element?]
    private var head = 0, count = 0
    private var closed = false
    private let control: RunControl
    let capacity: Int
    /// Time producers and consumers spent blocked, in seconds.
    private(set) var pushWait = 0.0, popWait = 0.0

    init(capacity: Int, control: RunControl) {
        self.capacity = max(1, capacity)
        ring = Array(repeating: nil, count: self.capacity)
        self.control = control
        control.onStop { [weak self] in
            guard let self else { return }
            self.condition.lock()
            self.condition.broadcast()
            self.condition.unlock()
        }
    }

    /// Appends `element`, waiting while the queue is full. Throws `Cancelled` when the run stops.
    func push(_ element: Element) throws(Cancelled) {
        condition.lock()
        defer { condition.unlock() }
        if count == capacity {
            let t0 = monotonicSeconds()
            while count == capacity && !control.isStopped { condition.wait() }
            pushWait += monotonicSeconds() - t0
        }
        if control.isStopped { throw Cancelled() }
        ring[(head + count) % capacity] = element
        count += 1
        condition.broadcast()
    }

    /// The next element, waiting while empty; nil once closed and drained. Throws `Cancelled`
    /// when the run stops.
    func pop() throws(Cancelled) -> Element? {
        condition.lock()
        defer { condition.unlock() }
        if count == 0 && !closed {
            let t0 = monotonicSeconds()
            while count == 0 && !closed && !control.isStopped { condition.wait() }
            popWait += monotonicSeconds() - t0
        }
        if control.isStopped { throw Cancelled() }
        if count == 0 { return nil }
        let e = ring[head]
        ring[head] = nil
        head = (head + 1) % capacity
        count -= 1
        condition.broadcast()
        return e
    }

    /// No more pushes: consumers get nil after the last element.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}

/// A bounded set of reusable objects (packet or frame shells): `acquire` waits while all are
/// out. Objects are created up front; none is allocated while the run goes on.
///
/// `@unchecked Sendable`: all state is behind `condition`; objects are handed over whole.
final class ShellPool<Shell: AnyObject>: @unchecked Sendable {
    private let condition = NSCondition()
    private var free: [Shell]
    private let control: RunControl
    let capacity: Int
    private(set) var highWater = 0
    private(set) var acquisitions = 0

    init(capacity: Int, control: RunControl, make: () throws(CropZoomError) -> Shell) throws(CropZoomError) {
        self.capacity = capacity
        var shells: [Shell] = []
        shells.reserveCapacity(capacity)
        for _ in 0..<capacity { shells.append(try make()) }
        free = shells
        self.control = control
        control.onStop { [weak self] in
            guard let self else { return }
            self.condition.lock()
            self.condition.broadcast()
            self.condition.unlock()
        }
    }

    func acquire() throws(Cancelled) -> Shell {
        condition.lock()
        defer { condition.unlock() }
        while free.isEmpty && !control.isStopped { condition.wait() }
        if control.isStopped { throw Cancelled() }
        acquisitions += 1
        highWater = max(highWater, capacity - free.count + 1)
        return free.removeLast()
    }

    func release(_ shell: Shell) {
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
