import CCameraPath
import CropZoomCore

/// One axis of `--follow`'s window path (`cz_frame_solve`, CCameraPath's framepath.c): the L1 path of holds, pans
/// and eases that keeps the subject near the window's middle.
package enum FramePathSolver {
    /// One axis' problem: per frame the position that centres the subject (NaN: none), its weight, the range the
    /// subject inside the window allows (NaN: none), where cuts are, and the frames' durations.
    package struct Problem {
        package var lo: Double, hi: Double
        package var target: [Double]
        package var weight: [Double]
        package var insideLo: [Double]
        package var insideHi: [Double]
        package var cut: [Bool]
        package var durations: [Double]
        /// px around the target that cost nothing.
        package var deadZone: Double
        /// px per second and per second², 0: none.
        package var maxSpeed: Double
        package var maxAcceleration: Double
        /// A live path: the first frames' positions, already shown (not unknowns).
        package var fixed: [Double] = []
        /// The third differences' weight (nil: the camera path's, 100).
        package var jerkWeight: Double? = nil

        package init(
            lo: Double, hi: Double, target: [Double], weight: [Double], insideLo: [Double], insideHi: [Double],
            cut: [Bool], durations: [Double], deadZone: Double, maxSpeed: Double, maxAcceleration: Double
        ) {
            self.lo = lo
            self.hi = hi
            self.target = target
            self.weight = weight
            self.insideLo = insideLo
            self.insideHi = insideHi
            self.cut = cut
            self.durations = durations
            self.deadZone = deadZone
            self.maxSpeed = maxSpeed
            self.maxAcceleration = maxAcceleration
        }
    }

    /// The path (`cz_frame_solve` in a ``Workspace`` of the problem's size), a position per frame (the shown ones
    /// as given); nil when the solver failed.
    package static func solve(_ q: Problem) -> [Double]? {
        let n = q.target.count
        guard n > 0, [q.weight, q.insideLo, q.insideHi, q.durations].allSatisfy({ $0.count == n }), q.cut.count == n,
            let w = Workspace(capacity: n)
        else { return nil }
        for i in 0..<n {
            w.target[i] = q.target[i]
            w.weight[i] = q.weight[i]
            w.insideLo[i] = q.insideLo[i]
            w.insideHi[i] = q.insideHi[i]
            w.durations[i] = q.durations[i]
            w.cut[i] = q.cut[i] ? 1 : 0
            w.fixed[i] = i < q.fixed.count ? q.fixed[i] : 0
        }
        guard
            w.solve(
                count: n, fixed: q.fixed.count, lo: q.lo, hi: q.hi, deadZone: q.deadZone, maxSpeed: q.maxSpeed,
                maxAcceleration: q.maxAcceleration, jerkWeight: q.jerkWeight)
        else { return nil }
        return Array(w.solution[0..<n])
    }
}

extension FramePathSolver {
    /// A live path's solver: one problem per frame over the same few dozen frames, in memory taken once
    /// (`cz_frame_work_new`; `cz_frame_solve` per call, which allocates nothing). The caller fills the per-frame
    /// arrays in place, the first `count` entries, then calls ``solve(count:fixed:lo:hi:deadZone:maxSpeed:maxAcceleration:jerkWeight:)``.
    package final class Workspace {
        package let capacity: Int
        /// Per frame, as ``Problem``'s arrays (the first `count` entries are read).
        package let target: UnsafeMutableBufferPointer<Double>
        package let insideLo: UnsafeMutableBufferPointer<Double>
        package let insideHi: UnsafeMutableBufferPointer<Double>
        package let durations: UnsafeMutableBufferPointer<Double>
        /// The shown frames' positions (the first `fixed` entries).
        package let fixed: UnsafeMutableBufferPointer<Double>
        /// 1 where a cut comes before the frame.
        package let cut: UnsafeMutableBufferPointer<UInt8>
        /// The target's weight per frame (1 unless set).
        package let weight: UnsafeMutableBufferPointer<Double>
        /// The solved positions.
        package let solution: UnsafeMutableBufferPointer<Double>
        private let work: OpaquePointer

        /// Memory for problems of up to `capacity` frames (`cz_frame_work_new`); nil when out of memory.
        package init?(capacity: Int) {
            guard capacity > 0, let work = cz_frame_work_new(Int32(capacity)) else { return nil }
            self.capacity = capacity
            self.work = work
            func doubles(_ value: Double) -> UnsafeMutableBufferPointer<Double> {
                let b = UnsafeMutableBufferPointer<Double>.allocate(capacity: capacity)
                b.initialize(repeating: value)
                return b
            }
            target = doubles(.nan)
            insideLo = doubles(.nan)
            insideHi = doubles(.nan)
            durations = doubles(1.0 / 30)
            fixed = doubles(0)
            solution = doubles(0)
            weight = doubles(1)
            cut = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
            cut.initialize(repeating: 0)
        }

        deinit {
            cz_frame_work_free(work)
            for b in [target, insideLo, insideHi, durations, fixed, solution, weight] { b.deallocate() }
            cut.deallocate()
        }

        /// Solves the first `count` frames, the first `fixed` of them shown (`cz_frame_solve`); the positions are
        /// in ``solution``. False when the solver failed (or `count` is out of range).
        package func solve(
            count: Int, fixed nfix: Int, lo: Double, hi: Double, deadZone: Double, maxSpeed: Double,
            maxAcceleration: Double, jerkWeight: Double? = nil
        ) -> Bool {
            guard count > 0 && count <= capacity else { return false }
            var p = cz_frame_problem()
            cz_frame_defaults(&p)
            p.n = Int32(count)
            p.lo = lo
            p.hi = hi
            p.target = UnsafePointer(target.baseAddress)
            p.weight = UnsafePointer(weight.baseAddress)
            p.inside_lo = UnsafePointer(insideLo.baseAddress)
            p.inside_hi = UnsafePointer(insideHi.baseAddress)
            p.cut = UnsafePointer(cut.baseAddress)
            p.duration = UnsafePointer(durations.baseAddress)
            p.dead_zone = deadZone
            p.max_speed = maxSpeed
            p.max_accel = maxAcceleration
            p.nfix = Int32(max(0, min(nfix, count)))
            p.fixed = UnsafePointer(fixed.baseAddress)
            if let w3 = jerkWeight { p.w3 = w3 }
            return cz_frame_solve(&p, solution.baseAddress, nil, work) == 0
        }
    }
}
