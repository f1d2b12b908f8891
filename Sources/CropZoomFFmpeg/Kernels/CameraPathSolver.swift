import CCameraPath
import CropZoomCore

/// The L1-optimal camera path of `--stabilize` (CCameraPath's `cz_path_solve`: a linear programme solved by its own
/// banded barrier method): per frame the correction B_t that makes the camera P_t = M_t ∘ B_t move in static,
/// constant-speed and eased pieces, inside the room a zoom of at most `maxZoom` leaves, the zoom itself slowly varying.
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
        /// The largest zoom a frame's correction applies.
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
    /// The zoom per frame (`area_weight`): the reward per pixel of the window's half diagonal kept and per frame, and
    /// the most the zoom may fall in a second (it may grow `CZ_PATH_ZOOM_IN_FACTOR` times as fast). Chosen end to end
    /// on the shake.py clips against vid.stab (docs/design/stabilize.md, "The kept area"): 20 and 3 % kept
    /// 0.929-0.937 of the picture (vid.stab's best: 0.905-0.934) at 0.032-0.066 px/frame² (the crop rule's one zoom:
    /// 0.906-0.929 at 0.046-0.073); the zoom moves within about 2 %, where vid.stab's adaptive zoom may move 7.5 % a
    /// second.
    package static let areaWeight = 20.0
    package static let zoomRate = 0.03

    /// The path and its zoom per frame (`cz_path_solve` with `area_weight`): each frame zoomed between 1 and `maxZoom`,
    /// as little as the steadiness allows, the zoom changing slowly (``zoomRate``); ``Solution/zoom`` is the largest.
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
        let status = motion.withUnsafeBufferPointer { m in
            valid.withUnsafeBufferPointer { v in
                p.durations.withUnsafeBufferPointer { d in
                    var problem = programme(
                        frames: n, motion: m, valid: v, duration: d, width: p.width, height: p.height,
                        tripod: p.tripod, hold: p.hold, zoom: p.maxZoom, areaWeight: areaWeight)
                    return cz_path_solve(&problem, &out, &stats)
                }
            }
        }
        guard status >= 0 else { throw failure(status) }
        let corrections = (0..<n).map { i in
            Similarity(a: out[4 * i], b: out[4 * i + 1], tx: out[4 * i + 2], ty: out[4 * i + 3])
        }
        let zoom = corrections.map { 1 / max(1e-9, $0.a) }.max() ?? 1
        return Solution(
            corrections: corrections, zoom: zoom, violation: stats.violation)
    }

    /// The programme of `frames` frames (n x 4 motions, the validity and durations borrowed) with cropzoom's weights
    /// (`cz_path_defaults`, then the paper's w1-w3, ``rotationWeight``, ``squaredWeight``): the zoom at most `zoom`,
    /// free per frame when `areaWeight` > 0 (rewarded that much, its speed bounded by ``zoomRate``), else fixed there.
    static func programme(
        frames: Int, motion: UnsafeBufferPointer<Double>, valid: UnsafeBufferPointer<UInt8>,
        duration: UnsafeBufferPointer<Double>, width: Double, height: Double, tripod: Bool, hold: Double,
        zoom: Double, areaWeight: Double
    ) -> cz_path_problem {
        var problem = cz_path_problem()
        cz_path_defaults(&problem)
        problem.n = Int32(frames)
        problem.motion = motion.baseAddress
        problem.valid = valid.baseAddress
        problem.duration = duration.baseAddress
        problem.width = width
        problem.height = height
        problem.w1 = weights.w1
        problem.w2 = weights.w2
        problem.w3 = weights.w3
        problem.hold = hold
        problem.mode = tripod ? 1 : 0
        problem.affine_weight = rotationWeight
        problem.smooth2 = squaredWeight
        problem.crop = max(1, zoom)
        problem.area_weight = max(0, areaWeight)
        problem.zoom_rate = areaWeight > 0 ? zoomRate : 0
        return problem
    }

    /// A failed solve (`cz_path_solve` / `cz_path_solve_after` below 0).
    static func failure(_ status: Int32) -> CropZoomError {
        CropZoomError(
            .processing, what: "stabilising",
            reason: "the camera path could not be solved (\(status == -2 ? "out of memory" : "solver error"))")
    }
}

