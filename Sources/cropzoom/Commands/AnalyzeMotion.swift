import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom analyze-motion INPUT [--json]`: how steadily the picture moves (pans of static content), so anyone can
/// check a zoom/pan for jitter; with `--camera-path`, the camera's shake as `--stabilize` measures it and the path it
/// would choose; with `--follow`, the window path reframing would follow (`--aspect`).
struct AnalyzeMotion: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze-motion",
        abstract:
            "Measure how steadily the picture moves: velocity, jitter (px/frame²) and backward steps, frame to frame; "
            + "with --camera-path, the shake and the path --stabilize would follow; with --follow, the window path "
            + "reframing would follow.",
        discussion:
            "Meant for pans and slow zooms of static content. --camera-path measures the camera's motion as "
            + "--stabilize does and prints its jitter, the chosen path's jitter, the zoom and the largest correction "
            + "(--json: per frame too); --path-out writes the path as CSV for plotting or editing (render it with "
            + "cropzoom IN -o OUT --path-in FILE). --follow auto|faces|motion (with --aspect W:H, --zoom) finds the "
            + "subject and prints the window path a reframed render would follow (--json: a row per frame; "
            + "--path-out: CSV, rendered with cropzoom IN -o OUT --aspect W:H --follow faces --path-in FILE). Exit "
            + "codes: 0 ok (also when no path can be found: a note says why), 2 bad usage, 3 input unreadable.")

    @Argument(help: "The video to measure.")
    var input: String

    @Flag(
        help: ArgumentHelp(
            "Print JSON (frames, velocity_mean, jitter_mean, jitter_max, backward_steps, velocities; with "
                + "--camera-path the report and a row per frame)."))
    var json = false

    @Flag(help: "Measure the camera's shake and choose the path --stabilize would follow.")
    var cameraPath = false

    @OptionGroup(title: "Camera path") var path: CameraPathOptions

    @Option(name: .setting(.aspect), help: .setting(.aspect)) var aspect: String?
    @Option(name: .setting(.follow), help: .setting(.follow), completion: .setting(.follow)) var follow: String?
    @Option(name: .setting(.zoom), help: .setting(.zoom)) var zoom: String?

    func validate() throws {
        if cameraPath && follow != nil { throw ValidationError("--camera-path and --follow: one path at a time") }
        if follow == nil && (aspect != nil || zoom != nil) {
            throw ValidationError("--aspect and --zoom need --follow")
        }
        if !cameraPath && follow == nil && path.given {
            throw ValidationError("--path-out and --stabilize-* need --camera-path (or --path-out, --follow)")
        }
        if follow != nil && (path.smoothing != nil || path.mode != nil || path.crop != nil) {
            throw ValidationError("--stabilize-* go with --camera-path, not --follow")
        }
    }

    func run() throws {
        if cameraPath { return try runCameraPath() }
        if follow != nil { return try runFollow() }
        let r = try reportingErrors { () throws(CropZoomError) in try MotionAnalysis.analyze(input) }
        if json {
            print(try snakeCaseJSON(r, pretty: false), terminator: "")
        } else {
            print(
                String(
                    format:
                        "%@: %d frames, mean velocity (%.4f, %.4f) px/frame, jitter %.4f px/frame² mean, %.4f max, "
                        + "%d backward step%@",
                    input, r.frames, r.velocityMean[0], r.velocityMean[1], r.jitterMean, r.jitterMax, r.backwardSteps,
                    r.backwardSteps == 1 ? "" : "s"))
        }
    }

    private func runCameraPath() throws {
        let config = try reportingErrors { () throws(CropZoomError) in
            var c = try path.settings.configuration(input: input, output: "")
            c.overwrite = path.overwrite
            return c
        }
        let found = try Self.analyse(config) { job async throws(CropZoomError) in try await job.cameraPath() }
        guard let found else {
            if json { print("{\"camera_path\":null}") } else { print("\(input): no camera path") }
            return
        }
        let r = CameraPathReport(found)
        if json {
            print(try snakeCaseJSON(CameraPathJSON(found, report: r), pretty: false), terminator: "")
        } else {
            print(
                String(
                    format:
                        "%@: %d frames; camera jitter %.3f px/frame², %.4f °/frame²; stabilised path %.3f px/frame², "
                        + "%.4f °/frame²; zoom up to %.3f (kept area %.3f); largest correction %.1f px, %.2f°%@",
                    input, r.frames, r.cameraJitterPx, r.cameraJitterDeg, r.pathJitterPx, r.pathJitterDeg, r.zoom,
                    r.keptArea, r.maxCorrectionPx, r.maxCorrectionDeg,
                    r.unmeasured > 0 ? "; \(r.unmeasured) frames bridged (no texture)" : ""))
        }
    }
}

extension AnalyzeMotion {
    private func runFollow() throws {
        let config = try reportingErrors { () throws(CropZoomError) in
            var c = try Settings([.aspect: aspect, .follow: follow, .zoom: zoom, .pathOut: path.pathOut])
                .configuration(input: input, output: "")
            c.overwrite = path.overwrite
            return c
        }
        let found = try Self.analyse(config) { job async throws(CropZoomError) in try await job.reframePath() }
        guard let found else {
            if json { print("{\"reframe_path\":null}") } else { print("\(input): no window path") }
            return
        }
        let r = ReframeReport(found)
        if json {
            print(try snakeCaseJSON(ReframeJSON(found, report: r), pretty: false), terminator: "")
        } else {
            let signals = r.signals.keys.sorted().map { "\($0) \(r.signals[$0]!)" }.joined(separator: ", ")
            print(
                String(
                    format: "%@: %d frames; window %.0fx%.0f of the %dx%d picture; a subject in %d frames (%@); "
                        + "%d cut%@; path jitter %.3f px/frame², fastest move %.0f px/s",
                    input, r.frames, r.windowWidth, r.windowHeight, r.width, r.height, r.subjectFrames,
                    signals.isEmpty ? "none" : signals, r.cuts, r.cuts == 1 ? "" : "s", r.jitterPx,
                    r.fastestPxPerSecond))
        }
    }
}

/// `--follow --json`: the report and a row per frame.
private struct ReframeJSON: Encodable {
    struct Row: Encodable {
        var time: Double
        /// The window: x, y, width, height (upright px).
        var window: [Double]
        var cut: Bool
        var signal: String
        /// The subject's box, or nil.
        var subject: [Double]?
    }
    var report: ReframeReport
    var frames: [Row]

    init(_ p: ReframePath, report: ReframeReport) {
        self.report = report
        frames = p.samples.map { s in
            Row(
                time: s.time, window: [s.x, s.y, s.width, s.height], cut: s.cut, signal: s.signal,
                subject: s.subject.map { [$0.x, $0.y, $0.width, $0.height] })
        }
    }
}

/// `--camera-path`'s options: the stabiliser's refinements and where the path goes.
struct CameraPathOptions: ParsableArguments {
    @Option(name: .setting(.stabilizeSmoothing), help: .setting(.stabilizeSmoothing)) var smoothing: String?
    @Option(name: .setting(.stabilizeMode), help: .setting(.stabilizeMode), completion: .setting(.stabilizeMode))
    var mode: String?
    @Option(name: .setting(.stabilizeCrop), help: .setting(.stabilizeCrop)) var crop: String?
    @Option(name: .setting(.pathOut), help: .setting(.pathOut), completion: .file(extensions: ["csv"]))
    var pathOut: String?
    @Flag(name: [.customShort("y"), .customLong("overwrite")], help: "Replace an existing --path-out file.")
    var overwrite = false

    var given: Bool { smoothing != nil || mode != nil || crop != nil || pathOut != nil }

    var settings: Settings {
        Settings([
            .stabilize: "true", .stabilizeSmoothing: smoothing, .stabilizeMode: mode, .stabilizeCrop: crop,
            .pathOut: pathOut,
        ])
    }
}

/// `--camera-path --json`: the report and a row per frame.
private struct CameraPathJSON: Encodable {
    struct Row: Encodable {
        var time: Double
        var measured: Bool
        /// Where the frame's centre is in the first frame's pixels (x, y) and its turn (°).
        var camera: [Double]
        /// The correction: x, y (px), angle (°), zoom.
        var correction: [Double]
        /// The stabilised camera: x, y, angle.
        var path: [Double]
    }
    var report: CameraPathReport
    var width: Int
    var height: Int
    var frames: [Row]

    init(_ p: CameraPath, report: CameraPathReport) {
        self.report = report
        width = p.width
        height = p.height
        frames = zip(p.samples, zip(p.camera, p.stabilised)).map { s, m in
            let (c, q) = m
            return Row(
                time: s.time, measured: s.measured, camera: [c.tx, c.ty, c.degrees],
                correction: [s.correction.tx, s.correction.ty, s.correction.degrees, 1 / s.correction.scale],
                path: [q.tx, q.ty, q.degrees])
        }
    }
}

/// The result of the analysis run on a task, read by the thread that waited for it.
///
/// `@unchecked Sendable`: written once by the task before it signals, read after the wait.
private final class PathOutcome<Value: Sendable>: @unchecked Sendable {
    var result: Result<Value, CropZoomError>?
}

extension AnalyzeMotion {
    /// Runs `analysis` (a `TranscodeJob`'s analysis alone) for `config` on a task, its notices to stderr as they come,
    /// and waits for it: its result, or its error written as one line and thrown as the exit code.
    fileprivate static func analyse<Value: Sendable>(
        _ config: TranscodeConfiguration,
        _ analysis: @escaping @Sendable (TranscodeJob) async throws(CropZoomError) -> Value
    ) throws -> Value {
        let job = TranscodeJob(configuration: config, naming: \.flag)
        let outcome = PathOutcome<Value>()
        let done = DispatchSemaphore(value: 0)
        Task {
            let printing = Task {
                for await event in job.events {
                    if case .notice(let text) = event { Stderr.write("cropzoom: note: \(text)\n") }
                }
            }
            do throws(CropZoomError) {
                outcome.result = .success(try await analysis(job))
            } catch {
                outcome.result = .failure(error)
            }
            await printing.value
            done.signal()
        }
        done.wait()
        switch outcome.result! {
        case .success(let value): return value
        case .failure(let error):
            Stderr.write("cropzoom: error: \(error.description(naming: \.flag))\n")
            throw ExitCode(error.exitCode)
        }
    }
}
