import CropZoomFFmpeg
import CropZoomSystem
import Foundation
import Synchronization

/// What a live recording does when the machine cannot keep up — the policy the live engine's leaky edges ask (the
/// engine only moves messages), and its counters:
///
/// - The reader never waits: it drains the device or socket whatever the later stages do.
/// - Compressed video packets all go to the decoder (a frame needs every packet it refers to). Only when the packet
///   queue overflows (the decoder itself fell behind) are packets dropped, and then up to the next keyframe, so
///   what is decoded stays whole (``DropPoint/input``).
/// - Decoded frames wait in a short queue before the transform. When it is full the oldest frame is dropped; a
///   frame captured more than `maxLatency` before a worker takes it is dropped too — its age counts the time it
///   waited in the socket's and FFmpeg's buffers and in the decoder, not only in the queue
///   (``capturedAt(media:now:)``). Each is counted against the stage that
///   held it up: the encoder when no output picture was free (``DropPoint/encode``), else the transform
///   (``DropPoint/transform``). Kept frames keep their capture times: the output is variable-rate where frames
///   were dropped, never re-timed.
/// - Audio is never dropped: copied, it goes from the reader straight to the muxer; re-encoded, through a thread
///   of its own (its queue blocks rather than drops, and it never fills).
/// - Under overload the reader, its input's own threads (FFmpeg's UDP receive thread), the audio thread and the
///   muxer are not starved: every other thread of the process — codec threads, transform workers, the decoder
///   and encoder stages — runs 5 nice steps lower (``deprioritizeOthers()``).
/// - The first SIGINT/SIGTERM (or ``requestStop()``) stops the reader: the recording ends cleanly and is kept. The
///   output is interrupted only by a second signal (``abort()``; ``signalled(_:)`` decides which).
///
/// The live engine asks it at each of its leaky edges and tells it what its threads report; it decides nothing
/// itself. Everything that does not change per frame (the rate, the spacing, the latency bound, the stops) is fixed
/// when it is made, once the set-up knows the source.
///
/// `@unchecked Sendable`: counters behind `lock`; `skipping` and `lastKept` are the reader's and the decoder's own.
final class LivePolicy: @unchecked Sendable {
    /// The reader's, the sound reader's and the output's stops.
    let watches: LiveWatches
    var input: IOWatch { watches.input }
    let maxLatency: Double
    /// The source's frame rate (30 when it does not say).
    let framesPerSecond: Double
    private let lock = NSLock()
    private var counts: [DropPoint: Int] = [:]
    private var stopping = false
    /// Reader thread only: packets are being dropped up to the next keyframe.
    private var skipping = false
    /// A capture device's: the least time between two frames kept (half its frame interval); 0 for other sources.
    let minimumSpacing: Double
    /// Transform workers waiting for an output picture (every one is held by the encoder's side).
    private var waitingForPicture = 0
    private var deprioritized = false
    /// Decode thread only: the time of the last frame let through.
    private var lastKept = -Double.infinity
    /// Frames received (decoded).
    private var received = 0
    /// The live edge: arrival (monotonic seconds) less media time of the source's latest packet read as it came
    /// (nil before the first). A packet's capture is estimated as its media time plus this.
    private var edge: Double?
    /// When the job started (monotonic seconds), and when the first frame recorded was captured.
    private var startedAt: Double { watches.startedAt }
    private var firstCaptured: Double?
    /// With `--audio-input`: where the picture's recording ended (output seconds), once its reader has stopped.
    private var pictureEnd: Double?
    /// Threads that keep their priority, and how many of the engine's (reader, muxer) have said so.
    private var protected: Set<Int32> = []
    private var protectedCount = 0

    /// Keeps the calling thread (the reader's, the muxer's) at its priority.
    func protectCurrentThread() {
        let tid = ThreadControl.currentID
        lock.withLock {
            protected.insert(tid)
            protectedCount += 1
        }
    }

    /// Lowers every thread not protected by 5 nice steps (`cz_lower_priority_of`); returns how many.
    @discardableResult
    func deprioritizeOthers() -> Int {
        let keep = lock.withLock { protected }
        var lowered = 0
        for tid in LivePolicy.threadIDs() where !keep.contains(tid) {
            if ThreadControl.lowerPriority(of: tid, by: 5) { lowered += 1 }
        }
        return lowered
    }

