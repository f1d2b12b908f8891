import CCropZoomSystem
import CFFmpeg
import Foundation

/// Runs one job synchronously for ``TranscodeJob`` (the public entry point): sets it up (`Job`),
/// runs it on the serial or the threaded engine as the thread plan says, checks the run, finishes
/// the file and makes the summary. On any error nothing is left at the output path.
final class JobRunner {
    let configuration: TranscodeConfiguration
    /// Called with one-line notices (a stream re-encoded or dropped, …).
    var onNotice: (String) -> Void = { _ in }
    /// Called with one-line warnings: the input was cut short (the output holds what was there).
    var onWarning: (String) -> Void = { _ in }
    /// Called a few times a second with progress, on the thread that called `run`.
    var onProgress: ((ProgressEvent) -> Void)? = nil

    /// The input's bytes, read from memory instead of `configuration.input`, which then only names it (in-process
    /// fuzzing, ``FuzzTarget``); nil: the input is opened by its name.
    var inputBytes: [UInt8]? = nil

    private let cancelFlag = CancelFlag()
    /// Ends the input's reads when the job is cancelled: a read waiting on a network source returns at once
    /// (`cz_watch_callback`), without a process-wide signal.
    private let interrupt = try? IOWatch()

    init(configuration: TranscodeConfiguration) {
        self.configuration = configuration
    }

    /// Stops a running `run` from any thread: every stage stops, nothing is left at the output
    /// path, and `run` throws a `.cancelled` error. Before `run`, the run stops at once.
    func cancel() {
        cancelFlag.raise()
        interrupt?.stop()
    }

    /// What `run` would do, without doing it: the input is opened and the geometry, codecs and
    /// stream routes decided as for the real job, nothing is written (`batch --dry-run`).
    func plan() throws(CropZoomError) -> JobPlan {
        var cfg = configuration
        cfg.null = true
        cz_log_install(cfg.verbose ? AV_LOG_WARNING : AV_LOG_QUIET)
        var notices: [String] = []
        let job = try Job(cfg, inputBytes: inputBytes, notice: { notices.append($0) })
        let p = job.plan
        let display = p.orientation
        var audio: [String] = []
        for (i, route) in job.routes.enumerated() {
            switch route {
            case .copy where job.demuxer.isAudio(i): audio.append("#\(i) copied")
            case .reencode(let t, _):
                audio.append("#\(i) re-encoded (\(t.encoder.name))")
            default: break
            }
        }
        let container = OutputFormat.guessMuxer(format: nil, path: configuration.output) ?? "unknown"
        return JobPlan(
            input: configuration.input, output: configuration.output, container: container,
            window: p.source, outputWidth: p.output.width, outputHeight: p.output.height,
            orientation: display.isIdentity ? "none" : display.description,
            videoCodec: job.encoder?.context.name ?? "none", pixelFormat: job.outputFormat.name,
            audio: audio, notices: notices, motion: Self.motion(of: p))
    }

    /// What moves per frame in `plan`, in words (`JobPlan.motion`).
    static func motion(of plan: GeometryPlan) -> [String] {
        var m: [String] = []
        if let a = plan.animation {
            if a.zoom.isAnimated {
                m.append("zoom keyframes")
            } else if a.zoom.value(0, at: 0) < 1 {
                m.append("zoom out")
            }
            if a.center.isAnimated { m.append("centre keyframes") }
            if a.crop?.isAnimated == true { m.append("crop keyframes") }
        }
        if let w = plan.warp {
            if let angle = w.angle {
                m.append(
                    angle.isAnimated
                        ? "rotation keyframes" : "rotation \(String(format: "%g", angle.value(0, at: 0)))°"
                )
            }
            if let t = w.transform { m.append(t.isAnimated ? "matrix keyframes" : "matrix") }
        }
        return m
    }

    /// Runs the transcode. On any error nothing is left at the output path. A failure caused by
    /// a signal (FFmpeg's I/O gives up once the interrupt callback fires) is reported as the
    /// interruption it is.
    func run() throws(CropZoomError) -> TranscodeSummary {
        do {
            return try transcode()
        } catch {
            // Whatever a cancelled job's stages failed with (a read ended by the interrupt), it was cancelled.
            if cancelFlag.isSet { throw CropZoomError(.cancelled, path: configuration.inputName, reason: "cancelled") }
            let signal = cz_pending_signal()
            if signal != 0 {
                throw CropZoomError(
                    .interrupted(signal: signal), path: configuration.output, reason: "interrupted; nothing written")
            }
            throw error
        }
    }

