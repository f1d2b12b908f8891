import CCropZoomSystem
import Foundation

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
///   output is interrupted only by a second signal (``abort()``).
///
/// `@unchecked Sendable`: counters behind `lock`; `skipping` is the reader thread's own.
final class LivePolicy: @unchecked Sendable {
    /// Stops the reader (a stop request, the no-data deadline).
    let input: IOWatch
    /// Stops the `--audio-input` device's reader (nil without one).
    let soundInput: IOWatch?
    /// Interrupts writing (a second signal).
    let output: IOWatch
    let maxLatency: Double
    /// The source's frame rate (set once the input is open; 30 when it does not say).
    var framesPerSecond = 30.0
    private let lock = NSLock()
    private var counts: [DropPoint: Int] = [:]
    private var stopping = false
    /// Reader thread only: packets are being dropped up to the next keyframe.
    private var skipping = false
    /// A capture device's: the least time between two frames kept (half its frame interval); 0 for other sources.
    var minimumSpacing = 0.0
    /// Decode thread only: the time of the last frame let through.
    private var lastKept = -Double.infinity
    /// Frames received (decoded).
    private var received = 0
    /// The live edge: arrival (monotonic seconds) less media time of the source's latest packet read as it came
    /// (nil before the first). A packet's capture is estimated as its media time plus this.
    private var edge: Double?
    /// When the job started (monotonic seconds), and when the first frame recorded was captured.
    private let startedAt = monotonicSeconds()
    private var firstCaptured: Double?
    /// With `--audio-input`: where the picture's recording ended (output seconds), once its reader has stopped.
    private var pictureEnd: Double?
    /// Threads that keep their priority, and how many of the engine's (reader, muxer) have said so.
    private var protected: Set<Int32> = []
    private var protectedCount = 0
    /// Engine threads that have protected themselves so far (read under the lock: ThreadSanitizer found the
    /// engine's watch loop reading it while the threads counted).
    var engineThreadsProtected: Int { lock.withLock { protectedCount } }

    /// Keeps the threads there are now at their priority: called once the input is open (FFmpeg's receive
    /// thread for a network source exists then), before the codecs make theirs.
    func protectThreadsNow() {
        let now = LivePolicy.threadIDs()
        lock.withLock { protected.formUnion(now) }
    }

    /// Keeps the calling thread (the reader's, the muxer's) at its priority.
    func protectCurrentThread() {
        let tid = cz_thread_id()
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
            if cz_lower_priority_of(tid, 5) == 0 { lowered += 1 }
        }
        return lowered
    }

    static func threadIDs() -> [Int32] {
        var ids = [Int32](repeating: 0, count: 1024)
        let n = ids.withUnsafeMutableBufferPointer { cz_thread_ids($0.baseAddress, Int32($0.count)) }
        return Array(ids.prefix(Int(max(0, min(n, 1024)))))
    }

    init(_ cfg: TranscodeConfiguration) throws(CropZoomError) {
        input = try IOWatch()
        soundInput = cfg.audioInput == nil ? nil : try IOWatch()
        output = try IOWatch()
        maxLatency = cfg.maxLatency
    }

    /// Ends the recording cleanly: the reader stops, what is in flight is finished and written. Any thread.
    func requestStop() {
        lock.withLock { stopping = true }
        input.stop()
    }

    var stopRequested: Bool { lock.withLock { stopping } }

    /// The picture's reader stopped at `seconds` (output clock): the sound reader stops once its packets reach it, or
    /// at the latest 2 s from now (a sound device that stalled).
    func pictureEnded(at seconds: Double) {
        lock.withLock { pictureEnd = seconds }
        guard let watch = soundInput else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) { watch.stop() }
    }

    /// Where the sound reader stops (output seconds); nil while the picture is being recorded.
    var soundEnd: Double? { lock.withLock { pictureEnd } }

    /// Interrupts writing too (the recording is then lost, as a file transcode's would be).
    func abort() { output.stop() }

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
    /// most `now`): its media time on the live edge's clock. A B-frame's presentation comes after the packet
    /// times the edge is measured on, so its age is under-counted by the reordering (two or three frames).
    func capturedAt(media: Double, now: Double) -> Double {
        guard let edge = lock.withLock({ edge }) else { return now }
        return min(now, media + edge)
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

    /// One frame dropped at `point`.
    func count(_ point: DropPoint) { lock.withLock { counts[point, default: 0] += 1 } }

    var dropped: [DropPoint: Int] { lock.withLock { counts } }
    var totalDropped: Int { lock.withLock { counts.values.reduce(0, +) } }
}
