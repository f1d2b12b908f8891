import Foundation
import Testing

@testable import CropZoomFFmpeg
@testable import CropZoomKit

/// A live recording's clock rules: a sound device's backlog timed from its first packet read at the live edge, and
/// and a capture device's catch-up burst thinned to its rate.
@Suite("Live clock")
struct LiveClockTests {
    static func policy() -> TimestampPolicy {
        TimestampPolicy(
            window: nil, videoIndex: 0, decoderBase: TimeBase(num: 1, den: 1_000_000), encoderBase: nil, startTime: 0,
            outputBases: [], outputOffsets: [])
    }

    @Test("a backlog is timed backwards from its last packet by the packets' durations")
    func backlogRetimed() throws {
        // PulseAudio's backlog as read: 20 ms packets stamped 30 ms apart (a latency not measured yet).
        let packets = try (0..<5).map { i throws -> Packet in
            let p = try Packet()
            p.pts = 1_000_000 + Int64(i) * 30_000
            p.dts = p.pts
            p.duration = 20_000
            return p
        }
        Self.policy().retime(backlog: packets[...])
        #expect(packets.map(\.pts) == [1_040_000, 1_060_000, 1_080_000, 1_100_000, 1_120_000])
        #expect(packets.map(\.dts) == packets.map(\.pts))
        // After it, each packet starts where the one before ended, whatever its stamp.
        var next: Int64? = nil
        for p in packets { Self.policy().chain(p, next: &next) }
        let late = try Packet()
        late.pts = 1_150_000
        late.duration = 20_000
        Self.policy().chain(late, next: &next)
        #expect(late.pts == 1_140_000 && late.dts == 1_140_000 && next == 1_160_000)
    }

    @Test("a capture device's burst (frames read at once after a stall) is thinned to its rate, and counted")
    func burstThinned() throws {
        var cfg = TranscodeConfiguration(input: "x", output: "y.mkv")
        cfg.live = true
        let live = LivePolicy(cfg, watches: try LiveWatches(cfg), minimumSpacing: 0.5 / 30)
        // A frame, a 0.3 s stall, then 10 frames within 2 ms, then the rate again.
        var times = [0.0]
        times += (0..<10).map { 0.3 + Double($0) * 0.0002 }
        times += (1...3).map { 0.3 + Double($0) / 30 }
        let kept = times.filter { live.admits(frameAt: $0) }
        let expected: [Double] = [0, 0.3, 0.3 + 1.0 / 30, 0.3 + 2.0 / 30, 0.3 + 3.0 / 30]
        #expect(kept == expected)
        #expect(live.dropped[.input] == 9)
        // Another source (no spacing set) keeps everything.
        let other = LivePolicy(cfg, watches: try LiveWatches(cfg))
        #expect(times.allSatisfy { other.admits(frameAt: $0) })
    }

    @Test(
        """
        a frame's age counts the time its packet sat in buffers before the reader got to it, not a pause of the \
        source's, nor a burst ahead of real time
        """)
    func ageFromTheLiveEdge() throws {
        var cfg = TranscodeConfiguration(input: "x", output: "y.mkv")
        cfg.live = true
        cfg.maxLatency = 0.5
        let live = LivePolicy(cfg, watches: try LiveWatches(cfg))
        // Times from the job's start (its watches were made first): `t(100)` is 100 s later.
        let t = { (seconds: Double) in live.watches.startedAt + seconds }
        #expect(live.latency(encoded: 0, now: t(100)) == nil)
        // Media 0 arrives at 100 s as read (the read waited): the edge.
        live.read(media: 0, now: t(100), waited: true)
        #expect(live.capturedAt(media: 0, now: t(100.2)) == t(100))
        #expect(live.isLate(since: live.capturedAt(media: 0, now: t(100.7)), now: t(100.7)))
        // The reader fell behind: media 1 s is read at once from a backlog at 102 s — captured at 101 s.
        live.read(media: 1, now: t(102), waited: false)
        #expect(live.capturedAt(media: 1, now: t(102)) == t(101))
        #expect(live.latency(encoded: 1, now: t(102)) == 1)
        #expect(live.isLate(since: live.capturedAt(media: 1, now: t(102)), now: t(102)))
        // The source paused 3 s; its next packet waited for: the edge moves, nothing is late.
        live.read(media: 2, now: t(106), waited: true)
        #expect(live.latency(encoded: 2, now: t(106.1))! < 0.11)
        // A burst ahead of real time (read at once, earlier for its time than the edge) is captured now, and the
        // frames before it keep their age (a source read faster than real time is never late).
        live.read(media: 5, now: t(107), waited: false)
        #expect(live.capturedAt(media: 5, now: t(107)) == t(107))
        #expect(live.capturedAt(media: 2.5, now: t(107)) == t(106.5))
        // Never captured after now (a B-frame's later presentation time).
        #expect(live.capturedAt(media: 6, now: t(107)) == t(107))
        // Nor before the job started: a packet waited for at media 200 s puts media 0 at -93 s — as the job started,
        // 107 s before now, not 200 s (what a server held before the job connected is not the recording's latency).
        live.read(media: 200, now: t(107), waited: true)
        #expect(live.capturedAt(media: 0, now: t(107)) == t(0))
        #expect(live.latency(encoded: 50, now: t(107)) == 107)
        #expect(live.latency(encoded: 150, now: t(107)) == 50)
    }

