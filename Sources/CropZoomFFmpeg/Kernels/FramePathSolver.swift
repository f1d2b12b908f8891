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

    /// The path (`cz_frame_solve`), a position per frame (the shown ones as given); nil when the solver failed.
    package static func solve(_ q: Problem) -> [Double]? {
        let n = q.target.count
        guard n > 0, [q.weight, q.insideLo, q.insideHi, q.durations].allSatisfy({ $0.count == n }), q.cut.count == n
        else { return nil }
        var out = [Double](repeating: 0, count: n)
        let cuts = q.cut.map { $0 ? UInt8(1) : 0 }
        let fixed = q.fixed.isEmpty ? [0] : q.fixed
        let rc = q.target.withUnsafeBufferPointer { target in
            q.weight.withUnsafeBufferPointer { weight in
                q.insideLo.withUnsafeBufferPointer { lo in
                    q.insideHi.withUnsafeBufferPointer { hi in
                        cuts.withUnsafeBufferPointer { cut in
                            q.durations.withUnsafeBufferPointer { dur in
                                out.withUnsafeMutableBufferPointer { x in
                                    fixed.withUnsafeBufferPointer { shown in
                                        var p = cz_frame_problem()
                                        cz_frame_defaults(&p)
                                        p.n = Int32(n)
                                        p.lo = q.lo
                                        p.hi = q.hi
                                        p.target = target.baseAddress
                                        p.weight = weight.baseAddress
                                        p.inside_lo = lo.baseAddress
                                        p.inside_hi = hi.baseAddress
                                        p.cut = cut.baseAddress
                                        p.duration = dur.baseAddress
                                        p.dead_zone = q.deadZone
                                        p.max_speed = q.maxSpeed
                                        p.max_accel = q.maxAcceleration
                                        p.nfix = Int32(min(q.fixed.count, n))
                                        if let w3 = q.jerkWeight { p.w3 = w3 }
                                        p.fixed = shown.baseAddress
                                        return cz_frame_solve(&p, x.baseAddress, nil)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return rc == 0 ? out : nil
    }
}