/// The camera path of a live recording (`--stabilize` with a live source): causal, with a bounded look-ahead. Frames
/// arrive with their motion; each frame's correction is fixed when the frame leaves the look-ahead, by solving the
/// same L1 programme as the file's (``CameraPathSolver``) over the window of the three frames already shown (fixed:
/// they carry the first to third differences on), the frame itself and the frames that arrived after it
/// (`cz_path_solve_after`, a receding horizon). The zoom is free per frame up to `zoom` when `areaWeight` > 0 (as the
/// file's, at most ``CameraPathSolver/zoomRate`` a second), else fixed at `zoom`.
///
/// The window's arrays and the solver's workspace are made once (`cz_path_workspace_new` / `_free`): nothing is
/// allocated per frame.
///
/// `@unchecked Sendable`: used by one thread (the live stabiliser's).
package final class LiveCameraPathSolver: @unchecked Sendable {
    private let workspace: OpaquePointer
    /// Frames in the window at most: three shown, the one to fix, the look-ahead.
    package let capacity: Int
    private let zoom: Double
    private let width: Double, height: Double
    private let tripod: Bool
    private let hold: Double
    private let areaWeight: Double
    // The window, oldest first: `count` frames, the first `fixed` of them already shown.
    private var motion: [Double]
    private var correction: [Double]
    private var duration: [Double]
    private var valid: [UInt8]
    private var time: [Double]
    private var count = 0
    private var fixed = 0

    /// The reward for the area kept of a live path whose look-ahead is `lookahead` seconds: an eighth of the file's
    /// (``CameraPathSolver/areaWeight``) from half a second on, less below, 0 (the zoom fixed) under a quarter of a
    /// second. Measured on the shake.py clips (Benchmarks/results/stabilize-live.md): with 15 frames of look-ahead an
    /// eighth kept 0.903-0.927 of the picture (the fixed crop: 0.826) within 10 % of the file's jitter, and streamed
    /// over UDP the pan at 0.059 px/frame² (a quarter: 0.079; the fixed crop: 0.068); with 5 frames the free zoom's
    /// jitter was 10-25 % above the fixed crop's, with 8 at or below.
    package static func areaWeight(lookahead: Double) -> Double {
        lookahead < 0.25 ? 0 : CameraPathSolver.areaWeight / 8 * min(1, lookahead / 0.5)
    }

    /// `lookahead`: frames that may wait after the one being fixed (at least 0). `hold`: as
    /// ``CameraPathSolver/Problem/hold``. `areaWeight` > 0: the zoom free per frame up to `zoom`, rewarded this much
    /// for the area it keeps (``areaWeight(lookahead:)``); 0: fixed at `zoom`.
    package init(
        width: Int, height: Int, zoom: Double, lookahead: Int, tripod: Bool, hold: Double, areaWeight: Double = 0
    ) throws(CropZoomError) {
        capacity = 3 + 1 + max(0, lookahead)
        guard let w = cz_path_workspace_new(Int32(capacity)) else {
            throw CropZoomError(.processing, what: "stabilising", reason: "out of memory")
        }
        workspace = w
        self.zoom = max(1, zoom)
        self.width = Double(width)
        self.height = Double(height)
        self.tripod = tripod
        self.hold = hold
        self.areaWeight = max(0, areaWeight)
        motion = [Double](repeating: 0, count: 4 * capacity)
        correction = [Double](repeating: 0, count: 4 * capacity)
        duration = [Double](repeating: 1.0 / 30, count: capacity)
        valid = [UInt8](repeating: 1, count: capacity)
        time = [Double](repeating: 0, count: capacity)
    }

    deinit { cz_path_workspace_free(workspace) }

    /// Frames waiting for their correction.
    package var pending: Int { count - fixed }

    /// Whether the look-ahead is full: the oldest waiting frame must be fixed (``fixNext()``) before another is added.
    package var isFull: Bool { pending >= capacity - 3 }

    /// A frame arrived at media time `time`: `motion` F_t from the frame before it (ignored for the first),
    /// `measured` false where it could not be measured. Precondition: not ``isFull``.
    package func append(time t: Double, motion f: Similarity, measured: Bool) {
        precondition(!isFull && count < capacity, "the live path's look-ahead is full")
        let i = count
        motion[4 * i] = f.a
        motion[4 * i + 1] = f.b
        motion[4 * i + 2] = f.tx
        motion[4 * i + 3] = f.ty
        valid[i] = measured ? 1 : 0
        time[i] = t
        if i > 0 { duration[i - 1] = max(1e-4, t - time[i - 1]) }
        duration[i] = i > 0 ? duration[i - 1] : 1.0 / 30
        correction[4 * i] = 1 / zoom
        correction[4 * i + 1] = 0
        correction[4 * i + 2] = 0
        correction[4 * i + 3] = 0
        count += 1
    }

    /// Fixes the oldest waiting frame's correction B_t with what has arrived after it, and returns its time and B_t
    /// (nil when none waits).
    package func fixNext() throws(CropZoomError) -> (time: Double, correction: Similarity)? {
        guard fixed < count else { return nil }
        let n = count
        let nfix = fixed
        let status = motion.withUnsafeBufferPointer { m in
            valid.withUnsafeBufferPointer { v in
                duration.withUnsafeBufferPointer { d in
                    correction.withUnsafeMutableBufferPointer { b in
                        var problem = CameraPathSolver.programme(
                            frames: n, motion: m, valid: v, duration: d, width: width, height: height,
                            tripod: tripod, hold: hold, zoom: zoom, areaWeight: areaWeight)
                        return cz_path_solve_after(&problem, Int32(nfix), b.baseAddress, workspace, nil)
                    }
                }
            }
        }
        guard status == 0 else { throw CameraPathSolver.failure(status) }
        let i = fixed
        let b = Similarity(
            a: correction[4 * i], b: correction[4 * i + 1], tx: correction[4 * i + 2], ty: correction[4 * i + 3])
        let t = time[i]
        fixed += 1
        if fixed > 3 { dropOldest() }
        return (t, b)
    }

    /// The window slides by one: the oldest shown frame leaves it (three stay).
    private func dropOldest() {
        for i in 1..<count {
            for k in 0..<4 {
                motion[4 * (i - 1) + k] = motion[4 * i + k]
                correction[4 * (i - 1) + k] = correction[4 * i + k]
            }
            duration[i - 1] = duration[i]
            valid[i - 1] = valid[i]
            time[i - 1] = time[i]
        }
        count -= 1
        fixed -= 1
    }
}
