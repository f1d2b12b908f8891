import Foundation

/// A live recording's camera path (`--stabilize` with a live source): the corrections the live stabiliser has fixed,
/// read by the transform workers. Each frame's correction is recorded before the frame is handed to the workers, so a
/// worker always finds the one for the frame it renders.
///
/// Only the latest ``capacity`` corrections are kept (a ring made once: a long recording's memory stays flat); a
/// frame waits at most the latency bound between the two, far fewer frames than that.
///
/// `@unchecked Sendable`: `ring` is touched only under `lock` (an `NSLock`, not `Synchronization.Mutex`: a futex that
/// ThreadSanitizer does not see, which reported the stabiliser's writes and the workers' reads as a race).
public final class LiveCameraPath: @unchecked Sendable, Equatable {
    /// The coded picture the corrections are for, and its pixels' aspect (the corrections are in square pixels, as
    /// ``CameraPath/pixelAspect`` says).
    public let width: Int, height: Int
    public let pixelAspect: Double
    /// Corrections kept.
    public let capacity: Int
    private struct Ring {
        var times: [Double]
        var corrections: [Similarity]
        var next = 0
        var count = 0
    }
    private var ring: Ring
    private let lock = NSLock()

    public init(width: Int, height: Int, pixelAspect: Double = 1, capacity: Int = 1024) {
        self.width = width
        self.height = height
        self.pixelAspect = pixelAspect > 0 && pixelAspect.isFinite ? pixelAspect : 1
        self.capacity = max(2, capacity)
        ring = Ring(
            times: [Double](repeating: 0, count: self.capacity),
            corrections: [Similarity](repeating: .identity, count: self.capacity))
    }

    /// The frame at media time `time` is to be read through `correction` (B_t, as ``CameraPath/Sample/correction``).
    public func record(time: Double, correction: Similarity) {
        lock.withLock {
            ring.times[ring.next] = time
            ring.corrections[ring.next] = correction
            ring.next = (ring.next + 1) % capacity
            ring.count = min(capacity, ring.count + 1)
        }
    }

    /// The correction recorded for the frame at `t`: the one recorded at the nearest time, searched from the newest
    /// (the identity before any).
    public func correction(at t: Double) -> Similarity {
        lock.withLock {
            let r = ring
            var best = Similarity.identity
            var distance = Double.infinity
            for k in 0..<r.count {
                let i = (r.next - 1 - k + capacity) % capacity
                let d = abs(r.times[i] - t)
                if d < distance {
                    distance = d
                    best = r.corrections[i]
                    if d < 1e-9 { break }
                }
            }
            return best
        }
    }

    /// The frame's read map in coded pixel coordinates (as ``CameraPath/map(at:)``).
    public func map(at t: Double) -> Affine {
        correction(at: t).affine(width: Double(width), height: Double(height), pixelAspect: pixelAspect)
    }

    public static func == (l: LiveCameraPath, r: LiveCameraPath) -> Bool { l === r }
}
