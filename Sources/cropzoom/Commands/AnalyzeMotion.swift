import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom analyze-motion INPUT [--json]`: how steadily the picture moves (pans of static
/// content), so anyone can check a zoom/pan for jitter.
struct AnalyzeMotion: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze-motion",
        abstract:
            "Measure how steadily the picture moves: velocity, jitter (px/frame²) and backward steps, frame to frame.",
        discussion:
            "Meant for pans and slow zooms of static content. Exit codes: 0 ok, 2 bad usage, 3 input unreadable.")

    @Argument(help: "The video to measure.")
    var input: String

    @Flag(help: "Print JSON (frames, velocity_mean, jitter_mean, jitter_max, backward_steps, velocities).")
    var json = false

    func run() throws {
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
}
