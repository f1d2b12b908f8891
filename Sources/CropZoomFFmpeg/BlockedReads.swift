import CCropZoomSystem
import CFFmpeg
import CropZoomCore
import CropZoomSystem
import Foundation

/// Ends reads blocked in a system call once their interrupt callback says stop. FFmpeg asks a context's interrupt
/// callback only between system calls, so a `read(2)` on a pipe or FIFO whose writer has stalled blocks until data
/// comes, whatever the callback would say: a signal is delivered to some other thread, a cancelled job's read
/// waits on, a live source's deadline never fires.
///
/// Each read through an input (``during(_:_:)``: opening, probing, `av_read_frame`) registers its thread and the
/// context's callback here. A watchdog thread, started with the first read and idle while none is registered, asks
/// every registered read's callback ten times a second; when one says stop, it sends that thread SIGURG
/// (`cz_wake_thread`, with a handler that does nothing installed without SA_RESTART by `cz_wake_install`): the
/// read returns EINTR, FFmpeg's I/O loop asks the callback, which ends the read.
///
/// `@unchecked Sendable`: every field is guarded by `condition`; a thread is signalled only while it is registered
/// (under the same lock), so never after its read has returned.
package final class BlockedReads: @unchecked Sendable {
    package static let shared = BlockedReads()

    private let condition = NSCondition()
    /// The registered reads, by thread id.
    private var readers: [Int32: AVIOInterruptCB] = [:]
    private var watchdog: Thread?
    /// The watchdog waits for a first read (not in its 100 ms round): a registration wakes it.
    private var idle = false

    private init() { cz_wake_install() }

    /// Runs `body` (a read through a context whose interrupt callback is `callback`) registered for waking.
    func during<T, E: Error>(_ callback: AVIOInterruptCB, _ body: () throws(E) -> T) throws(E) -> T {
        guard callback.callback != nil else { return try body() }
        let tid = cz_reading_thread_id()
        condition.lock()
        readers[tid] = callback
        if watchdog == nil {
            let thread = Thread { [unowned self] in self.watch() }
            thread.name = "cropzoom-read-watchdog"
            thread.stackSize = 64 << 10
            watchdog = thread
            thread.start()
        } else if idle {
            idle = false
            condition.signal()
        }
        condition.unlock()
        defer {
            condition.lock()
            readers[tid] = nil
            condition.unlock()
        }
        return try body()
    }

    /// Runs `body`, a read of cropzoom's own (standard input before FFmpeg reads it), woken when a signal comes
    /// (`cz_interrupt_callback`): its `read(2)` then returns EINTR.
    package func duringSignalWatch<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try during(AVIOInterruptCB(callback: cz_interrupt_callback, opaque: nil), body)
    }

    /// The watchdog's loop: while reads are registered, every 100 ms, signal each whose callback says stop.
    private func watch() {
        condition.lock()
        while true {
            while readers.isEmpty {
                idle = true
                condition.wait()
            }
            idle = false
            for (tid, cb) in readers where cb.callback?(cb.opaque) ?? 0 != 0 {
                _ = cz_wake_thread(tid)
            }
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.1))
        }
    }
}
