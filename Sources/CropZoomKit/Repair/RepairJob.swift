import CropZoomFFmpeg
import CropZoomSystem
import Foundation
import Synchronization

/// What to repair, from what, into what (`cropzoom repair BROKEN --reference GOOD -o FIXED`).
public struct RepairConfiguration: Sendable, Equatable {
    /// The recording whose writer never wrote its index (`moov`): an MP4/MOV/3GP with its media data only.
    public var input: String
    /// A complete recording from the same camera and settings: its tracks, codec parameters, sample durations and
    /// layout are what the broken file's bytes are read with. Not needed for a fragmented recording that was cut
    /// (its index is at its start).
    public var reference: String?
    /// The repaired file (a remux: the samples are copied byte for byte), written atomically as every output; named
    /// `.mp4`, `.m4v`, `.mov`, `.3gp` or `.3g2` (another container is a transcode's, with
    /// ``/CropZoomCore/TranscodeConfiguration/reference`` set).
    public var output: String
    /// Replace an existing output (`-y`).
    public var overwrite = false

    public init(input: String, reference: String?, output: String) {
        self.input = input
        self.reference = reference
        self.output = output
    }
}

/// What a running ``RepairJob`` reports.
public enum RepairEvent: Sendable {
    /// Now and then: how far the walk through the broken file's media data is, and the samples found so far.
    case progress(fraction: Double, bytes: Int64, samples: Int)
    /// The last event of a repair that succeeded: what ``RepairJob/run()`` returns.
    case done(RepairReport)
    /// The last event of a repair that failed or was cancelled.
    case failed(CropZoomError)
}

/// Brings back a recording whose writer crashed before writing its index (docs/repair.md): the broken file's media
/// data is walked sample by sample with what a reference recording teaches, and the samples found are remuxed, byte
/// for byte, into a playable file with every frame at its time and the sound where the writer put it.
///
/// ```swift
/// let job = RepairJob(configuration: RepairConfiguration(
///     input: "crashed.mp4", reference: "good.mp4", output: "fixed.mp4"))
/// let report = try await job.run()   // throws CropZoomError: exit code 2 or 3 as the command's
/// print(report.line)
/// ```
///
/// Exit codes as the command gives them (``/CropZoomCore/CropZoomError/exitCode``): 2 when the reference cannot
/// serve or the input is not broken, 3 when the input is not an MP4/MOV/3GP or nothing could be recovered. The work
/// runs on a thread of its own; ``cancel()`` or cancelling the awaiting task stops it, leaving nothing behind.
///
/// `@unchecked Sendable`: `cancelled` is atomic and `started` behind `lock`; `probesFirst` is set before ``run()`` and
/// `probeUse` written by the job's thread, read once it has ended (tests); the rest is set in `init` and read only.
public final class RepairJob: @unchecked Sendable {
    public let configuration: RepairConfiguration
    /// Progress while the job runs; finishes when it ends.
    public let events: AsyncStream<RepairEvent>
    private let continuation: AsyncStream<RepairEvent>.Continuation
    private let lock = NSLock()
    /// Set by ``cancel()``; read at every sample the walk hands over (an atomic load, no lock).
    private let cancelled = Atomic<Bool>(false)
    private var started = false
    /// Notices (a stale temporary removed) as the job goes.
    private let notice: @Sendable (String) -> Void

    /// Another owner's stop (a transcode's cancel, when it repairs its input first).
    private let stopWhen: @Sendable () -> Bool

    public convenience init(
        configuration: RepairConfiguration, notice: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.init(configuration: configuration, notice: notice, stopWhen: { false })
    }

    init(
        configuration: RepairConfiguration, notice: @escaping @Sendable (String) -> Void = { _ in },
        stopWhen: @escaping @Sendable () -> Bool
    ) {
        self.configuration = configuration
        self.notice = notice
        self.stopWhen = stopWhen
        (events, continuation) = AsyncStream.makeStream(of: RepairEvent.self, bufferingPolicy: .bufferingNewest(64))
    }

    /// Stops the repair from any thread: nothing is left at the output path, and ``run()`` throws `.cancelled`.
    public func cancel() { cancelled.store(true, ordering: .releasing) }

    private var isCancelled: Bool { cancelled.load(ordering: .acquiring) || stopWhen() }

    /// Repairs (on a thread of its own) and returns the report.
    public func run() async throws(CropZoomError) -> RepairReport {
        try claim()
        return try await JobThread.run(
            named: "cropzoom repair", path: configuration.output, cancel: { [self] in cancel() },
            ended: { [self] in end($0) }, { [self] () throws(CropZoomError) in try repair() })
    }

