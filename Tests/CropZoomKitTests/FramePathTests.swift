import Foundation
import Testing

@testable import CropZoomCore
@testable import CropZoomFFmpeg

/// `--follow`'s window path (`cz_frame_solve` through ``FramePathSolver``) on made-up subjects: it holds still while
/// the subject wanders inside the dead zone, follows a move within its speed and acceleration bounds, keeps the
/// subject inside, stays inside the picture, and jumps at a cut instead of panning across it.
@Suite("Window path")
struct FramePathTests {
    /// A problem of `n` frames at 30 fps for a 404 px window in a 1280 px picture, the subject's centre `centre(i)`
    /// (a 120 px box), cuts before the frames in `cuts`.
    static func problem(_ n: Int, cuts: Set<Int> = [], centre: (Int) -> Double) -> FramePathSolver.Problem {
        let (ww, box) = (404.0, 120.0)
        let c = (0..<n).map(centre)
        return FramePathSolver.Problem(
            lo: 0, hi: 1280 - ww, target: c.map { min(max($0 - ww / 2, 0), 1280 - ww) },
            weight: [Double](repeating: 1, count: n),
            insideLo: c.map { $0 + box / 2 + 0.1 * box - ww }, insideHi: c.map { $0 - box / 2 - 0.1 * box },
            cut: (0..<n).map { cuts.contains($0) }, durations: [Double](repeating: 1.0 / 30, count: n),
            deadZone: 0.02 * ww, maxSpeed: 1.5 * 1280, maxAcceleration: 0.4 * 1280)
    }

    @Test("the subject wandering ±3 px and drifting 6 px, inside the dead zone: the window does not move at all")
    func holdsInsideTheDeadZone() throws {
        // A fixed pseudo-random wander (a hand-held face): within 3 px of 400.
        var state: UInt64 = 12345
        let wander = (0..<150).map { _ -> Double in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(Int(state >> 33) % 601 - 300) / 100
        }
        let x = try #require(FramePathSolver.solve(Self.problem(150) { 400 + wander[$0] + 6 * Double($0) / 149 }))
        let travel = zip(x, x.dropFirst()).map { abs($1 - $0) }.reduce(0, +)
        #expect(travel < 0.05, "the window travelled \(travel) px")
        #expect(abs(x[0] + 202 - 403) <= 8.1 + 6, "centred within the dead zone: \(x[0])")
    }

    @Test("a move: followed, the subject kept inside, speed and acceleration within their bounds, no reversal")
    func followsAMove() throws {
        // Holds at 300, moves to 900 over 1.5 s (smoothstep), holds.
        func centre(_ i: Int) -> Double {
            let u = min(1, max(0, (Double(i) - 60) / 45))
            return 300 + 600 * u * u * (3 - 2 * u)
        }
        let q = Self.problem(240, centre: centre)
        let x = try #require(FramePathSolver.solve(q))
        for i in x.indices {
            let c = centre(i)
            #expect(x[i] >= -1e-6 && x[i] <= 876 + 1e-6, "frame \(i): inside the picture")
            #expect(x[i] <= c - 60 + 1e-3 && x[i] + 404 >= c + 60 - 1e-3, "frame \(i): the subject inside")
        }
        let v = zip(x, x.dropFirst()).map { ($1 - $0) * 30 }
        let a = zip(v, v.dropFirst()).map { ($1 - $0) * 30 }
        #expect((v.map(abs).max() ?? 0) <= 1.5 * 1280 + 1e-3, "speed \(v.map(abs).max() ?? 0) px/s")
        #expect((a.map(abs).max() ?? 0) <= 0.4 * 1280 + 1, "acceleration \(a.map(abs).max() ?? 0) px/s²")
        #expect(v.allSatisfy { $0 >= -1e-3 }, "the window never moves back")
        #expect(abs(x[239] + 202 - 900) <= 8.1, "it ends centred on the subject: \(x[239])")
    }

    @Test("a cut: the window jumps there, and is still on both sides of it")
    func jumpsAtACut() throws {
        let x = try #require(FramePathSolver.solve(Self.problem(120, cuts: [60]) { $0 < 60 ? 250 : 1000 }))
        #expect(abs(x[59] - x[0]) < 1e-3 && abs(x[119] - x[60]) < 1e-3, "still within each shot")
        #expect(x[60] - x[59] > 500, "the jump: \(x[59]) → \(x[60])")
        // Without the cut the same subjects make a pan, not a jump.
        let pan = try #require(FramePathSolver.solve(Self.problem(120) { $0 < 60 ? 250 : 1000 }))
        #expect(pan[60] - pan[59] < 64.1, "a pan, at most the speed bound a frame: \(pan[60] - pan[59])")
    }

    @Test(
        """
        a live path in a workspace (its memory taken once): the same windows as a solve of its own, frame after \
        frame as the horizon recedes; a problem larger than the workspace is refused
        """)
    func workspaceMatchesASolveOfItsOwn() throws {
        let full = Self.problem(120) { i in i < 40 ? 400 : i < 60 ? 400 + 15 * Double(i - 40) : 700 }
        let solver = try #require(FramePathSolver.Workspace(capacity: 34))
        var shown: [Double] = []
        for t in 0..<90 {
            // Frames t-3 ..< t+30: three shown (fixed), the frame to fix, then the look-ahead.
            let from = max(0, t - 3)
            let range = from..<min(120, t + 31)
            var q = full
            q.target = Array(full.target[range])
            q.weight = Array(full.weight[range])
            q.insideLo = Array(full.insideLo[range])
            q.insideHi = Array(full.insideHi[range])
            q.cut = Array(full.cut[range])
            q.durations = Array(full.durations[range])
            q.fixed = Array(shown[from..<t])
            q.jerkWeight = 10
            let own = try #require(FramePathSolver.solve(q))
            for (k, i) in range.enumerated() {
                solver.target[k] = full.target[i]
                solver.insideLo[k] = full.insideLo[i]
                solver.insideHi[k] = full.insideHi[i]
                solver.durations[k] = full.durations[i]
                solver.cut[k] = full.cut[i] ? 1 : 0
                solver.fixed[k] = i < t ? shown[i] : 0
            }
            let solved = solver.solve(
                count: range.count, fixed: t - from, lo: full.lo, hi: full.hi, deadZone: full.deadZone,
                maxSpeed: full.maxSpeed, maxAcceleration: full.maxAcceleration, jerkWeight: 10)
            try #require(solved, "frame \(t)")
            #expect(abs(solver.solution[t - from] - own[t - from]) < 1e-9, "frame \(t)")
            shown.append(own[t - from])
        }
        // The window followed the move (it is not a path of zeros).
        #expect(shown[0] < 250 && shown[89] > 400, "\(shown[0]) → \(shown[89])")
        let tooMany = 35
        #expect(
            !solver.solve(
                count: tooMany, fixed: 0, lo: 0, hi: 876, deadZone: 8, maxSpeed: 1920, maxAcceleration: 512))
    }
}
