import CFFmpeg
import Foundation
import Synchronization
import Testing

@testable import CropZoomFFmpeg
@testable import CropZoomKit

/// The engines' rules, checked in-process with fake stages (as swift-nio's `EmbeddedChannel` tests a handler without
/// a socket): no file, no codec, milliseconds per test. The fakes move real `Packet`s and `Frame`s (the engines' shells
/// and pool hold FFmpeg objects), carry a number in `pts`, and record what reached them.
@Suite("Engines with fake stages")
struct EngineHarnessTests {
    // MARK: the rules of every engine

    @Test(
        """
        every frame reaches the muxer once and in order, every copied and re-encoded packet too; each stage finishes \
        once, and the muxer flushes after every producer has finished
        """,
        arguments: [0, 1, 3])
    func everythingArrives(workers: Int) throws {
        let script = Script.interleaved(video: 120, copied: 40, reencoded: 30)
        let fakes = FakeStages(script: script)
        // Workers finish out of order: every third frame takes longer.
        fakes.transformDelay = { pts in pts % 3 == 0 ? 0.002 : 0 }
        let counts = try fakes.run(workers: workers)
        let trace = fakes.trace
        #expect(trace.muxed(stream: 0) == Array(0..<120))
        #expect(trace.muxed(stream: 1) == Array(0..<40))
        #expect(trace.muxed(stream: 2) == Array(0..<30))
        #expect(counts.framesOut == 120 && counts.framesIn == 120)
        #expect(counts.audioPackets == 70)
        #expect(trace.finishes == ["decode": 1, "encode": 1, "reencoder": 1, "transform": max(1, workers)])
        #expect(trace.flushedAfterAll)
    }

    @Test("backpressure: with a slow muxer the reader stays a bounded number of packets ahead of it")
    func backpressure() throws {
        let fakes = FakeStages(script: Script.interleaved(video: 400, copied: 0, reencoded: 0))
        fakes.muxDelay = 0.0005
        _ = try fakes.run(workers: 2)
        // Queues and pools of two workers hold at most: 32 packets, 4 work items, 8 pictures, 32 encoded packets, the
        // mux queue's share, and one in each stage's hands.
        #expect(fakes.trace.maxAhead <= 100, "\(fakes.trace.maxAhead)")
        #expect(fakes.trace.muxed(stream: 0).count == 400)
    }

    @Test(
        """
        a decoder that wants no more (.enough) stops the reader soon after; what it sent is kept, and every stage \
        still finishes once
        """,
        arguments: [0, 2])
    func enoughStopsTheReader(workers: Int) throws {
        let fakes = FakeStages(script: Script.interleaved(video: 3000, copied: 0, reencoded: 0))
        fakes.decodeLimit = 10
        let counts = try fakes.run(workers: workers)
        #expect(fakes.trace.muxed(stream: 0) == Array(0..<10))
        #expect(counts.framesOut == 10)
        // The video queue (32) and the packets in flight, not the 3000 there were.
        #expect(fakes.trace.reads <= 60, "\(fakes.trace.reads)")
        #expect(fakes.trace.finishes["decode"] == 1 && fakes.trace.finishes["encode"] == 1)
        #expect(fakes.trace.flushedAfterAll)
    }

    @Test("the first error stops every stage and is the one reported; every thread is joined", arguments: [0, 2])
    func firstErrorWins(workers: Int) throws {
        let fakes = FakeStages(script: Script.interleaved(video: 3000, copied: 100, reencoded: 0))
        fakes.failMuxAt = 50
        do {
            _ = try fakes.run(workers: workers)
            Issue.record("the run went on")
        } catch {
            #expect(error.reason == "the fake muxer failed")
        }
        #expect(fakes.trace.reads < 3000)
    }

    @Test("a cancelled run stops with .cancelled, from the reader's loop or the watch loop", arguments: [0, 2])
    func cancelled(workers: Int) throws {
        let fakes = FakeStages(script: Script.interleaved(video: 100_000, copied: 0, reencoded: 0))
        let cancel = CancelFlag()
        fakes.onRead = { n in if n == 200 { cancel.raise() } }
        do {
            _ = try fakes.run(workers: workers, cancel: cancel)
            Issue.record("the run went on")
        } catch {
            #expect(error.kind == .cancelled)
        }
        #expect(fakes.trace.reads < 1000, "\(fakes.trace.reads)")
    }