    /// ``run()`` on the calling thread, blocked until the repair ends, for a caller with nothing else to do meanwhile
    /// (the command line): awaiting ``run()`` from a thread that is not async starts Swift's thread pool and
    /// libdispatch's monitor only to wait — half of a small repair's threads, a tenth of its time (docs/design/repair.md,
    /// "Session 16"). The events are given as by ``run()``; ``cancel()`` and the process's signals stop it as they
    /// stop ``run()``.
    package func runHere() throws(CropZoomError) -> RepairReport {
        try claim()
        let outcome = Result { () throws(CropZoomError) in try repair() }
        end(outcome)
        return try outcome.get()
    }

    /// A job runs once.
    private func claim() throws(CropZoomError) {
        let again = lock.withLock {
            defer { started = true }
            return started
        }
        if again {
            throw CropZoomError(.usage, path: configuration.output, reason: "a RepairJob runs once; make a new one")
        }
    }

    /// The last event, and the end of ``events``.
    private func end(_ outcome: Result<RepairReport, CropZoomError>) {
        switch outcome {
        case .success(let report): continuation.yield(.done(report))
        case .failure(let error): continuation.yield(.failed(error))
        }
        continuation.finish()
    }

    /// Whether `path` is an MP4/MOV/3GP whose index (`moov`) is missing: what a reference repairs.
    public static func isIndexless(_ path: String) -> Bool {
        guard case .indexless? = try? RepairSetup.triage(path) else { return false }
        return true
    }

    /// What a repaired file may be named: the MP4 family the samples are copied into as they are.
    static let outputExtensions = ["mp4", "m4v", "mov", "3gp", "3g2"]

    /// Recovered pictures decoded with the reference's parameters before the rest is trusted.
    static let checkedPictures = 4

    /// The repair itself, on the calling thread. On any error nothing is left at the output path; a failure caused by
    /// a signal (FFmpeg's reading of the reference gives up once the interrupt callback fires) is reported as the
    /// interruption it is, and one caused by ``cancel()`` as the cancellation.
    func repair() throws(CropZoomError) -> RepairReport {
        do {
            return try repairing()
        } catch {
            throw error.ofStoppedJob(cancelled: isCancelled ? configuration.output : nil, output: configuration.output)
        }
    }

    private func repairing() throws(CropZoomError) -> RepairReport {
        FFmpegLog.silence()
        let started = Date()
        let cfg = configuration
        let triage = try RepairSetup.triage(cfg.input)
        // A remux into the reference's kind of file; any other container is a transcode's (which repairs first).
        let kind = RawPath.pathExtension(RawPath.folderAndName(cfg.output).name).lowercased()
        guard Self.outputExtensions.contains(kind) else {
            let command = ["cropzoom", cfg.input, "--reference", cfg.reference ?? "GOOD", "-o", cfg.output]
            let names = Self.outputExtensions.map { "." + $0 }.joined(separator: ", ")
            throw CropZoomError(
                .usage, path: cfg.output,
                reason: "a repair copies the samples into an MP4, MOV or 3GP file (\(names)); for another container "
                    + "transcode the recording with its reference: " + ChildProcess.shellQuoted(command))
        }
        if let reference = cfg.reference, FileIdentity.same(cfg.output, reference) {
            throw CropZoomError(
                .usage, path: cfg.output, reason: "the output is the reference recording; choose another name")
        }
        if case .fragmentedCut(let mediaStart, let size) = triage {
            return try copyFragments(mediaStart: mediaStart, size: size, started: started)
        }
        if !probesFirst, let report = try repair(started: started, probeFirst: false) { return report }
        // Decoding told a picture size the container does not (or the set-up could not stand in for the probe):
        // the file is written again, its header from the probed reference.
        probeUse = .beforeHeader
        guard let report = try repair(started: started, probeFirst: true) else {
            throw CropZoomError(.processing, path: cfg.output, reason: "the probed reference disagrees with itself")
        }
        return report
    }

    /// How a repair used FFmpeg's probe of the reference (`avformat_find_stream_info`), for the tests.
    package enum ProbeUse: Sendable, Equatable {
        /// Not at all: the picture check's decoder and the sound's configuration gave what it would have.
        case none
        /// At the end, for a track nothing was decoded of.
        case atTheEnd
        /// Before the header was written (the set-up could not stand in for it, or decoding disagreed with the
        /// header: the file was written again).
        case beforeHeader
    }

