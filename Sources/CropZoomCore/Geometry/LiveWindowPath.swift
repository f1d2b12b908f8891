import Foundation
import Synchronization

/// A live recording's window path (`--follow` with a live source): the windows the live reframer has fixed, read by
/// the transform workers. Each frame's window is recorded before the frame is handed to the workers, so a worker
/// always finds the one for the frame it renders. Only the latest ``capacity`` are kept (a ring made once).
public final class LiveWindowPath: Sendable, Equatable {
    /// The window's size, upright px.
    public let width: Double, height: Double
    public let capacity: Int
    private struct Ring {
        var times: [Double]
        var xs: [Double]
        var ys: [Double]
        var next = 0
        var count = 0
    }
    private let ring: Mutex<Ring>
    /// Where the window rests before any is fixed (the middle).
    private let rest: (x: Double, y: Double)

    public init(width: Double, height: Double, restX: Double, restY: Double, capacity: Int = 1024) {
        self.width = width
        self.height = height
        self.capacity = max(2, capacity)
        rest = (restX, restY)
        ring = Mutex(
            Ring(
                times: [Double](repeating: 0, count: self.capacity), xs: [Double](repeating: 0, count: self.capacity),
                ys: [Double](repeating: 0, count: self.capacity)))
    }

    /// The frame at media time `time` shows the window whose top-left corner is (x, y).
    public func record(time: Double, x: Double, y: Double) {
        ring.withLock { r in
            r.times[r.next] = time
            r.xs[r.next] = x
            r.ys[r.next] = y
            r.next = (r.next + 1) % capacity
            r.count = min(capacity, r.count + 1)
        }
    }

    /// The window recorded for the frame at `t` (the nearest time, searched from the newest; the middle before any).
    public func window(at t: Double) -> Rect {
        ring.withLock { r in
            var best = rest
            var distance = Double.infinity
            for k in 0..<r.count {
                let i = (r.next - 1 - k + capacity) % capacity
                let d = abs(r.times[i] - t)
                if d < distance {
                    distance = d
                    best = (r.xs[i], r.ys[i])
                    if d < 1e-9 { break }
                }
            }
            return Rect(x: best.x, y: best.y, width: width, height: height)
        }
    }

    public static func == (l: LiveWindowPath, r: LiveWindowPath) -> Bool { l === r }
}