    @Test(
        """
        a source that makes its frames in the read (lavfi's generator, faster than real time) is working, not waiting \
        for data: its reads do not set the live edge however long they take
        """)
    func generatorDoesNotWait() throws {
        let source = try Demuxer(path: "mandelbrot=size=640x480:rate=25", format: "lavfi", watch: try IOWatch())
        let packet = try Packet()
        var (slow, waited) = (0, 0)
        for _ in 0..<25 {
            let started = monotonicSeconds()
            guard case .value = try source.read(into: packet) else { break }
            packet.unref()
            // A 640x480 Mandelbrot picture takes milliseconds to draw: what the reader took for a wait before.
            if monotonicSeconds() - started >= 0.002 { slow += 1 }
            if source.lastReadWaited { waited += 1 }
        }
        #expect(slow >= 10, "the generator drew its pictures in under 2 ms: this test shows nothing")
        #expect(waited <= 2, "\(waited) of 25 reads counted as waiting for data (\(slow) took 2 ms or more)")
    }

    @Test("a packet the decoder had no room for is dropped with every packet up to the next keyframe, each counted")
    func overflowSkipsToKeyframe() throws {
        var cfg = TranscodeConfiguration(input: "x", output: "y.mkv")
        cfg.live = true
        let live = LivePolicy(cfg, watches: try LiveWatches(cfg))
        // K P P (queue full: the third not taken) P P K P: the fourth and fifth are refused, the keyframe resumes.
        let keyframes = [true, false, false, false, false, true, false]
        var decoded: [Int] = []
        for (i, key) in keyframes.enumerated() {
            guard live.offers(keyframe: key) else { continue }
            let taken = i != 2
            live.offered(taken: taken)
            if taken { decoded.append(i) }
        }
        #expect(decoded == [0, 1, 5, 6])
        #expect(live.dropped[.input] == 3 && live.totalDropped == 3)
    }
}

/// ``LivePolicy`` as a unit: the decisions the live engine asks it for at its leaky edges, and what a signal does.
@Suite("Live policy")
struct LivePolicyTests {
    static func make(maxLatency: Double = 0.5) throws -> LivePolicy {
        var cfg = TranscodeConfiguration(input: "x", output: "y.mkv")
        cfg.live = true
        cfg.maxLatency = maxLatency
        return LivePolicy(cfg, watches: try LiveWatches(cfg))
    }

    @Test("the first signal ends the recording (kept, its reader stopped); a second interrupts writing")
    func signals() throws {
        let live = try Self.make()
        #expect(live.signalled(2) == nil)
        #expect(live.stopRequested)
        #expect(live.input.reason == .stopped)
        #expect(live.watches.output.reason == .none)
        let second = live.signalled(15)
        #expect(second?.kind == .interrupted(signal: 15))
        #expect(live.watches.output.reason == .stopped)
    }

    @Test("a frame pushed out is blamed on the encoder while a worker waits for an output picture, else the transform")
    func evictionBlame() throws {
        let live = try Self.make()
        live.evicted()
        try live.waitingForPicture { () throws(CropZoomError) in
            live.evicted()
            live.evicted()
        }
        live.evicted()
        #expect(live.dropped == [.transform: 2, .encode: 2])
        #expect(live.totalDropped == 4)
    }