    /// The header written from the probed reference whatever the set-up knows (the tests compare the two).
    package var probesFirst = false
    /// How the last ``repair()`` used the probe.
    package private(set) var probeUse = ProbeUse.none

    /// The repair of an indexless recording; nil when the header written from the container's parameters disagrees
    /// with what decoding found (nothing is left behind: the caller repairs again with `probeFirst`).
    private func repair(started: Date, probeFirst: Bool) throws(CropZoomError) -> RepairReport? {
        let cfg = configuration
        // With `probeFirst`, the reference is probed beside the set-up and the walk (for the writer); waited for
        // before returning, so no thread outlives the repair.
        let early = probeFirst ? cfg.reference.map { ReferenceProbe(path: $0) } : nil
        defer { _ = try? early?.wait() }
        let setup = try RepairSetup(cfg)
        let probe = early ?? setup.needsProbedHeader.map { _ in ReferenceProbe(path: setup.referencePath) }
        defer { _ = try? probe?.wait() }
        if probe != nil { probeUse = .beforeHeader }
        let atomic = try AtomicOutput(
            target: cfg.output, input: cfg.input, overwrite: cfg.overwrite, force: false, multiFile: false,
            notice: notice)
        let (walked, target, unprobed) = (setup.walker.walkedTracks, atomic.writePath, setup.referenceInput)
        // Written from the container's parameters at once, those decoding finds given before the index (the muxer
        // reads them there: ``DecodedParameters``); or from the probed reference once probed.
        let remux = try BackgroundRemux { () throws(CropZoomError) in
            try Remux(reference: probe?.wait() ?? unprobed, streams: walked, target: target, displayPath: cfg.output)
        }
        defer { remux.abandon() }
        // Per track, by its index (looked up for every sample: arrays, not dictionaries).
        var outputIndex = [Int?](repeating: nil, count: setup.model.tracks.count)
        for (stream, track) in setup.walker.walkedTracks.enumerated() { outputIndex[track] = stream }
        let pcmFrameBytes = setup.model.tracks.indices.map { setup.pcmFrameBytes[$0] }
        let timescales = setup.model.tracks.map { Double($0.timescale) }
        // The timecode tracks' clocks (asked for each sample the walk finds).
        let timecodes = setup.model.tracks.map { t -> Timecode? in
            if case .timecode(let clock) = t.kind { clock } else { nil }
        }
        var timing = RecoveredTiming(model: setup.model)
        // The first pictures decoded with the reference's parameters: a reference from other settings is named
        // before anything is kept.
        let checked = setup.model.tracks.indices.first {
            setup.walker.walkedTracks.contains($0) && setup.model.tracks[$0].isVideo
        }
        let check = checked.map { i in
            BackgroundPictureCheck { () throws(CropZoomError) in
                // The set-up's unprobed reference (only read here): the decoder takes the parameter sets from the
                // sample entry.
                try RecoveredPictureCheck(reference: unprobed, stream: i)
            }
        }
        defer { check?.abandon() }
        // The reference's picture, for a message (probed: the profile).
        func described() -> String {
            guard let checked else { return "" }
            let probed = (try? probe?.wait()) ?? (try? RepairSetup.openReference(setup.referencePath, probe: true))
            return RecoveredPictureCheck.describe((probed ?? setup.referenceInput).stream(checked))
        }
        // What the broken file's own media data starts with (the codec, the size its in-band parameter sets give),
        // for the line that says why it does not match the reference.
        func own() -> String {
            let start = (try? setup.broken.read(at: setup.mediaStart, count: 4 << 20)) ?? []
            return MediaSniffer.describe(start).map { "; \($0)" } ?? ""
        }
        func verify(_ bad: Int?) throws(CropZoomError) {
            guard let check, let bad, bad > 0 else { return }
            throw CropZoomError(
                .usage, what: "repairing", path: cfg.input,
                reason: "\(bad) of its first \(check.sent) pictures do not decode with the reference's parameters "
                    + "(\(described()))\(own()): is \(setup.referencePath) from the same camera with the same "
                    + "settings?")
        }
        // A phone's HDR video (Dolby Vision: an RPU in every picture) and its SDR video differ in bit depth, which
        // nothing below the parameter sets shows: the slices of either decode with the other's (drifting, or
        // garbage), so the first pictures' RPUs are compared with the reference's sample entry.
        let vision: HEVCSyntax.DecoderConfiguration? = checked.flatMap {
            if case .hevc(let config) = setup.model.tracks[$0].kind { config } else { nil }
        }
        var visionPictures = 0
        func verifyVision() throws(CropZoomError) {
            guard let check, let vision, check.sent > 0,
                vision.dolbyVision ? visionPictures == 0 : visionPictures == check.sent
            else { return }
            let (its, reference) = vision.dolbyVision ? ("no ", "do") : ("", "do not")
            throw CropZoomError(
                .usage, what: "repairing", path: cfg.input,
                reason: "its first \(check.sent) pictures carry \(its)Dolby Vision metadata and the reference's "
                    + "\(reference) (\(described())): an HDR recording and an SDR one, whose pictures differ in bit "
                    + "depth; is \(setup.referencePath) from the same camera with the same settings (HDR video on or "
                    + "off)?")
        }
        var spans = [(first: Double, end: Double)?](repeating: nil, count: setup.model.tracks.count)
        var timecode: String?
        var found = 0
        var recoveredBytes: Int64 = 0
        let span = Double(max(1, setup.mediaEnd - setup.mediaStart))
        // Where each uncompressed sound track's last sample ended: a MOV times such sound by its sample count, so the
        // time damaged bytes stood for is filled with silence (RecoveredTiming resumed the tracks together).
        var pcmEnd = [Int64?](repeating: nil, count: setup.model.tracks.count)
        var sampleBuffer: [UInt8] = []
        // The samples each one the walk finds settles (their storage kept from sample to sample).
        var settled: [TimedSample] = []
        func write(_ timed: [TimedSample]) throws(CropZoomError) {
            for t in timed {
                let sample = t.sample
                if let block = pcmFrameBytes[sample.track], let stream = outputIndex[sample.track] {
                    if let end = pcmEnd[sample.track], t.dts > end {
                        let quiet = setup.model.tracks[sample.track].sampleEntry == "raw " ? UInt8(0x80) : 0
                        let frames = t.dts - end
                        try remux.write(
                            stream: stream, bytes: [UInt8](repeating: quiet, count: Int(frames) * block), pts: end,
                            dts: end, duration: frames, key: true)
                    }
                    pcmEnd[sample.track] = t.dts + t.duration
                }
                // From the walk's window while it still holds the sample (most do), else read again into one
                // buffer for every such sample (its storage kept from sample to sample).
                let bytes: ArraySlice<UInt8>
                if let held = setup.window.heldBytes(at: sample.offset, count: sample.size) {
                    bytes = held
                } else {
                    let read = try setup.broken.read(at: sample.offset, count: sample.size, into: &sampleBuffer)
                    bytes = sampleBuffer[..<read]
                }
                guard bytes.count == sample.size, let stream = outputIndex[sample.track] else {
                    throw CropZoomError(
                        .processing, what: "reading a sample", path: cfg.input, reason: "the file changed while read")
                }
                if let check, sample.track == checked, check.wantsMore {
                    try check.add(bytes, pts: t.pts, dts: t.dts, key: sample.isKey)
                    if let vision {
                        if HEVCSyntax.carriesDolbyVision(bytes, nalLengthSize: vision.nalLengthSize) {
                            visionPictures += 1
                        }
                        if !check.wantsMore { try verifyVision() }
                    }
                }
                let scale = timescales[sample.track]
                let (start, end) = (Double(t.pts) / scale, Double(t.pts + t.duration) / scale)
                let span = spans[sample.track] ?? (start, end)
                spans[sample.track] = (min(span.first, start), max(span.end, end))
                try remux.write(
                    stream: stream, bytes: bytes, pts: t.pts, dts: t.dts, duration: t.duration, key: sample.isKey)
                recoveredBytes += Int64(sample.size)
            }
        }
        let outcome = try setup.walker.walk(
            progress: { [continuation] offset in
                continuation.yield(
                    .progress(
                        fraction: Double(offset - setup.mediaStart) / span, bytes: offset - setup.mediaStart,
                        samples: found))
            },
            emit: { (sample) throws(CropZoomError) in
                if isCancelled { throw CropZoomError(.cancelled, path: cfg.output, reason: "cancelled") }
                let signal = ProcessSignal.pending
                if signal != 0 {
                    throw CropZoomError(.interrupted(signal: signal), path: cfg.output, reason: "interrupted")
                }
                if let clock = timecodes[sample.track] {
                    // The recording's own clock, written as the muxer's timecode track.
                    let bytes = try setup.broken.read(at: sample.offset, count: sample.size)
                    if let text = clock.string(sample: bytes), remux.setTimecode(text) {
                        timecode = text
                    } else {
                        notice("\(cfg.input): a timecode sample after the first picture was left out")
                    }
                    return
                }
                settled.removeAll(keepingCapacity: true)
                timing.take(sample, into: &settled)
                try write(settled)
                found += 1
                // The check's answer as soon as it has one: a reference from other settings ends the walk there.
                try verify(check?.failedPictures())
            })
        settled.removeAll(keepingCapacity: true)
        timing.finish(into: &settled)
        try write(settled)
        if let check, check.sent > 0 {
            try verify(check.finish())
            try verifyVision()
        }
        var report = setup.report(
            outcome,
            spans: Dictionary(uniqueKeysWithValues: spans.enumerated().compactMap { i, s in s.map { (i, $0) } }),
            recoveredBytes: recoveredBytes,
            seconds: Date().timeIntervalSince(started))
        report.timecode = timecode
        if timing.soundTimed > 0 { report.picturesTimedBySound = timing.soundTimed }
        guard report.tracks.contains(where: { $0.recovered && ($0.type == "video" ? $0.keyframes : $0.samples) > 0 })
        else {
            // What the media data holds, against the reference's pictures where both are known.
            var holds = own()
            if !holds.isEmpty, check != nil { holds += ", the reference's are \(described())" }
            throw CropZoomError(
                .inputUnreadable, what: "repairing", path: cfg.input,
                reason: "no sample of the reference's tracks found in its \(RepairReport.bytes(report.mediaBytes)) "
                    + "of media data\(holds): is \(setup.referencePath) from the same camera and settings?")
        }
        if probe == nil {
            // What FFmpeg learns by decoding, for the index: the picture check's decoder's, the sound's known at
            // set-up, and a probe's for a track nothing was decoded of (no picture recovered).
            var decoded: [Int: DecodedParameters] = [:]
            for (stream, track) in walked.enumerated() {
                decoded[stream] = track == checked ? check?.decodedParameters : setup.soundParameters[track]
            }
            if decoded.count < walked.count {
                probeUse = .atTheEnd
                let probed = try RepairSetup.openReference(setup.referencePath, probe: true)
                for (stream, track) in walked.enumerated() where decoded[stream] == nil {
                    decoded[stream] = DecodedParameters(probed: probed.stream(track))
                }
            }
            guard try remux.finish(completing: decoded) else { return nil }
        } else {
            try remux.finish()
        }
        try atomic.commit()
        return report
    }