    // MARK: the live wiring

    @Test(
        """
        live, a slow transform: the oldest frames are pushed out and counted against the transform; the kept ones \
        arrive in order, and every frame is either kept or counted
        """)
    func liveSlowTransform() throws {
        let fakes = FakeStages(script: Script.interleaved(video: 300, copied: 0, reencoded: 0))
        fakes.readDelay = 0.001
        fakes.transformDelay = { _ in 0.01 }
        let counts = try fakes.runLive(workers: 1, maxLatency: 5)
        let kept = fakes.trace.muxed(stream: 0)
        #expect(kept == kept.sorted() && Set(kept).count == kept.count)
        #expect((counts.dropped[.transform] ?? 0) > 0, "\(counts.dropped)")
        #expect(counts.dropped[.encode, default: 0] == 0)
        #expect(kept.count + counts.dropped.values.reduce(0, +) == 300)
    }

    @Test("live, a slow encoder: the frames pushed out while the workers wait for a picture are blamed on the encoder")
    func liveSlowEncoder() throws {
        let fakes = FakeStages(script: Script.interleaved(video: 300, copied: 0, reencoded: 0))
        fakes.readDelay = 0.001
        fakes.encodeDelay = 0.01
        let counts = try fakes.runLive(workers: 2, maxLatency: 5)
        #expect((counts.dropped[.encode] ?? 0) > 0, "\(counts.dropped)")
        #expect(fakes.trace.muxed(stream: 0).count + counts.dropped.values.reduce(0, +) == 300)
    }

    @Test("live, frames that waited past the latency bound are dropped before the transform")
    func liveLateFrames() throws {
        let fakes = FakeStages(script: Script.interleaved(video: 200, copied: 0, reencoded: 0))
        fakes.readDelay = 0.001
        fakes.transformDelay = { _ in 0.004 }
        // A long queue (10 s at 30 fps) but a short bound: frames are dropped for their age, not pushed out.
        let counts = try fakes.runLive(workers: 1, maxLatency: 0.02, framesPerSecond: 15_000)
        #expect((counts.dropped[.transform] ?? 0) > 50, "\(counts.dropped)")
        #expect(fakes.trace.muxed(stream: 0).count + counts.dropped.values.reduce(0, +) == 200)
    }

    @Test("live, the reader never waits: when the decoder falls behind, packets are dropped up to the next keyframe")
    func liveReaderNeverWaits() throws {
        // 4000 packets read at once, a keyframe every 10; the decoder takes 0.2 ms a packet.
        let fakes = FakeStages(script: Script.interleaved(video: 4000, copied: 0, reencoded: 0, keyframeEvery: 10))
        fakes.decodeDelay = 0.0002
        let counts = try fakes.runLive(workers: 1, maxLatency: 60)
        let decoded = fakes.trace.decoded
        #expect((counts.dropped[.input] ?? 0) > 0, "\(counts.dropped)")
        #expect(decoded.count + (counts.dropped[.input] ?? 0) == 4000)
        // After each gap the decoder starts again at a keyframe.
        for (a, b) in zip(decoded, decoded.dropFirst()) where b != a + 1 {
            #expect(b % 10 == 0, "\(a) → \(b)")
        }
    }

    @Test("live, audio is never dropped: re-encoded audio goes through its own thread whatever the video does")
    func liveAudioKept() throws {
        let fakes = FakeStages(script: Script.interleaved(video: 600, copied: 100, reencoded: 100))
        fakes.transformDelay = { _ in 0.003 }
        let counts = try fakes.runLive(workers: 1, maxLatency: 0.05)
        #expect(counts.dropped.values.reduce(0, +) > 0)
        #expect(fakes.trace.muxed(stream: 1) == Array(0..<100))
        #expect(fakes.trace.muxed(stream: 2) == Array(0..<100))
        #expect(fakes.trace.finishes["reencoder"] == 1)
    }
}

// MARK: - the fakes

/// What the fake reader reads: per packet, its stream (0 video, 1 copied, 2 re-encoded), its number within its
/// stream (carried in `pts`), and whether it is a keyframe.
struct Script {
    var packets: [(stream: Int, number: Int64, keyframe: Bool)]

