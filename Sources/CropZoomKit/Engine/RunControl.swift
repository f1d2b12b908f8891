import Foundation

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

/// The run-wide stop switch and the first error. Every blocking queue and pool of a run
/// registers here so that `fail` wakes all of them.
///
/// `@unchecked Sendable`: all state is behind `lock`.
final class RunControl: @unchecked Sendable {
    private let lock = NSLock()
    private var error: CropZoomError?
    private var stopped = false
    private var waiters: [() -> Void] = []

    var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
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