    @Test("the frames that may wait are what the latency bound holds at the source's rate, within bounds")
    func queueCapacity() throws {
        var cfg = TranscodeConfiguration(input: "x", output: "y.mkv")
        cfg.live = true
        cfg.maxLatency = 0.5
        let watches = try LiveWatches(cfg)
        #expect(LivePolicy(cfg, watches: watches, framesPerSecond: 30).frameQueueCapacity(workers: 2) == 17)
        #expect(LivePolicy(cfg, watches: watches).frameQueueCapacity(workers: 2) == 17)
        #expect(LivePolicy(cfg, watches: watches, framesPerSecond: 1000).frameQueueCapacity(workers: 2) == 240)
        cfg.maxLatency = 0
        #expect(LivePolicy(cfg, watches: watches, framesPerSecond: 30).frameQueueCapacity(workers: 4) == 5)
    }

    @Test("a frame is late once it waited longer than the latency bound")
    func lateness() throws {
        let live = try Self.make(maxLatency: 0.5)
        #expect(!live.isLate(since: 10, now: 10.5))
        #expect(live.isLate(since: 10, now: 10.51))
    }
}

/// Rule 0b (``ClockContinuity``): a source's clock that restarts is re-based, one damaged packet is not.
@Suite("Clock continuity")
struct ClockContinuityTests {
    static let base = TimeBase(num: 1, den: 90_000)

    /// Places video packets of stream 0 at `times` (90 kHz, each 3000 long: 1/30 s) read at `reads` seconds; the
    /// times as placed.
    static func place(_ clock: inout ClockContinuity, _ times: [Int64], reads: [Double]? = nil) throws -> [Int64] {
        try times.enumerated().map { k, t throws -> Int64 in
            let p = try Packet()
            p.pts = t
            p.dts = t
            p.duration = 3000
            clock.place(p, now: reads?[k] ?? 0)
            return p.dts
        }
    }

    @Test("a file's clock that goes back 1.6 s is re-based to follow on, 0.1 s after the end; the offset stays")
    func restartFollowsOn() throws {
        var clock = ClockContinuity(.init(bases: [Self.base], live: false))
        let first = (0..<60).map { Int64(126_000 + $0 * 3000) }
        let second = (0..<60).map { Int64(126_000 + $0 * 3000) }
        let placed = try Self.place(&clock, first + second)
        #expect(Array(placed[..<60]) == first)
        let end = first.last! + 3000
        #expect(placed[60] == end + 9000, "\(placed[60]) after an end at \(end)")
        #expect(zip(placed[60...], second).allSatisfy { $0 - $1 == placed[60] - second[0] })
        #expect(clock.count == 1)
    }

    @Test("one damaged packet 5 s back or 100 s ahead is not a restart: the clock goes back to what it was")
    func onePacketIsNotARestart() throws {
        for wild: Int64 in [-450_000, 9_000_000] {
            var clock = ClockContinuity(.init(bases: [Self.base], live: false))
            var times = (0..<30).map { Int64(126_000 + $0 * 3000) }
            times[15] += wild
            let placed = try Self.place(&clock, times)
            #expect(Array(placed[16...]) == Array(times[16...]), "wild \(wild): \(placed)")
            #expect(clock.count == 0 && clock.notice == nil)
        }
    }

    @Test("live: a sender's clock that restarts after a 1.5 s pause is placed by its arrival; one that resumes on")
    func livePauseKept() throws {
        let times = (0..<60).map { Int64($0 * 3000) }
        let reads = (0..<60).map { Double($0) / 30 }
        // Restarted from 0 after the pause: placed at its arrival (2 s + 1.5 s), on the clock of the first part.
        var restarted = ClockContinuity(.init(bases: [Self.base], live: true))
        let placed = try Self.place(&restarted, times + times, reads: reads + reads.map { $0 + 3.5 })
        #expect(abs(Double(placed[60]) / 90_000 - 3.5) < 0.001, "\(placed[60])")
        #expect(restarted.count == 1)
        // Resumed on its own clock after the same pause: a true gap, nothing re-based.
        var resumed = ClockContinuity(.init(bases: [Self.base], live: true))
        let later = times.map { $0 + 315_000 }
        let kept = try Self.place(&resumed, times + later, reads: reads + reads.map { $0 + 3.5 })
        #expect(kept == times + later && resumed.count == 0)
    }
}

/// A capture device read from its open (issue 27 item 6): the set-up's media kept and replayed as it arrived, older
/// video than the latency bound let go up to a keyframe, and the recording starting where every input has media.
@Suite("Early reads")
struct EarlyReadsTests {
    /// Packets a fake device returns, with when they "arrived"; then its end.
    final class Device: @unchecked Sendable {
        // @unchecked Sendable: read by the early thread alone until the test reads after take-over.
        var next = 0
        let frames: EarlyReadsTests.Frames
        init(_ frames: EarlyReadsTests.Frames) { self.frames = frames }
    }