    static func interleaved(video: Int, copied: Int, reencoded: Int, keyframeEvery: Int = 1) -> Script {
        var packets: [(Int, Int64, Bool)] = []
        var next = [0, 0, 0]
        let total = [video, copied, reencoded]
        let all = video + copied + reencoded
        for k in 0..<all {
            // Spread the audio evenly between the video packets.
            let s = (0..<3).min { a, b in
                let fa = next[a] >= total[a] ? 2.0 : Double(next[a]) / Double(max(1, total[a]))
                let fb = next[b] >= total[b] ? 2.0 : Double(next[b]) / Double(max(1, total[b]))
                return fa < fb
            }!
            _ = k
            packets.append((s, Int64(next[s]), s != 0 || next[s] % keyframeEvery == 0))
            next[s] += 1
        }
        return Script(packets: packets)
    }
}

/// What the fakes saw, under a lock (they run on the engines' threads).
final class Trace: @unchecked Sendable {
    // @unchecked Sendable: every field behind `lock`.
    private let lock = NSLock()
    private var muxedByStream: [Int: [Int64]] = [:]
    private var finished: [String: Int] = [:]
    private var flushed = false
    private var flushedLast = true
    private var readCount = 0
    private var decodedNumbers: [Int64] = []
    private var ahead = 0

    func read() -> Int {
        lock.withLock {
            readCount += 1
            let muxed = muxedByStream.values.reduce(0) { $0 + $1.count }
            ahead = max(ahead, readCount - muxed)
            return readCount
        }
    }
    func muxed(_ stream: Int, _ number: Int64) { lock.withLock { muxedByStream[stream, default: []].append(number) } }
    func decoded(_ number: Int64) { lock.withLock { decodedNumbers.append(number) } }
    func finished(_ name: String) {
        lock.withLock {
            finished[name, default: 0] += 1
            if flushed { flushedLast = false }
        }
    }
    func flush() { lock.withLock { flushed = true } }

    func muxed(stream: Int) -> [Int64] { lock.withLock { muxedByStream[stream] ?? [] } }
    var finishes: [String: Int] { lock.withLock { finished } }
    var flushedAfterAll: Bool { lock.withLock { flushed && flushedLast } }
    var reads: Int { lock.withLock { readCount } }
    var maxAhead: Int { lock.withLock { ahead } }
    var decoded: [Int64] { lock.withLock { decodedNumbers } }
}

/// A job's stages, faked: the reader plays a ``Script``; the decoder makes one frame per packet; the transform copies
/// the number; the encoder makes one packet per frame; the muxer records. Delays make a stage slow.
final class FakeStages: StageFactory, @unchecked Sendable {
    // @unchecked Sendable: the settings are written before a run; the trace locks.
    let script: Script
    var trace = Trace()
    var readDelay = 0.0
    var decodeDelay = 0.0
    var decodeLimit = Int.max
    var transformDelay: @Sendable (Int64) -> Double = { _ in 0 }
    var encodeDelay = 0.0
    var muxDelay = 0.0
    var failMuxAt = Int.max
    var onRead: @Sendable (Int) -> Void = { _ in }

    init(script: Script) { self.script = script }

    var picture: PictureShape { PictureShape(width: 16, height: 16, format: PixelFormat(AV_PIX_FMT_YUV420P)) }
    var reencodedStreams: [Int] { script.packets.contains { $0.stream == 2 } ? [2] : [] }
    var hasSound: Bool { false }
    var soundReencodes: Bool { false }

    func mux() -> any MuxingStage { FakeMux(self) }
    func encode(output: Outlet<MuxPacket>) -> any EncodingStage { FakeEncode(self, output) }
    func transform(output: Outlet<Frame>) -> any TransformingStage { FakeTransform(self, output) }
    func decode(output: Outlet<Frame>) -> any PacketStage { FakeDecode(self, output) }
    func reencoder(stream: Int, output: Outlet<MuxPacket>) -> any PacketStage { FakeReencoder(self, output) }
    func demux(
        video: Outlet<Packet>, mux: Outlet<MuxPacket>, reencoders: [Int: Outlet<Packet>]
    ) throws(CropZoomError) -> any Reading {
        try FakeReader(self, video: video, mux: mux, reencoder: reencoders[2])
    }
    func soundReencoder(output: Outlet<MuxPacket>) -> any PacketStage { fatalError("no sound device") }
    func sound(reencoder: Outlet<Packet>?, mux: Outlet<MuxPacket>) throws(CropZoomError) -> any Reading {
        fatalError("no sound device")
    }

