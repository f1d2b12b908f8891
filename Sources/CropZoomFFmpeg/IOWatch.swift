import CFFmpeg
import CropZoomCore

/// What interrupts a live input's reads besides a signal (`cz_watch`: `cz_watch_new` / `cz_watch_free`): a stop
/// request, so a recording ends cleanly even while a read waits for data, and a deadline, re-armed after every
/// packet, so that a source silent for the live timeout ends the recording.
///
/// `@unchecked Sendable`: its C fields are atomics; any thread may stop or arm it.
package final class IOWatch: @unchecked Sendable {
    let pointer: OpaquePointer

    package init() throws(CropZoomError) {
        guard let w = cz_watch_new() else {
            throw CropZoomError(.processing, what: "watching the input", reason: "out of memory")
        }
        pointer = w
    }

    deinit { cz_watch_free(pointer) }

    /// `cz_watch_stop`: reads end from now on.
    package func stop() { cz_watch_stop(pointer) }

    /// `cz_watch_arm`: a read still waiting `seconds` from now ends (0: no deadline).
    package func arm(_ seconds: Double) { cz_watch_arm(pointer, seconds) }

    /// Why reads end: a stop request, the deadline, or nothing yet (`cz_watch_reason`).
    package var reason: Reason {
        switch cz_watch_reason(pointer) {
        case 1: return .stopped
        case 2: return .timedOut
        default: return .none
        }
    }

    package enum Reason { case none, stopped, timedOut }
}

extension AVIOInterruptCB {
    /// The interrupt callback of an input's I/O: `watch`'s (a live source's stop and deadline, a job's cancel switch)
    /// when there is one (`cz_watch_callback`), else the process's signals (`cz_interrupt_callback`).
    static func watching(_ watch: IOWatch?) -> AVIOInterruptCB {
        guard let watch else { return AVIOInterruptCB(callback: cz_interrupt_callback, opaque: nil) }
        return AVIOInterruptCB(callback: cz_watch_callback, opaque: UnsafeMutableRawPointer(watch.pointer))
    }
}
