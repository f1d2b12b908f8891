import Foundation

/// A one-way "stop" flag set from any thread (`TranscodeJob.cancel`) and polled by the engines.
///
/// `@unchecked Sendable`: the flag is read and written under its lock.
package final class CancelFlag: @unchecked Sendable {
    package init() {}

    private let lock = NSLock()
    private var set = false
    package var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return set
    }
    package func raise() {
        lock.lock()
        set = true
        lock.unlock()
    }
}

/// The run-wide stop switch and the first error. Every blocking queue and pool of a run
/// registers here so that `fail` wakes all of them.
///
/// `@unchecked Sendable`: all state is behind `lock`.
package final class RunControl: @unchecked Sendable {
    package init() {}

    private let lock = NSLock()
    private var error: CropZoomError?
    private var stopped = false
    private var waiters: [() -> Void] = []

    package var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }
    package var firstError: CropZoomError? {
        lock.lock()
        defer { lock.unlock() }
        return error
    }

    /// Wakes every thread waiting on `condition` when the run stops (one call per queue or pool,
    /// at set-up). The condition alone is kept, not its owner.
    package func wakeOnStop(_ condition: NSCondition) {
        onStop {
            condition.lock()
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Registers a wake-up for blocked waiters (called once per queue/pool at set-up).
    private func onStop(_ wake: @escaping () -> Void) {
        lock.lock()
        waiters.append(wake)
        lock.unlock()
    }

    /// Records `error` if it is the first, stops everything and wakes every waiter.
    package func fail(_ e: CropZoomError) {
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