    static func threadIDs() -> [Int32] { ThreadControl.allIDs() }

    /// Once every engine thread that keeps its priority has said so (`engineThreads`: the reader, the muxer, and
    /// the audio and sound threads where there are), every other thread gives way to them, once. Called by the live
    /// engine's watch loop.
    func watch(engineThreads: Int) {
        let ready = lock.withLock {
            guard !deprioritized && protectedCount >= engineThreads else { return false }
            deprioritized = true
            return true
        }
        if ready { deprioritizeOthers() }
    }

    /// `watches`: made before the source was opened; `framesPerSecond`: the source's stated rate (nil: it does not
    /// say); `minimumSpacing`: see the property.
    init(
        _ cfg: TranscodeConfiguration, watches: LiveWatches, framesPerSecond: Double? = nil,
        minimumSpacing: Double = 0
    ) {
        self.watches = watches
        maxLatency = cfg.maxLatency
        self.framesPerSecond = framesPerSecond ?? 30
        self.minimumSpacing = minimumSpacing
        protected = watches.protectedAtOpen
    }

    /// A signal was taken (`SIGINT`, `SIGTERM`): the first ends the recording cleanly (``requestStop()``); a second
    /// interrupts writing (``abort()``) and is the error the run ends with.
    func signalled(_ signal: Int32) -> CropZoomError? {
        let first = lock.withLock {
            defer { stopping = true }
            return !stopping
        }
        if first {
            watches.input.stop()
            return nil
        }
        abort()
        return CropZoomError(.interrupted(signal: signal), reason: "interrupted")
    }

    /// Ends the recording cleanly: the reader stops, what is in flight is finished and written. Any thread.
    func requestStop() {
        lock.withLock { stopping = true }
        watches.input.stop()
    }

    var stopRequested: Bool { lock.withLock { stopping } }