    private func transcode() throws(CropZoomError) -> TranscodeSummary {
        let cfg = configuration
        let started = monotonicSeconds()
        let cpuStart = JobRunner.cpuSeconds()
        cz_log_install(cfg.verbose ? AV_LOG_WARNING : AV_LOG_QUIET)
        if cancelFlag.isSet { throw CropZoomError(.cancelled, path: cfg.inputName, reason: "cancelled") }
        let job = try Job(cfg, cancel: cancelFlag, interrupt: interrupt, inputBytes: inputBytes, notice: onNotice)
        let threads = job.threads
        defer { job.atomic?.discard() }

        let counts: EngineCounts
        let report = onProgress.map { callback in
            { (frames: Int, time: Double) in
                let now = monotonicSeconds()
                var event = ProgressEvent(
                    frames: frames, framesDropped: job.live?.totalDropped ?? 0, time: time, duration: job.duration,
                    elapsed: now - started)
                if let live = job.live {
                    event.framesIn = live.framesReceived
                    event.lateBy = live.dropped
                    event.latency = frames > 0 ? live.latency(encoded: time, now: now) : nil
                }
                callback(event)
            }
        }
        // A live source needs the threaded engine: its reader must never wait for the other stages.
        if threads.workers == 0 && job.live == nil {
            counts = try SerialEngine(job: job, progress: report).run()
        } else {
            counts = try ThreadedEngine(job: job, workers: threads.workers).run(progress: report)
        }
        // A read ended by the cancel switch looks like the input's end: the job was cancelled all the same.
        if cancelFlag.isSet { throw CropZoomError(.cancelled, path: cfg.inputName, reason: "cancelled") }
        if counts.framesOut == 0 {
            if let range = job.trim.range {
                var reason =
                    String(format: "no video frame between %.3f s and ", range.start)
                    + (range.end.map { String(format: "%.3f s", $0) } ?? "the end")
                if let vs = job.trim.videoSpan.start, let ve = job.trim.videoSpan.end {
                    reason += String(format: ": the video runs from %.3f s to %.3f s", vs, ve)
                }
                throw CropZoomError(.usage, path: cfg.inputName, reason: reason)
            }
            throw CropZoomError(.inputUnreadable, path: cfg.inputName, reason: "no video frame could be decoded")
        }
        if let truncation = job.demuxer.truncation {
            onWarning(
                "\(cfg.inputName): \(truncation); the output holds what was there (\(setting: .strict) refuses such input)"
            )
        }
        try job.finish()
        // Notices only the end can give: the input's clock restarts, times the container could not hold apart.
        let timing = (counts.clockNotice.map { ["\(cfg.inputName): \($0)"] } ?? []) + job.muxer.timePrecisionNotices()
        timing.forEach(onNotice)

        var summary = TranscodeSummary(
            // (HLS's --segment names its playlist, the output itself.)
            output: cfg.null ? "(null)" : job.muxer.segment != nil ? cfg.segmentPattern : cfg.output,
            outputWidth: job.plan.output.width,
            outputHeight: job.plan.output.height,
            videoCodec: job.encoder?.context.name ?? "none", pixelFormat: job.outputFormat.name,
            framesIn: counts.framesIn, framesOut: counts.framesOut,
            corruptSkipped: job.decoder.corruptPackets + job.demuxer.skippedErrors + counts.audioCorrupt
                + counts.copiedDamaged,
            duplicateTimestampsDropped: counts.duplicates,
            audioStreamsCopied: job.streams.audioCopied, audioStreamsReencoded: job.streams.audioReencoded,
            otherStreamsCopied: job.streams.otherCopied, streamsDropped: job.streams.dropped,
            audioPackets: counts.audioPackets,
            seconds: monotonicSeconds() - started, mediaDuration: job.duration ?? counts.lastTime,
            notices: job.notices + timing, truncated: job.demuxer.truncation, pool: counts.pool,
            engine: EngineReport(
                threads: threads.threads, transformWorkers: max(1, threads.workers),
                decoderThreads: threads.decoder, encoderThreads: job.encoder == nil ? 0 : threads.encoder,
                busy: counts.busy.filter { job.encoder != nil || $0.key != .encode },
                waits: counts.waits,
                cpuSeconds: JobRunner.cpuSeconds() - cpuStart,
                upstreamNice: Int(threads.upstreamNice)),
            window: job.plan.source, ffmpegFilter: job.plan.ffmpegFilter(scaler: cfg.scaler))
        if job.live != nil {
            summary.framesDropped = Dictionary(
                uniqueKeysWithValues: DropPoint.allCases.map { ($0, counts.dropped[$0] ?? 0) })
        }
        summary.liveEnd = job.demuxer.liveEnd
        summary.clockRestarts = counts.clockRestarts
        summary.firstFrameAfter = job.live?.firstFrameAfter
        return summary
    }

    /// User + system CPU time of the process (`getrusage`).
    static func cpuSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) * 1e-6
            + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) * 1e-6
    }
}
