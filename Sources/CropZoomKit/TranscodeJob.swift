import CropZoomFFmpeg
import Foundation

/// What a running ``TranscodeJob`` reports.
public enum TranscodeEvent: Sendable {
    /// A few times a second: frames done, media time reached, elapsed time.
    case progress(ProgressEvent)
    /// A one-line notice: a stream re-encoded or dropped, and the like.
    case notice(String)
    /// A one-line warning: the input was cut short and only what was there was transcoded.
    case warning(String)
    /// The last event of a job that succeeded: what ``TranscodeJob/run()`` returns.
    case done(TranscodeSummary)
    /// The last event of a job that failed or was cancelled: what ``TranscodeJob/run()`` throws.
    case failed(CropZoomError)
}

/// One transcode for Swift code: configure it, run it with `await`, watch ``events`` as an
/// `AsyncSequence` (progress a few times a second, notices, and last `.done` or `.failed`), cancel it with
/// ``cancel()`` or by cancelling the task that awaits ``run()``.
///
/// ```swift
/// var config = TranscodeConfiguration(input: "in.mov", output: "out.mp4")
/// config.geometry.zoom = 1.65
/// let job = TranscodeJob(configuration: config)
/// Task { for await case .progress(let p) in job.events { print(p.frames, p.fraction ?? 0) } }
/// let summary = try await job.run()       // throws CropZoomError; .cancelled after cancel()
/// print(summary.framesOut, summary.fps)
/// ```
///
/// The work runs on its own threads (the engine's), not on the Swift concurrency pool, so a
/// long transcode does not hold a cooperative thread. A job runs once.
///
/// `@unchecked Sendable`: the pipeline is touched by the thread that runs it; `cancel()` only
/// raises the pipeline's lock-protected flag, and `started` is guarded by `lock`.
public final class TranscodeJob: @unchecked Sendable {
    public let configuration: TranscodeConfiguration
    /// Progress and notices while the job runs; finishes when it ends (however it ends).
    public let events: AsyncStream<TranscodeEvent>
    private let continuation: AsyncStream<TranscodeEvent>.Continuation
    private let runner: JobRunner
    private let lock = NSLock()
    private var started = false

    /// How notices, warnings and the plan's and summary's notices name settings.
    private let naming: @Sendable (Setting) -> String

    /// A job for `configuration`. Notices and warnings name settings as `naming` gives them: by their keys
    /// (`crop`) unless a front end has its own words (the command line passes `\.flag`: `--crop`). Errors carry
    /// the references and are written by ``/CropZoomCore/CropZoomError/description(naming:)``.
    public init(configuration: TranscodeConfiguration, naming: @escaping @Sendable (Setting) -> String = \.key) {
        self.configuration = configuration
        self.naming = naming
        runner = JobRunner(configuration: configuration)
        (events, continuation) = AsyncStream.makeStream(of: TranscodeEvent.self, bufferingPolicy: .bufferingNewest(64))
        let c = continuation
        runner.onProgress = { c.yield(.progress($0)) }
        runner.onNotice = { c.yield(.notice(Setting.render($0, naming: naming))) }
        runner.onWarning = { c.yield(.warning(Setting.render($0, naming: naming))) }
    }

    /// Stops the job from any thread or task: its stages stop, nothing is left at the output
    /// path, and ``run()`` throws a `.cancelled` error.
    public func cancel() { runner.cancel() }

    /// What ``run()`` would do, without doing it: the input is opened and the geometry, codecs
    /// and stream routes decided as for the real job; nothing is written (`batch --dry-run`).
    public func plan() throws(CropZoomError) -> JobPlan {
        var plan = try runner.plan()
        plan.notices = plan.notices.map { Setting.render($0, naming: naming) }
        return plan
    }