    /// Runs the script on the serial engine (`workers` 0) or the threaded one.
    func run(workers: Int, cancel: CancelFlag = CancelFlag()) throws(CropZoomError) -> EngineCounts {
        trace = Trace()
        let stops = RunStops(cancel: cancel, inputName: "fake")
        if workers == 0 { return try SerialEngine(stages: self, stops: stops, progress: nil).run() }
        return try ThreadedEngine(stages: self, workers: workers, stops: stops).run(progress: nil)
    }

    /// Runs the script live; frames are numbered at 1000 per second of media.
    func runLive(
        workers: Int, maxLatency: Double, framesPerSecond: Double = 1000
    ) throws(CropZoomError) -> EngineCounts {
        trace = Trace()
        var cfg = TranscodeConfiguration(input: "fake", output: "fake.mkv")
        cfg.live = true
        cfg.maxLatency = maxLatency
        let live = LivePolicy(cfg, watches: try LiveWatches(cfg), framesPerSecond: framesPerSecond)
        let stops = RunStops(cancel: CancelFlag(), inputName: "fake", live: live)
        return try LiveEngine(
            stages: self, workers: workers, live: live, stops: stops,
            mediaSeconds: { Double($0.presentationTime) / 1000 }
        ).run(progress: nil)
    }
}

private func pause(_ seconds: Double) {
    if seconds > 0 { Thread.sleep(forTimeInterval: seconds) }
}

final class FakeReader: Reading, @unchecked Sendable {
    private let fakes: FakeStages
    private let video: Outlet<Packet>
    private let mux: Outlet<MuxPacket>
    private let reencoder: Outlet<Packet>?
    private let packet: Packet
    private var next = 0
    private var videoWanted = true
    private var audio = 0
    private let startedAt = monotonicSeconds()

    init(
        _ fakes: FakeStages, video: Outlet<Packet>, mux: Outlet<MuxPacket>, reencoder: Outlet<Packet>?
    ) throws(CropZoomError) {
        self.fakes = fakes
        self.video = video
        self.mux = mux
        self.reencoder = reencoder
        packet = try Packet()
    }

    func step() throws(CropZoomError) -> Bool {
        guard next < fakes.script.packets.count, videoWanted else { return false }
        let p = fakes.script.packets[next]
        next += 1
        if fakes.readDelay > 0 {
            // Real time: packet k is read at k × the delay from the start (as a live source delivers it).
            let due = startedAt + Double(next) * fakes.readDelay
            pause(due - monotonicSeconds())
        }
        fakes.onRead(fakes.trace.read())
        packet.streamIndex = p.stream
        packet.pts = p.number
        packet.dts = p.number
        packet.isKeyframe = p.keyframe
        defer { packet.unref() }
        switch p.stream {
        case 0: if try video.send(packet) == .enough { videoWanted = false }
        case 1:
            audio += 1
            _ = try mux.send(MuxPacket(packet: packet, stream: 1, copied: true))
        default:
            audio += 1
            _ = try reencoder?.send(packet)
        }
        return true
    }

    func finish() throws(CropZoomError) {
        try video.finish()
        try reencoder?.finish()
        try mux.finish()
    }

    func count(into c: inout EngineCounts) { c.audioPackets += audio }
}

final class FakeDecode: PacketStage, @unchecked Sendable {
    private let fakes: FakeStages
    private let output: Outlet<Frame>
    private let frame: Frame
    private var sent = 0

    init(_ fakes: FakeStages, _ output: Outlet<Frame>) {
        self.fakes = fakes
        self.output = output
        frame = try! Frame()
    }

    func receive(_ packet: Packet) throws(CropZoomError) -> Demand {
        if sent >= fakes.decodeLimit { return .enough }
        pause(fakes.decodeDelay)
        fakes.trace.decoded(packet.pts)
        frame.pts = packet.pts
        sent += 1
        _ = try output.send(frame)
        frame.unref()
        return sent >= fakes.decodeLimit ? .enough : .more
    }

    func finish() throws(CropZoomError) {
        fakes.trace.finished("decode")
        try output.finish()
    }

    func count(into c: inout EngineCounts) { c.framesIn = sent }
}

