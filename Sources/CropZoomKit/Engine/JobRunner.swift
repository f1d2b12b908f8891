import CropZoomFFmpeg
import CropZoomSystem
import Foundation

/// Runs one job synchronously for ``TranscodeJob`` (the public entry point): sets it up (`Job`), has its stages built
/// (``JobStages``) and runs them on the serial, threaded or live engine as the thread plan and the source say, checks
/// the run (`Summary.swift`), finishes the file and makes the summary. On any error nothing is left at the output
/// path. Its dry run (``plan()``) is in `DryRun.swift`.
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

    /// Runs the transcode. On any error nothing is left at the output path. A failure caused by
    /// a signal (FFmpeg's I/O gives up once the interrupt callback fires) is reported as the
    /// interruption it is.
    func run() throws(CropZoomError) -> TranscodeSummary {
        do {
            return try transcode()
        } catch {
            // Whatever a cancelled job's stages failed with (a read ended by the interrupt), it was cancelled.
            throw error.ofStoppedJob(
                cancelled: cancelFlag.isSet ? configuration.inputName : nil, output: configuration.output)
        }
    }

    private func transcode() throws(CropZoomError) -> TranscodeSummary {
        var cfg = configuration
        let started = monotonicSeconds()
        let cpuStart = JobRunner.cpuSeconds()
        FFmpegLog.install(verbose: cfg.verbose)
        if cancelFlag.isSet { throw CropZoomError(.cancelled, path: cfg.inputName, reason: "cancelled") }
        // --reference: an input without its index is repaired first, and the repaired samples transcoded.
        let flag = cancelFlag
        let salvaged = try SalvagedInput.prepare(cfg, notice: onNotice, cancelled: { flag.isSet })
        defer { salvaged?.remove() }
        if let salvaged { cfg.input = salvaged.path }
        try Stabilizer.check(cfg)
        try Reframer.check(cfg)
        // --follow: the analysis pass; the render's window then moves along its path.
        var reframing: [String] = []
        let reframes = cfg.reframe.map { $0.follow != .center } == true
        // With --stabilize too, the steadied picture is what the window moves over: its path first.
        var steadied: Stabilizer.Outcome? = nil
        // (A still window is drawn in a --preview too: the pass then reads only the frames of the sheet.)
        if (reframes || cfg.reframe?.preview != nil) && !cfg.isLive {
            let analysing = analysisProgress(since: started)
            if cfg.stabilize != nil && !cfg.isLive {
                steadied = try Stabilizer.path(cfg, cancel: cancelFlag) { analysing($0, $1, nil) }
            }
            let outcome = try Reframer.path(cfg, steadied: steadied?.path, cancel: cancelFlag, progress: analysing)
            outcome.notices.forEach(onNotice)
            reframing = outcome.notices
            if let path = outcome.path { Reframer.apply(path, to: &cfg, shape: outcome.shape) }
        }
        let job = try Job(cfg, cancel: cancelFlag, interrupt: interrupt, inputBytes: inputBytes, notice: onNotice)
        let threads = job.threads
        defer { job.atomic?.discard() }
        // --stabilize: the analysis pass, then the render follows its path.
        let phase: ProgressEvent.Phase? = (cfg.stabilize == nil && !reframes) || job.live != nil ? nil : .rendering
        var stabilizing: [String] = []
        var liveStabilizer: LiveStabilizer? = nil
        var liveReframer: LiveReframer? = nil
        if reframes, let live = job.live, let shape = job.reframeShape {
            // A live source: the window's path is made as the frames arrive (a causal path with a look-ahead).
            if shape.uprightWidth - shape.window.width < 1 && shape.uprightHeight - shape.window.height < 1 {
                onNotice(
                    "\(cfg.inputName): the window is the whole picture: there is nothing to follow (\(setting: .follow))"
                )
            } else {
                let times = job.times
                let reframer = try LiveReframer(
                    cfg, shape: shape, pixelAspect: job.pixelAspect, framesPerSecond: live.framesPerSecond,
                    mediaSeconds: { times.mediaTime($0.presentationTime) })
                job.follow(reframer.path)
                liveReframer = reframer
                onNotice("\(cfg.inputName): \(reframer.notice)")
            }
        }
        if cfg.stabilize != nil, let live = job.live {
            // A live source: no analysis pass; the path is made as the frames arrive (a causal path).
            let times = job.times
            let stabilizer = try LiveStabilizer(
                cfg, width: job.codedSize.width, height: job.codedSize.height, pixelAspect: job.pixelAspect,
                framesPerSecond: live.framesPerSecond, mediaSeconds: { times.mediaTime($0.presentationTime) })
            job.follow(stabilizer.path)
            liveStabilizer = stabilizer
            onNotice("\(cfg.inputName): \(stabilizer.notice)")
        } else if cfg.stabilize != nil {
            let outcome: Stabilizer.Outcome
            if let steadied {
                outcome = steadied
            } else {
                let analysing = analysisProgress(since: started)
                let duration = job.duration
                outcome = try Stabilizer.path(cfg, cancel: cancelFlag) { analysing($0, $1, duration) }
            }
            outcome.notices.forEach(onNotice)
            stabilizing = outcome.notices
            if let path = outcome.path {
                try Stabilizer.check(path, size: job.codedSize, pixelAspect: job.pixelAspect, cfg: cfg)
                job.follow(path)
            }
        }

        let counts: EngineCounts
        let report = onProgress.map { callback in
            { (frames: Int, time: Double) in
                let now = monotonicSeconds()
                var event = ProgressEvent(
                    frames: frames, framesDropped: job.live?.totalDropped ?? 0, time: time, duration: job.duration,
                    elapsed: now - started)
                event.phase = phase
                if let live = job.live {
                    event.framesIn = live.framesReceived
                    event.lateBy = live.dropped
                    event.latency = frames > 0 ? live.latency(encoded: time, now: now) : nil
                }
                callback(event)
            }
        }
        let stages = JobStages(job)
        let stops = RunStops(cancel: cancelFlag, inputName: cfg.inputName, live: job.live)
        if let live = job.live {
            // A live source has threads of its own: its reader must never wait for the other stages.
            let times = job.times
            counts = try LiveEngine(
                stages: stages, workers: threads.workers, live: live, stops: stops,
                stabilizer: liveStabilizer ?? liveReframer,
                mediaSeconds: { times.mediaTime($0.presentationTime) }
            ).run(progress: report)
        } else if threads.workers == 0 {
            counts = try SerialEngine(stages: stages, stops: stops, progress: report).run()
        } else {
            counts = try ThreadedEngine(
                stages: stages, workers: threads.workers, stops: stops, upstreamNice: threads.upstreamNice
            ).run(progress: report)
        }
        if let liveStabilizer, liveStabilizer.unmeasured > 0 {
            let n = liveStabilizer.unmeasured
            let note =
                "\(cfg.inputName): \(n) frame\(n == 1 ? "" : "s") without texture enough to measure the motion (black, "
                + "a fade): the path is bridged there"
            onNotice(note)
            stabilizing.append(note)
        }
        // A read ended by the cancel switch looks like the input's end: the job was cancelled all the same.
        if cancelFlag.isSet { throw CropZoomError(.cancelled, path: cfg.inputName, reason: "cancelled") }
        try Self.check(counts, job: job, warn: onWarning)
        try job.finish()
        // Notices only the end can give: the input's clock restarts, times the container could not hold apart.
        let timing = (counts.clockNotice.map { ["\(cfg.inputName): \($0)"] } ?? []) + job.muxer.timePrecisionNotices()
        timing.forEach(onNotice)

        var summary = TranscodeSummary(
            job: job, counts: counts, notices: job.notices + reframing + stabilizing + timing,
            seconds: monotonicSeconds() - started,
            cpuSeconds: JobRunner.cpuSeconds() - cpuStart)
        summary.repair = salvaged?.report
        return summary
    }

    /// `--stabilize`'s analysis alone (``TranscodeJob/cameraPath()``): the path the render would follow, nil with a
    /// notice when none can be found. The output is not touched; a `--path-out` is written.
    func cameraPath() throws(CropZoomError) -> CameraPath? {
        var cfg = configuration
        if cfg.stabilize == nil { cfg.stabilize = Stabilization() }
        cfg.stabilize?.path = nil
        FFmpegLog.install(verbose: cfg.verbose)
        if cfg.isLive {
            throw CropZoomError(
                .usage, path: cfg.inputName, setting: .stabilize,
                reason: "a live source's camera path is made as it records (a transcode with \(setting: .stabilize)); "
                    + "there is no clip to analyse beforehand")
        }
        try Stabilizer.check(cfg)
        return try analyse(cfg) { (progress) throws(CropZoomError) in
            let outcome = try Stabilizer.path(cfg, cancel: cancelFlag) { progress($0, $1, nil) }
            return (outcome.path, outcome.notices)
        }
    }

    /// `--follow`'s analysis alone (``TranscodeJob/reframePath()``): the window path the render would follow, nil with
    /// a notice when there is nothing to follow. The output is not touched; a `--path-out` is written.
    func reframePath() throws(CropZoomError) -> ReframePath? {
        var cfg = configuration
        if cfg.reframe == nil || cfg.reframe?.follow == .center { cfg.reframe = Reframing(follow: .auto) }
        cfg.reframe?.path = nil
        FFmpegLog.install(verbose: cfg.verbose)
        try Reframer.check(cfg)
        return try analyse(cfg) { (progress) throws(CropZoomError) in
            let outcome = try Reframer.path(cfg, steadied: nil, cancel: cancelFlag, progress: progress)
            return (outcome.path, outcome.notices)
        }
    }

    /// An analysis alone (``cameraPath()``, ``reframePath()``): `pass` reports progress (frames, media seconds, the
    /// duration when known) as events of the analysing phase; its notices become notice events; a cancelled pass
    /// says so.
    private func analyse<Path>(
        _ cfg: TranscodeConfiguration,
        _ pass: (_ progress: @escaping (Int, Double, Double?) -> Void) throws(CropZoomError) -> (Path?, [String])
    ) throws(CropZoomError) -> Path? {
        do {
            let (path, notices) = try pass(analysisProgress(since: monotonicSeconds()))
            notices.forEach(onNotice)
            return path
        } catch {
            if cancelFlag.isSet { throw CropZoomError(.cancelled, path: cfg.inputName, reason: "cancelled") }
            throw error
        }
    }

    /// Progress events of the analysing phase (frames, media seconds, the duration when known), timed from `started`.
    private func analysisProgress(since started: Double) -> (Int, Double, Double?) -> Void {
        { [onProgress] frames, time, duration in
            var event = ProgressEvent(
                frames: frames, time: time, duration: duration, elapsed: monotonicSeconds() - started)
            event.phase = .analysing
            onProgress?(event)
        }
    }

    /// User + system CPU time of the process (`getrusage`).
    static func cpuSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) * 1e-6
            + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) * 1e-6
    }
}