    /// A fragmented recording cut mid-fragment (cropzoom's own live recordings, phones writing fragmented MP4): no
    /// reference is needed, its index is at the front; the whole fragments are copied into a regular file and the
    /// packets the cut went through are left out.
    private func copyFragments(mediaStart: Int64, size: Int64, started: Date) throws(CropZoomError) -> RepairReport {
        let cfg = configuration
        let atomic = try AtomicOutput(
            target: cfg.output, input: cfg.input, overwrite: cfg.overwrite, force: false, multiFile: false,
            notice: notice)
        let copied = try FinishedMP4.rewrite(cfg.input, into: atomic.writePath, displayPath: cfg.output, cutAt: size)
        if isCancelled { throw CropZoomError(.cancelled, path: cfg.output, reason: "cancelled") }
        guard copied.contains(where: { $0.packets > 0 }) else {
            throw CropZoomError(
                .inputUnreadable, what: "repairing", path: cfg.input,
                reason: "fragmented, and cut before its first whole fragment: nothing to recover")
        }
        let tracks = copied.enumerated().map { i, c in
            RepairReport.Track(
                index: i, type: c.type, codec: c.codec, samples: c.packets, keyframes: c.keyframes,
                seconds: c.end.map { $0 - max(0, c.first ?? 0) } ?? 0, recovered: true)
        }
        let whole = copied.map(\.lastByte).max() ?? mediaStart
        let video = copied.first { $0.type == "video" && $0.first != nil }?.first
        let audio = copied.first { $0.type == "audio" && $0.first != nil }?.first
        let report = RepairReport(
            input: cfg.input, reference: nil, output: cfg.output, tracks: tracks,
            gaps: whole < size ? [RepairGap(offset: whole, bytes: size - whole, reason: "cut")] : [],
            skippedBeforeKeyframe: 0, mediaBytes: size - mediaStart, recoveredBytes: copied.reduce(0) { $0 + $1.bytes },
            audioStartOffset: video.flatMap { v in audio.map { $0 - v } }, seconds: Date().timeIntervalSince(started))
        try atomic.commit()
        return report
    }
}
