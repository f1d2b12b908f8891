import CropZoomFFmpeg
import Foundation

/// `--stabilize` for one job: the camera path its render follows. The input is analysed (``MotionPass``) or the
/// path read (`--path-in`), the path chosen (``CameraPathSolver``), written (`--path-out`) and handed to the
/// geometry's warp. Where no path can be found (one frame, no texture at all) a notice says so and the output is
/// rendered as recorded: never a failure, never a changed frame count.
enum Stabilizer {
    /// What the analysis found: the path (nil: none could be found, the notice says why) and its notices.
    struct Outcome {
        var path: CameraPath?
        var notices: [String]
    }

    /// Checks what can be checked before anything is read: an input that can be read twice, a `--path-out` that
    /// replaces nothing the user has (unless the output may be replaced).
    static func check(_ cfg: TranscodeConfiguration) throws(CropZoomError) {
        guard let s = cfg.stabilize else { return }
        if cfg.isLive {
            // A causal path, made as the frames arrive (LiveStabilizer): no file of the whole path to read or write.
            if s.pathIn != nil || s.pathOut != nil {
                throw CropZoomError(
                    .usage, path: cfg.inputName, setting: s.pathIn != nil ? .pathIn : .pathOut,
                    reason: "a live recording's camera path is made as it records: \(setting: .pathIn) and "
                        + "\(setting: .pathOut) are for files (record, then analyse the file)")
            }
            return
        }
        if cfg.input == "-" && s.pathIn == nil {
            throw CropZoomError(
                .usage, path: "stdin", setting: .stabilize,
                reason: "\(setting: .stabilize) reads the input twice (analysis, then render): name a file, not -")
        }
        if let out = s.pathOut, !cfg.overwrite, FileManager.default.fileExists(atPath: out) {
            throw CropZoomError(
                .usage, path: out, setting: .pathOut, reason: "already exists (use -y to overwrite)")
        }
    }

    /// The path `cfg` asks for: given (``Stabilization/path``), read from `--path-in`, or measured and chosen (the
    /// input opened once more for the analysis, sought as the render will be). `progress` (frames, media seconds)
    /// during the analysis.
    static func path(
        _ cfg: TranscodeConfiguration, cancel: CancelFlag, progress: ((Int, Double) -> Void)?
    ) throws(CropZoomError) -> Outcome {
        guard let s = cfg.stabilize else { return Outcome(path: nil, notices: []) }
        if let given = s.path { return Outcome(path: given, notices: []) }
        if let file = s.pathIn {
            let text: String
            do { text = try String(contentsOfFile: file, encoding: .utf8) } catch {
                throw CropZoomError(.inputUnreadable, path: file, setting: .pathIn, reason: "cannot be read")
            }
            do throws(CameraPathError) { return Outcome(path: try CameraPath(csv: text), notices: []) } catch {
                throw CropZoomError(
                    .usage, path: file, setting: .pathIn,
                    reason: "\(error.line > 0 ? "line \(error.line): " : "")\(error.reason)")
            }
        }
        let source = try InputSetup(cfg)
        let trim = try TrimWindow(cfg, input: source.input, videoIndex: source.videoIndex)
        let shift = trim.times.map { Double($0.shift[source.videoIndex]) } ?? 0
        let pass = MotionPass(
            configuration: cfg, source: source,
            timeOffset: shift * source.decoder.timeBase.seconds + trim.startTime,
            end: cfg.end.map { $0 - (cfg.start ?? 0) }, cancel: cancel)
        let measured = try pass.run(progress: progress)
        var outcome = plan(
            measured.samples, width: measured.width, height: measured.height, pixelAspect: measured.pixelAspect,
            cfg: cfg)
        if let path = outcome.path, let out = s.pathOut {
            try AtomicFile.write(Data(path.csv().utf8), to: out)
            outcome.notices.append("\(cfg.inputName): camera path written to \(out)")
        }
        return outcome
    }

    /// A path is for one picture size and pixel aspect: the input's.
    static func check(
        _ path: CameraPath, size: (width: Int, height: Int), pixelAspect: Double, cfg: TranscodeConfiguration
    ) throws(CropZoomError) {
        guard path.width == size.width, path.height == size.height else {
            throw CropZoomError(
                .usage, path: cfg.stabilize?.pathIn ?? cfg.inputName, setting: .pathIn,
                reason: "the camera path is for a \(path.width)x\(path.height) picture; the input's is "
                    + "\(size.width)x\(size.height)")
        }
        guard abs(path.pixelAspect - pixelAspect) < 1e-6 * pixelAspect else {
            throw CropZoomError(
                .usage, path: cfg.stabilize?.pathIn ?? cfg.inputName, setting: .pathIn,
                reason: "the camera path is for pixels of aspect \(String(format: "%.6g", path.pixelAspect)); the "
                    + "input's are \(String(format: "%.6g", pixelAspect))")
        }
    }

    /// The path through `samples` (the analysis' motions, in square pixels of a `width` x `height` coded picture whose
    /// pixels are `pixelAspect` wide) as `cfg.stabilize` asks, or nil with the reason.
    static func plan(
        _ samples: [MotionPass.Sample], width: Int, height: Int, pixelAspect: Double = 1, cfg: TranscodeConfiguration
    ) -> Outcome {
        guard let s = cfg.stabilize else { return Outcome(path: nil, notices: []) }
        let name = cfg.inputName
        func none(_ why: String) -> Outcome {
            Outcome(path: nil, notices: ["\(name): \(why): the output is not stabilised (\(setting: .stabilize))"])
        }
        guard samples.count >= 2 else {
            return none("\(samples.count) frame\(samples.count == 1 ? "" : "s"): there is no motion to steady")
        }
        let measured = samples.dropFirst().filter(\.measured).count
        guard measured > 0 else { return none("no frame has texture enough to measure the camera's motion") }
        var durations = zip(samples, samples.dropFirst()).map { max(1e-4, $1.time - $0.time) }
        durations.append(durations.last ?? 1 / 30)
        let problem = CameraPathSolver.Problem(
            motions: samples.map(\.motion), measured: samples.map(\.measured), durations: durations,
            width: Double(width) * pixelAspect, height: Double(height), tripod: s.mode == .tripod,
            hold: s.smoothing.map { CameraPathSolver.weights.w1 / $0 } ?? 0, maxZoom: s.maxZoom)
        let solution: CameraPathSolver.Solution
        do throws(CropZoomError) { solution = try CameraPathSolver.choose(problem) } catch {
            return none(error.reason)
        }
        var notices: [String] = []
        let unmeasured = samples.count - 1 - measured
        if unmeasured > 0 {
            notices.append(
                "\(name): \(unmeasured) frame\(unmeasured == 1 ? "" : "s") without texture enough to measure the "
                    + "motion (black, a fade): the path is bridged there")
        }
        if solution.violation > 0.5 && s.border == .crop {
            notices.append(
                "\(name): the shake needs more room than \(setting: .stabilizeCrop) "
                    + String(format: "%g gives: borders of up to %.0f px show at times", s.maxZoom, solution.violation))
        }
        var corrections = solution.corrections
        if s.border == .fill {
            // The same path at the picture's own scale, the corners left to the background.
            corrections = corrections.map(\.atOwnScale)
        }
        let path = CameraPath(
            width: width, height: height, pixelAspect: pixelAspect,
            samples: zip(samples, corrections).map {
                CameraPath.Sample(time: $0.time, motion: $0.motion, measured: $0.measured, correction: $1)
            })
        return Outcome(path: path, notices: notices)
    }
}
