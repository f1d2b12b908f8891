import CropZoomFFmpeg
import Foundation

/// How smoothly the picture of a video moves (`cropzoom analyze-motion`): the global translation
/// between consecutive frames, estimated on the luma plane by Lucas–Kanade (three refinements,
/// after a Gaussian blur; pictures wider than 640 px are first averaged down, and the result
/// scaled back), then how that velocity changes from frame to frame. Meant for pans of static
/// content, where the true velocity changes smoothly: a renderer that moves its window in whole
/// pixels shows up as jitter of about a pixel per frame², a sub-pixel one as a few hundredths.
public struct MotionReport: Codable, Sendable, Equatable {
    public var frames: Int
    /// Mean velocity of the picture, pixels per frame (x right, y down).
    public var velocityMean: [Double]
    /// |v(k+1) − v(k)|, pixels per frame²: mean and largest.
    public var jitterMean: Double
    public var jitterMax: Double
    /// Frames that move against the overall direction (by more than 5 % of the mean speed).
    public var backwardSteps: Int
    /// Every velocity measured, pixels per frame: [x, y] per pair of frames.
    public var velocities: [[Double]]
}

public enum MotionAnalysis {
    /// Decodes the first video stream of `path` and measures its motion.
    public static func analyze(_ path: String) throws(CropZoomError) -> MotionReport {
        FFmpegLog.silence()
        try InputSetup.check(path)
        let input = try InputFormat(path: path)
        guard let index = input.bestVideoStream() else {
            throw CropZoomError(.inputUnreadable, path: path, reason: "no video stream")
        }
        let decoder = try VideoDecoder(input: input, streamIndex: index)
        try decoder.open(threads: 1)
        let packet = try Packet()
        var previous: Luma? = nil
        var velocities: [[Double]] = []
        var frames = 0
        func take(_ frame: Frame) throws(CropZoomError) {
            guard let luma = Luma(frame) else {
                throw CropZoomError(
                    .inputUnreadable, path: path,
                    reason: "analyze-motion reads planar YUV or grey video, not \(frame.format.name)")
            }
            frames += 1
            if let previous { velocities.append(previous.shift(to: luma)) }
            previous = luma
        }
        reading: while true {
            switch (try? input.read(into: packet)) ?? .endOfStream {
            case .again: continue
            case .endOfStream: break reading
            case .value: break
            }
            defer { packet.unref() }
            if packet.streamIndex == index { try decoder.decode(packet, take) }
        }
        try decoder.decode(nil, take)
        guard frames >= 3 else {
            throw CropZoomError(
                .inputUnreadable, path: path, reason: "analyze-motion needs at least 3 frames (found \(frames))")
        }
        let n = Double(velocities.count)
        let mean = [velocities.reduce(0) { $0 + $1[0] } / n, velocities.reduce(0) { $0 + $1[1] } / n]
        let speed = (mean[0] * mean[0] + mean[1] * mean[1]).squareRoot()
        let dir = speed > 0 ? [mean[0] / speed, mean[1] / speed] : [0, 0]
        let jitter = zip(velocities, velocities.dropFirst()).map { a, b in
            ((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1])).squareRoot()
        }
        let backward = velocities.filter { $0[0] * dir[0] + $0[1] * dir[1] < -0.05 * speed }.count
        return MotionReport(
            frames: frames, velocityMean: mean, jitterMean: jitter.reduce(0, +) / Double(max(1, jitter.count)),
            jitterMax: jitter.max() ?? 0, backwardSteps: backward, velocities: velocities)
    }

    /// One frame's luma, averaged down to at most 640 px wide and blurred (σ 1.5).
    struct Luma {
        let w: Int, h: Int
        let factor: Int
        var v: [Double]

        init?(_ frame: Frame) {
            guard let (w, h, f, a) = frame.averagedLuma(maxWidth: 640) else { return nil }
            (self.w, self.h, factor) = (w, h, f)
            v = Luma.blur(a, w, h)
        }

        static func blur(_ a: [Double], _ w: Int, _ h: Int, sigma: Double = 1.5) -> [Double] {
            let r = Int(3 * sigma)
            var k = (-r...r).map { exp(-0.5 * Double($0 * $0) / (sigma * sigma)) }
            let sum = k.reduce(0, +)
            k = k.map { $0 / sum }
            var tmp = [Double](repeating: 0, count: w * h)
            var out = tmp
            for y in 0..<h {
                for x in 0..<w {
                    var s = 0.0
                    for (i, c) in k.enumerated() { s += c * a[y * w + min(max(x + i - r, 0), w - 1)] }
                    tmp[y * w + x] = s
                }
            }
            for y in 0..<h {
                for x in 0..<w {
                    var s = 0.0
                    for (i, c) in k.enumerated() { s += c * tmp[min(max(y + i - r, 0), h - 1) * w + x] }
                    out[y * w + x] = s
                }
            }
            return out
        }

        /// (dx, dy) moving this picture's content onto `next`'s, in full-size pixels.
        func shift(to next: Luma, margin: Int = 16) -> [Double] {
            guard next.w == w, next.h == h, w > 2 * margin + 2, h > 2 * margin + 2 else { return [0, 0] }
            var dx = 0.0
            var dy = 0.0
            for _ in 0..<3 {
                var a11 = 0.0
                var a12 = 0.0
                var a22 = 0.0
                var b1 = 0.0
                var b2 = 0.0
                for y in margin..<(h - margin) {
                    for x in margin..<(w - margin) {
                        // next, warped back by the estimate (bilinear).
                        let sx = min(max(Double(x) + dx, 0), Double(w) - 1.001)
                        let sy = min(max(Double(y) + dy, 0), Double(h) - 1.001)
                        let x0 = Int(sx)
                        let y0 = Int(sy)
                        let fx = sx - Double(x0)
                        let fy = sy - Double(y0)
                        let warped =
                            next.v[y0 * w + x0] * (1 - fx) * (1 - fy) + next.v[y0 * w + x0 + 1] * fx * (1 - fy)
                            + next.v[(y0 + 1) * w + x0] * (1 - fx) * fy + next.v[(y0 + 1) * w + x0 + 1] * fx * fy
                        let here = v[y * w + x]
                        let gx = (v[y * w + x + 1] - v[y * w + x - 1]) / 2
                        let gy = (v[(y + 1) * w + x] - v[(y - 1) * w + x]) / 2
                        let gt = warped - here
                        a11 += gx * gx
                        a12 += gx * gy
                        a22 += gy * gy
                        b1 -= gx * gt
                        b2 -= gy * gt
                    }
                }
                let det = a11 * a22 - a12 * a12
                guard abs(det) > 1e-12 else { break }
                dx += (a22 * b1 - a12 * b2) / det
                dy += (a11 * b2 - a12 * b1) / det
            }
            return [dx * Double(factor), dy * Double(factor)]
        }
    }
}
