import CFFmpeg
import CropZoomCore

/// A time base: timestamps count units of `num`/`den` seconds. A ``Rational`` by its use.
package typealias TimeBase = Rational

/// FFmpeg's `AVRational` as a Swift value, so that code outside the wrappers never sees the C type: a time base
/// (``TimeBase``), a frame rate, a pixel aspect.
package struct Rational: Sendable, Equatable {
    package let num: Int32
    package let den: Int32

    package init(num: Int32, den: Int32) {
        self.num = num
        self.den = den
    }

    init(_ r: AVRational) { self.init(num: r.num, den: r.den) }

    package static let one = Rational(num: 1, den: 1)

    /// For the wrappers that hand it to FFmpeg.
    var rational: AVRational { AVRational(num: num, den: den) }

    /// Both terms positive (FFmpeg writes 0/0 or 0/1 for "unknown").
    package var isKnown: Bool { num > 0 && den > 0 }
    /// `av_q2d`.
    package var value: Double { av_q2d(rational) }

    /// Seconds in one unit (`av_q2d`).
    package var seconds: Double { av_q2d(rational) }

    /// True when both count the same unit, however written (`av_cmp_q`: 1/30 is 2/60).
    package func isSameUnit(as other: TimeBase) -> Bool { av_cmp_q(rational, other.rational) == 0 }

    /// `t`, counted in this base, counted in `other` instead (`av_rescale_q`, to the nearest unit).
    package func rescale(_ t: Int64, to other: TimeBase) -> Int64 { av_rescale_q(t, rational, other.rational) }

    /// Whether `a` (in this base) comes before, with or after `b` in `other` (`av_compare_ts`: -1, 0, 1).
    package func compare(_ a: Int64, with b: Int64, in other: TimeBase) -> Int32 {
        av_compare_ts(a, rational, b, other.rational)
    }
}