final class FakeTransform: TransformingStage, @unchecked Sendable {
    private let fakes: FakeStages
    private let output: Outlet<Frame>

    init(_ fakes: FakeStages, _ output: Outlet<Frame>) {
        self.fakes = fakes
        self.output = output
    }

    func receive(_ work: TransformWork) throws(CropZoomError) -> Demand {
        pause(fakes.transformDelay(work.input.pts))
        work.output.pts = work.input.pts
        return try output.send(work.output)
    }

    func finish() throws(CropZoomError) {
        fakes.trace.finished("transform")
        try output.finish()
    }
}

final class FakeEncode: EncodingStage, @unchecked Sendable {
    private let fakes: FakeStages
    private let output: Outlet<MuxPacket>
    private let packet: Packet
    let progress = ProgressBox()
    private var frames = 0

    init(_ fakes: FakeStages, _ output: Outlet<MuxPacket>) {
        self.fakes = fakes
        self.output = output
        packet = try! Packet()
    }

    func receive(_ frame: Frame) throws(CropZoomError) -> Demand {
        pause(fakes.encodeDelay)
        packet.pts = frame.pts
        frames += 1
        progress.update(frames: frames, time: Double(frame.pts))
        _ = try output.send(MuxPacket(packet: packet, stream: 0, copied: false))
        packet.unref()
        return .more
    }

    func finish() throws(CropZoomError) {
        fakes.trace.finished("encode")
        try output.finish()
    }

    func count(into c: inout EngineCounts) { c.framesOut = frames }
}

final class FakeReencoder: PacketStage, @unchecked Sendable {
    private let fakes: FakeStages
    private let output: Outlet<MuxPacket>

    init(_ fakes: FakeStages, _ output: Outlet<MuxPacket>) {
        self.fakes = fakes
        self.output = output
    }

    func receive(_ packet: Packet) throws(CropZoomError) -> Demand {
        try output.send(MuxPacket(packet: packet, stream: 2, copied: false))
    }

    func finish() throws(CropZoomError) {
        fakes.trace.finished("reencoder")
        try output.finish()
    }

    func count(into c: inout EngineCounts) {}
}

final class FakeMux: MuxingStage, @unchecked Sendable {
    private let fakes: FakeStages
    private var written = 0

    init(_ fakes: FakeStages) { self.fakes = fakes }

    func receive(_ m: MuxPacket) throws(CropZoomError) -> Demand {
        written += 1
        if written >= fakes.failMuxAt { throw CropZoomError(.processing, reason: "the fake muxer failed") }
        pause(fakes.muxDelay)
        fakes.trace.muxed(m.stream, m.packet.pts)
        return .more
    }

    func flush() throws(CropZoomError) { fakes.trace.flush() }

    /// (Each producer's end reaches it on the serial engine; the threaded ones close the mux queue instead.)
    func finish() throws(CropZoomError) {}

    func count(into c: inout EngineCounts) {}
}

/// The serial engine's progress while its one thread is inside a long codec call.
@Suite("Serial engine progress")
struct SerialProgressTests {
    @Test(
        """
        while the stages' thread is inside a 1.2 s call (no tick of its own), the reporter's thread reports, at most \
        four times a second; after stop() nothing more comes
        """)
    func reportsDuringALongCall() throws {
        let times = Mutex<[Double]>([])
        let ticker = ProgressTicker { _, _ in
            let now = monotonicSeconds()
            times.withLock { $0.append(now) }
        }
        ticker.source = { (0, 0) }
        let started = monotonicSeconds()
        let reporter = ProgressReporter(ticker)
        Thread.sleep(forTimeInterval: 1.2)
        reporter.stop()
        let reported = times.withLock { $0 }
        Thread.sleep(forTimeInterval: 0.3)
        #expect(times.withLock { $0.count } == reported.count, "a report after stop()")
        let gaps = zip(reported.dropFirst(), reported).map { $0 - $1 }
        // Four at an idle machine's pace (0.05, 0.30, 0.55, 0.80, 1.05 s); a loaded one may wake the thread late.
        #expect(reported.count >= 3, "\(reported.map { $0 - started })")
        #expect((reported.first ?? 9) - started < 0.5, "the first report: \(reported.map { $0 - started })")
        #expect(gaps.allSatisfy { $0 >= 0.25 && $0 < 1 }, "gaps \(gaps)")
    }
}
