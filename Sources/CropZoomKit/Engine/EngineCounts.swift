import CropZoomFFmpeg
import CropZoomSystem

/// What an engine counted while running a job.
struct EngineCounts {
    var framesIn = 0
    var framesOut = 0
    var duplicates = 0
    var audioPackets = 0
    var copiedDamaged = 0
    var audioCorrupt = 0
    /// Times the input's clock restarted and was re-based (``ClockContinuity``), and the notice saying where.
    var clockRestarts = 0
    var clockNotice: String?
    var lastTime = 0.0
    var busy: [EngineStage: Double] = [:]
    var waits: [EngineWait: Double] = [:]
    var pool = PoolStatistics()
    var workers = 1
    /// Live: frames dropped, by where.
    var dropped: [DropPoint: Int] = [:]

    /// Read errors the demuxer skipped, packets the video decoder refused as damaged.
    var demuxSkipped = 0
    var decoderCorrupt = 0
    /// Why the input looks cut short, when it does (``Demuxer/truncation``).
    var truncation: String?
    /// How a live source ended (``Demuxer/liveEnd``).
    var liveEnd: String?

    init() {}
}

/// The stops from outside a run — the job's cancel switch, SIGINT and SIGTERM — checked in this one place, once per turn
/// of each engine loop (the serial loop, the reader's, the threaded engines' watch loop).
struct RunStops: Sendable {
    let cancel: CancelFlag
    /// Names the input in a cancelled job's error.
    let inputName: String
    /// A live recording's policy: a signal is its to decide (the first ends the recording, a second interrupts it).
    let live: LivePolicy?

    init(cancel: CancelFlag, inputName: String, live: LivePolicy? = nil) {
        self.cancel = cancel
        self.inputName = inputName
        self.live = live
    }

    /// Throws the stop that came, if one did: `.cancelled`, or `.interrupted` (a file's first signal; a live
    /// recording's second — its first is taken and ends the recording, ``LivePolicy/signalled(_:)``).
    func check() throws(CropZoomError) {
        if cancel.isSet { throw CropZoomError(.cancelled, path: inputName, reason: "cancelled") }
        if let live {
            let signal = ProcessSignal.take()
            if signal != 0, let error = live.signalled(signal) { throw error }
            return
        }
        let signal = ProcessSignal.pending
        if signal != 0 { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
    }

    /// After a live run: a signal that ended the recording before a loop took it is its first one, taken now, so
    /// that only a second one interrupts finishing the file.
    func takeLast() {
        guard let live, !live.stopRequested, ProcessSignal.take() != 0 else { return }
        live.requestStop()
    }
}
