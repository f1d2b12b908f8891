import CCameraPath
import CropZoomCore

/// The L1-optimal camera path of `--stabilize` (CCameraPath's `cz_path_choose`: a linear programme solved by its own
/// banded barrier method, bisecting for the crop): per frame the correction B_t that makes the camera P_t = M_t ∘ B_t move in
/// static, constant-speed and eased pieces, inside the room a crop of at most `maxZoom` leaves.
package enum CameraPathSolver {
    package struct Problem: Sendable {
        /// F_t per frame (row 0 ignored), full-resolution centred coded pixels.
        package var motions: [Similarity]
        /// False where the motion is unknown (no texture): no smoothness cost across it.
        package var measured: [Bool]
        /// Seconds from each frame to the next (VFR: derivatives per time).
        package var durations: [Double]
        package var width: Double, height: Double
        package var tripod: Bool
        /// Cost per pixel and second of a correction held (`w1 / --stabilize-smoothing`); 0: none.
        package var hold: Double
        package var maxZoom: Double

        package init(
            motions: [Similarity], measured: [Bool], durations: [Double], width: Double, height: Double,
            tripod: Bool, hold: Double, maxZoom: Double
        ) {
            self.motions = motions
            self.measured = measured
            self.durations = durations
            self.width = width
            self.height = height
            self.tripod = tripod
            self.hold = hold
            self.maxZoom = maxZoom
        }
    }

    package struct Solution: Sendable {
        /// B_t per frame.
        package var corrections: [Similarity]
        /// The crop zoom chosen.
        package var zoom: Double
        /// The farthest (px) a corner of the window leaves its frame; 0 when the path stays inside.
        package var violation: Double
    }

    /// The paper's weights of the path's first, second and third differences.
    package static let weights = (w1: 10.0, w2: 1.0, w3: 100.0)
    /// The turn's weight against the moves (as the corner displacement it causes), and the weight of the squared
    /// second differences added to the L1 programme: chosen on the shake.py clips, where the pure L1 path (0.8, 0)
    /// left 0.030 °/frame² of turn jitter at 0.042 px/frame², a heavier turn alone traded it for four times the
    /// move jitter (1.1: 0.009 °, 0.160 px), and the squared term spreads the L1 path's corners over frames, which
    /// lowers both (1.2 and 3000: 0.0083 °, 0.071 px on the static clip; docs/design/stabilize.md).
    package static let rotationWeight = 1.2
    package static let squaredWeight = 3000.0

    /// Chooses the least zoom up to `maxZoom` beyond which the path gets no materially steadier (all but 0.5 % of
    /// the steadiness the largest crop buys, `CZ_PATH_CHOOSE_EPSILON`), and that zoom's path (`cz_path_choose`).
    package static func choose(_ p: Problem) throws(CropZoomError) -> Solution {
        let n = p.motions.count
        var motion = [Double](repeating: 0, count: 4 * n)
        for (i, m) in p.motions.enumerated() {
            motion[4 * i] = m.a
            motion[4 * i + 1] = m.b
            motion[4 * i + 2] = m.tx
            motion[4 * i + 3] = m.ty
        }
        let valid = p.measured.map { UInt8($0 ? 1 : 0) }
        var out = [Double](repeating: 0, count: 4 * n)
        var stats = cz_path_stats()
        var zoom = p.maxZoom
        let status = motion.withUnsafeBufferPointer { m in
            valid.withUnsafeBufferPointer { v in
                p.durations.withUnsafeBufferPointer { d in
                    var problem = cz_path_problem()
                    cz_path_defaults(&problem)
                    problem.n = Int32(n)
                    problem.motion = m.baseAddress
                    problem.valid = v.baseAddress
                    problem.duration = d.baseAddress
                    problem.width = p.width
                    problem.height = p.height
                    problem.w1 = weights.w1
                    problem.w2 = weights.w2
                    problem.w3 = weights.w3
                    problem.hold = p.hold
                    problem.mode = p.tripod ? 1 : 0
                    problem.affine_weight = rotationWeight
                    problem.smooth2 = squaredWeight
                    return cz_path_choose(&problem, p.maxZoom, CZ_PATH_CHOOSE_EPSILON, &out, &stats, &zoom)
                }
            }
        }
        guard status >= 0 else {
            throw CropZoomError(
                .processing, what: "stabilising",
                reason: "the camera path could not be solved (\(status == -2 ? "out of memory" : "solver error"))")
        }
        let corrections = (0..<n).map { i in
            Similarity(a: out[4 * i], b: out[4 * i + 1], tx: out[4 * i + 2], ty: out[4 * i + 3])
        }
        return Solution(
            corrections: corrections, zoom: zoom, violation: stats.violation)
    }
}