    /// The picture's reader stopped at `seconds` (output clock): the sound reader stops once its packets reach it, or
    /// at the latest 2 s from now (a sound device that stalled).
    func pictureEnded(at seconds: Double) {
        lock.withLock { pictureEnd = seconds }
        guard let watch = watches.soundInput else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) { watch.stop() }
    }

    /// Where the sound reader stops (output seconds); nil while the picture is being recorded.
    var soundEnd: Double? { lock.withLock { pictureEnd } }

    /// Interrupts writing too (the recording is then lost, as a file transcode's would be).
    func abort() { watches.output.stop() }

    /// Whether a video packet is offered to the decoder's queue (reader thread): not while packets are dropped up
    /// to the next keyframe after an overflow (such a packet is counted).
    func offers(keyframe: Bool) -> Bool {
        if skipping && !keyframe {
            count(.input)
            return false
        }
        return true
    }

    /// What became of an offered packet: taken (a keyframe ends the dropping), or not, the queue being full —
    /// dropped, counted, and the following packets up to the next keyframe with it.
    func offered(taken: Bool) {
        skipping = !taken
        if !taken { count(.input) }
    }

    /// Whether a decoded frame at `time` (seconds) goes on (decode thread). A capture device that fell behind
    /// delivers its backlog at once, stamped as it is read (x11grab: 27 frames within 30 ms after a 0.9 s stall):
    /// frames closer than `minimumSpacing` to the last one kept show the same moment and are dropped, counted
    /// against the input, so the recording keeps the device's rate.
    func admits(frameAt time: Double) -> Bool {
        lock.withLock { received += 1 }
        guard minimumSpacing > 0 else { return true }
        if time >= lastKept && time - lastKept < minimumSpacing {
            count(.input)
            return false
        }
        lastKept = time
        return true
    }

    /// Frames received from the source (decoded) so far.
    var framesReceived: Int { lock.withLock { received } }

    /// The reader read a video packet at media time `media` (its decode time, seconds) at `now`; `waited`: the read
    /// waited for data, so the packet had only just arrived. Such a packet (and the first) sets the live edge. A
    /// packet read at once does not: from a backlog, the backlog's age is the lag; ahead of real time (a burst, a
    /// pipe read faster than real time), it is captured at most now — and the frames before it do not age.
    /// Reader thread.
    func read(media: Double, now: Double, waited: Bool) {
        lock.withLock {
            if waited || edge == nil { edge = now - media }
        }
    }

    /// When the frame at media time `media` was captured, as far as the reader can tell (monotonic seconds, at
    /// most `now`): its media time on the live edge's clock, and never before the job started — what waited in a
    /// server's buffers before the job connected, or an edge set by a read that only seemed to wait, is not the
    /// recording's latency. A B-frame's presentation comes after the packet times the edge is measured on, so its
    /// age is under-counted by the reordering (two or three frames).
    func capturedAt(media: Double, now: Double) -> Double {
        guard let edge = lock.withLock({ edge }) else { return now }
        return min(now, max(startedAt, media + edge))
    }

    /// How far a frame encoded now at media time `encoded` is behind its capture (seconds; nil before the first
    /// packet).
    func latency(encoded: Double, now: Double) -> Double? {
        guard lock.withLock({ edge }) != nil else { return nil }
        return now - capturedAt(media: encoded, now: now)
    }

    /// Decoded frames that may wait for the transform: what the latency bound holds at the source's rate (a
    /// burst — the frames the probe buffered, a network hiccup — is absorbed, not dropped), at least one per
    /// worker and one more, at most 4 s at 60 fps.
    func frameQueueCapacity(workers: Int) -> Int {
        let rate = framesPerSecond.isFinite && framesPerSecond > 0 ? framesPerSecond : 30
        return min(240, max(workers + 1, Int((maxLatency * rate).rounded(.up)) + workers))
    }

    /// A decoded frame waited from `since` until `now` (monotonic seconds): too long to be worth transforming.
    func isLate(since: Double, now: Double) -> Bool { now - since > maxLatency }

    /// The first frame kept for the recording was captured at `captured` (monotonic seconds).
    func firstKept(capturedAt captured: Double) { lock.withLock { firstCaptured = captured } }

    /// Seconds from the job's start to the capture of the first frame recorded (nil before one).
    var firstFrameAfter: Double? { lock.withLock { firstCaptured.map { $0 - startedAt } } }

    /// A transform worker waits for an output picture while `body` runs (the encoder's side holds every one).
    func waitingForPicture<T>(_ body: () throws(CropZoomError) -> T) throws(CropZoomError) -> T {
        lock.withLock { waitingForPicture += 1 }
        defer { lock.withLock { waitingForPicture -= 1 } }
        return try body()
    }

    /// A decoded frame was pushed out of the queue by a newer one, or waited too long: counted against the encoder
    /// while a worker waits for an output picture, else against the transform.
    func evicted() {
        lock.withLock { counts[waitingForPicture > 0 ? .encode : .transform, default: 0] += 1 }
    }

    /// One frame dropped at `point`.
    func count(_ point: DropPoint) { lock.withLock { counts[point, default: 0] += 1 } }

    var dropped: [DropPoint: Int] { lock.withLock { counts } }
    var totalDropped: Int { lock.withLock { counts.values.reduce(0, +) } }
}

/// A live job's stops, made before its source is opened (the reads and writes are watched from their start): the
/// reader's (a stop request, the no-data deadline), the `--audio-input` device's reader's, and the output's (a second
/// signal); and the threads there were once the input was open, which keep their priority (FFmpeg's receive thread for
/// a network source exists then, the codecs' threads do not yet).
final class LiveWatches: Sendable {
    let input: IOWatch
    /// Nil without `--audio-input`.
    let soundInput: IOWatch?
    let output: IOWatch
    /// When the job started (monotonic seconds): made first, before anything is opened.
    let startedAt = monotonicSeconds()
    private let opened = Mutex<Set<Int32>>([])

    init(_ cfg: TranscodeConfiguration) throws(CropZoomError) {
        input = try IOWatch()
        soundInput = cfg.audioInput == nil ? nil : try IOWatch()
        output = try IOWatch()
    }

    /// Keeps the threads there are now at their priority: called once the input is open, before the codecs make
    /// theirs.
    func protectThreadsNow() {
        let now = LivePolicy.threadIDs()
        opened.withLock { $0.formUnion(now) }
    }

    var protectedAtOpen: Set<Int32> { opened.withLock { $0 } }
}
