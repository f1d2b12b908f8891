import CropZoomFFmpeg

/// `batch --dry-run` and ``TranscodeJob/plan()``: the job set up as for real (the input opened, the geometry, codecs
/// and routes decided), nothing written, described.
extension JobRunner {
    /// What `run` would do, without doing it: the input is opened and the geometry, codecs and
    /// stream routes decided as for the real job, nothing is written (`batch --dry-run`).
    func plan() throws(CropZoomError) -> JobPlan {
        var cfg = configuration
        cfg.null = true
        FFmpegLog.install(verbose: cfg.verbose)
        var notices: [String] = []
        if let reference = cfg.reference, cfg.input != "-", case .indexless? = try? RepairSetup.triage(cfg.input) {
            // Nothing is repaired in a plan: the reference (same camera, same settings) stands in for the input.
            notices.append(
                "\(cfg.inputName) has no index (moov): planned from \(reference), its \(setting: .reference)")
            cfg.input = reference
        }
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
}