    /// `--stabilize`'s analysis alone, so that an app can show (or edit) the camera path before rendering: the
    /// input's motion measured and the path chosen as ``/CropZoomCore/TranscodeConfiguration/stabilize`` asks (its
    /// defaults when nil). Nil, with a notice on ``events``, where no path can be found (one frame, no texture).
    /// Nothing is written but a `pathOut`; progress comes on ``events`` with the phase `analysing`. Render the path
    /// with ``/CropZoomCore/Stabilization/path`` on a new job's configuration: like ``run()``, this runs once per job,
    /// and ``events`` end with it. Cancelling the awaiting task (or ``cancel()``) stops it.
    ///
    /// ```swift
    /// var config = TranscodeConfiguration(input: "walk.mp4", output: "steady.mp4")
    /// config.stabilize = Stabilization()
    /// if let path = try await TranscodeJob(configuration: config).cameraPath() {
    ///     print(CameraPathReport(path).pathJitterPx)
    ///     config.stabilize?.path = path
    /// }
    /// let summary = try await TranscodeJob(configuration: config).run()
    /// ```
    public func cameraPath() async throws(CropZoomError) -> CameraPath? {
        try claimRun()
        return try await onThread(named: "cropzoom analysis", finishing: true) { [self] () throws(CropZoomError) in
            try runner.cameraPath()
        }
    }

    /// `--follow`'s analysis alone: the window path the render would follow (``/CropZoomCore/Reframing``; `auto`
    /// when the configuration asks for none), without rendering; nil when there is nothing to follow (a notice event
    /// says why). A `--path-out` is written. Edit it and render it with ``/CropZoomCore/Reframing/path``:
    ///
    /// ```swift
    /// var config = TranscodeConfiguration(input: "talk.mp4", output: "portrait.mp4")
    /// config.geometry.aspect = GeometryRequest.Aspect(width: 9, height: 16)
    /// config.reframe = Reframing(follow: .faces)
    /// if var path = try await TranscodeJob(configuration: config).reframePath() {
    ///     for i in path.samples.indices where path.samples[i].time < 1 { path.samples[i].x = 0 }
    ///     config.reframe?.path = path
    /// }
    /// let summary = try await TranscodeJob(configuration: config).run()
    /// ```
    public func reframePath() async throws(CropZoomError) -> ReframePath? {
        try claimRun()
        return try await onThread(named: "cropzoom analysis", finishing: true) { [self] () throws(CropZoomError) in
            try runner.reframePath()
        }
    }

    /// Runs the transcode (the job runner on a thread of its own) and returns its summary.
    /// Cancelling the awaiting task cancels the job.
    public func run() async throws(CropZoomError) -> TranscodeSummary {
        try claimRun()
        return try await onThread(named: "cropzoom job", finishing: true) {
            [self] () throws(CropZoomError) in
            var summary = try runner.run()
            summary.notices = summary.notices.map { Setting.render($0, naming: naming) }
            continuation.yield(.done(summary))
            return summary
        }
    }

    /// A job runs once (``run()``, ``cameraPath()`` or ``reframePath()``).
    private func claimRun() throws(CropZoomError) {
        let again = lock.withLock {
            defer { started = true }
            return started
        }
        if again {
            throw CropZoomError(.usage, path: configuration.output, reason: "a TranscodeJob runs once; make a new one")
        }
    }

    /// Runs `body` on a thread of its own (not the Swift concurrency pool: a long job must not hold a cooperative
    /// thread) and returns what it returns; cancelling the awaiting task cancels the job. `finishing`: the events
    /// end with it (a failure is their last, `.failed`).
    private func onThread<T: Sendable>(
        named name: String, finishing: Bool, _ body: @escaping @Sendable () throws(CropZoomError) -> T
    ) async throws(CropZoomError) -> T {
        let continuation = self.continuation
        return try await JobThread.run(
            named: name, path: configuration.output, cancel: { [self] in cancel() },
            ended: { outcome in
                guard finishing else { return }
                if case .failure(let error) = outcome { continuation.yield(.failed(error)) }
                continuation.finish()
            }, body)
    }
}