    static func read(_ device: Device)
        -> @Sendable (Packet) throws(CropZoomError) -> AVStep<(arrival: Double, wait: Double)>?
    {
        { (packet: Packet) throws(CropZoomError) in
            guard device.next < device.frames.count else { return .endOfStream }
            let f = device.frames[device.next]
            device.next += 1
            packet.pts = f.pts
            packet.isKeyframe = f.key
            return .value((f.arrival, 0.03))
        }
    }

    typealias Frames = [(pts: Int64, arrival: Double, key: Bool)]

    /// `n` frames 1/30 s apart from `start`, a keyframe every `key`.
    static func frames(_ n: Int, from start: Double = 0, keyEvery key: Int = 1) -> Frames {
        var frames: Frames = []
        for i in 0..<n {
            let arrival = start + Double(i) / 30
            frames.append((pts: Int64(i), arrival: arrival, key: i % key == 0))
        }
        return frames
    }

    /// Waits until the early thread has read all `n` (kept or let go).
    static func wait(_ early: EarlyReads, for n: Int) {
        let start = Date()
        while early.count + early.letGo < n && Date().timeIntervalSince(start) < 10 { usleep(1000) }
    }

    /// Takes over and replays what was kept.
    static func replay(_ early: EarlyReads, after n: Int) throws -> [(pts: Int64, arrival: Double)] {
        wait(early, for: n)
        early.takeOver()
        var got: [(Int64, Double)] = []
        let packet = try Packet()
        while case .value(let at)? = try early.next(into: packet) {
            got.append((packet.pts, at.arrival))
            packet.unref()
        }
        return got
    }

    @Test("everything read during the set-up is replayed in order with its arrival time, then the device's end")
    func replayedAsArrived() throws {
        let frames = Self.frames(40, from: 10)
        let early = EarlyReads(keepVideo: nil, isVideo: { _ in true }, read: Self.read(Device(frames)))
        let got = try Self.replay(early, after: frames.count)
        #expect(got.map { $0.pts } == frames.map { $0.pts })
        #expect(got.map { $0.arrival } == frames.map { $0.arrival })
        #expect(early.letGo == 0)
    }

    @Test("video older than the bound before the newest is let go from the front, up to the next keyframe")
    func olderVideoLetGo() throws {
        // 2 s at 30 fps, a keyframe every 10 frames, a bound of 1 s: the first 30 go, and frames 30–39 follow only if
        // their keyframe went (here it stays: frame 30 is a keyframe and not too old).
        let frames = Self.frames(61, keyEvery: 10)
        let early = EarlyReads(keepVideo: 1, isVideo: { _ in true }, read: Self.read(Device(frames)))
        Self.wait(early, for: frames.count)
        #expect(early.settle { Issue.record("nothing is let go after the start is settled here") }?.pts == 30)
        let got = try Self.replay(early, after: frames.count)
        #expect(got.first?.pts == 30 && got.count == 31, "\(got.map { $0.pts })")
        // The bound falling inside a group of pictures: that group goes whole.
        let uneven = Self.frames(61, keyEvery: 25)
        let early2 = EarlyReads(keepVideo: 1, isVideo: { _ in true }, read: Self.read(Device(uneven)))
        let got2 = try Self.replay(early2, after: uneven.count)
        #expect(got2.first?.pts == 50, "\(got2.map { $0.pts })")
    }

    @Test("the recording starts where every input has media: a device's kept video, the sound's first packet")
    func startWhereEveryInputHasMedia() {
        // Two wall-clock devices: the picture from 100.0 (its early reads kept it all), the sound from 100.8.
        #expect(LiveClock([(100.0, 100.1, nil), (100.8, 100.9, nil)]).starts == [100.8, 100.8])
        // The picture's older video let go: it starts at 101.2, after the sound's first packet.
        #expect(LiveClock([(100.0, 100.1, 101.2), (100.8, 100.9, nil)]).starts == [101.2, 101.2])
        // A network stream's own clock (from 0, opened at 5000 on the wall clock) and a sound device from 5000.25.
        let mixed = LiveClock([(0, 5000, nil), (5000.25, 5000.3, nil)]).starts
        #expect(abs(mixed[0] - 0.25) < 1e-9 && mixed[1] == 5000.25)
    }
}
