import Foundation

/// A value that changes over time: keyframes `time → value` (a value may have several
/// components, as a centre has two), interpolated at any time. Before the first key the first
/// value holds, after the last the last one.
///
/// `--zoom '0s:1.0, 4s:1.65, 6s:1.65, 8s:1.2'`, `--center '0s:0.5,0.5, 4s:0.62,0.4'`.
public struct Track: Sendable, Equatable {
    public enum Ease: String, Sendable, CaseIterable {
        /// Straight lines between keys (the speed jumps at each key).
        case linear
        /// Monotone cubic Hermite (Fritsch–Carlson): continuous speed (C1), and no overshoot —
        /// a value never leaves the range of its two neighbouring keys.
        case smooth
    }

    public struct Key: Sendable, Equatable {
        public var time: Double
        public var value: [Double]
        public init(time: Double, value: [Double]) {
            self.time = time
            self.value = value
        }

        /// NaN components (a crop key's X and Y when the window is centred) are equal to each other.
        public static func == (l: Key, r: Key) -> Bool {
            l.time == r.time && l.value.count == r.value.count
                && zip(l.value, r.value).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) }
        }
    }

    public var keys: [Key]
    public var ease: Ease

    public init(keys: [Key], ease: Ease = .linear) {
        self.keys = keys.sorted { $0.time < $1.time }
        self.ease = ease
    }

    /// A value that does not change.
    public init(constant value: [Double]) { self.init(keys: [Key(time: 0, value: value)]) }

    /// True when some key differs from another (the value moves).
    public var isAnimated: Bool { keys.contains { $0.value != keys[0].value } }

    /// Parses `"4s:1.65"` lists (`T s: value[, value…]`, keys separated by commas; times in
    /// seconds with an `s`). Text without any `s:` is a single constant value. Each value must
    /// have `components` numbers. Errors say what is wrong, naming `setting`.
    public static func parse(_ text: String, components: Int, setting: Setting) throws(CropZoomError) -> Track {
        try parse(text, counts: [components], separator: ",", setting: setting)
    }

    /// The same, for values whose numbers are separated by `separator` (`--crop`'s
    /// `0s:1920:1080:0:0, 4s:960:540:480:270`: `":"`) and may have any of `counts` numbers — the
    /// same count in every key.
    public static func parse(_ text: String, counts: [Int], separator: Character, setting: Setting)
        throws(CropZoomError)
        -> Track
    {
        func numbers(_ s: Substring) throws(CropZoomError) -> [Double] {
            let parts = s.split(separator: separator, omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let values = parts.compactMap { Double($0) }
            guard counts.contains(values.count), parts.count == values.count, values.allSatisfy(\.isFinite) else {
                let expected =
                    counts == [1] ? "a number" : "\(counts.map(String.init).joined(separator: " or ")) numbers"
                throw CropZoomError(
                    .usage, setting: setting,
                    reason:
                        "\(setting: setting) \(text): expected "
                        + "\(expected)\(counts == [1] ? "" : " separated by '\(separator)'") in "
                        + "'\(s.trimmingCharacters(in: .whitespaces))'"
                )
            }
            return values
        }
        // Key markers: a number followed by "s:" at the start or after a comma.
        var markers: [(range: Range<String.Index>, time: Double)] = []
        var i = text.startIndex
        while i < text.endIndex {
            let atBoundary =
                i == text.startIndex || text[text.index(before: i)] == "," || text[text.index(before: i)] == " "
            if atBoundary, let r = text[i...].range(of: "s:") {
                let candidate = text[i..<r.lowerBound].trimmingCharacters(in: .whitespaces)
                if !candidate.isEmpty, let t = Double(candidate), !candidate.contains(","), t >= 0, t.isFinite {
                    markers.append((i..<r.upperBound, t))
                    i = r.upperBound
                    continue
                }
            }
            i = text.index(after: i)
        }
        if markers.isEmpty { return Track(constant: try numbers(Substring(text))) }
        guard text[..<markers[0].range.lowerBound].trimmingCharacters(in: .whitespaces).isEmpty else {
            throw CropZoomError(
                .usage, setting: setting,
                reason: "\(setting: setting) \(text): keyframes are 'TIMEs:VALUE' (e.g. '0s:1.0, 4s:1.65')")
        }
        var keys: [Key] = []
        for (n, m) in markers.enumerated() {
            let end = n + 1 < markers.count ? markers[n + 1].range.lowerBound : text.endIndex
            var body = text[m.range.upperBound..<end].trimmingCharacters(in: .whitespaces)
            if n + 1 < markers.count {
                guard body.hasSuffix(",") else {
                    throw CropZoomError(
                        .usage, setting: setting, reason: "\(setting: setting) \(text): separate keyframes with commas")
                }
                body.removeLast()
            }
            keys.append(Key(time: m.time, value: try numbers(Substring(body))))
            if keys.last!.value.count != keys[0].value.count {
                throw CropZoomError(
                    .usage, setting: setting,
                    reason: "\(setting: setting) \(text): every keyframe needs as many numbers as the first")
            }
        }
        for (a, b) in zip(keys, keys.dropFirst()) where b.time <= a.time {
            throw CropZoomError(
                .usage, setting: setting,
                reason: "\(setting: setting) \(text): keyframe times must increase (\(a.time)s then \(b.time)s)")
        }
        return Track(keys: keys)
    }

    /// The value at time `t` (seconds).
    public func value(at t: Double) -> [Double] {
        guard let first = keys.first else { return [] }
        return (0..<first.value.count).map { value($0, at: t) }
    }

    /// Component `c` of the value at time `t` (seconds), without building an array (the
    /// per-frame path allocates nothing).
    public func value(_ c: Int, at t: Double) -> Double {
        let n = keys.count
        if n == 1 || t <= keys[0].time { return keys[0].value[c] }
        if t >= keys[n - 1].time { return keys[n - 1].value[c] }
        // The last key before t (binary search: a reframed path has a key per frame).
        var (k, hi) = (0, n - 1)
        while hi - k > 1 {
            let mid = (k + hi) / 2
            if keys[mid].time < t { k = mid } else { hi = mid }
        }
        let (ta, tb) = (keys[k].time, keys[k + 1].time)
        let (va, vb) = (keys[k].value[c], keys[k + 1].value[c])
        let h = tb - ta
        let s = (t - ta) / h
        switch ease {
        case .linear:
            return va + (vb - va) * s
        case .smooth:
            let (m0, m1) = (slope(at: k, component: c), slope(at: k + 1, component: c))
            let s2 = s * s
            let s3 = s2 * s
            return (2 * s3 - 3 * s2 + 1) * va + (s3 - 2 * s2 + s) * h * m0 + (-2 * s3 + 3 * s2) * vb + (s3 - s2) * h
                * m1
        }
    }

    /// Fritsch–Carlson tangent at key `k`: zero at the ends, at local extrema and where the
    /// secants disagree in sign; the harmonic mean of the secants otherwise (monotone, C1).
    private func slope(at k: Int, component c: Int) -> Double {
        guard k > 0, k < keys.count - 1 else { return 0 }
        let d0 = (keys[k].value[c] - keys[k - 1].value[c]) / (keys[k].time - keys[k - 1].time)
        let d1 = (keys[k + 1].value[c] - keys[k].value[c]) / (keys[k + 1].time - keys[k].time)
        guard d0 * d1 > 0 else { return 0 }
        let w0 = 2 * (keys[k + 1].time - keys[k].time) + (keys[k].time - keys[k - 1].time)
        let w1 = (keys[k + 1].time - keys[k].time) + 2 * (keys[k].time - keys[k - 1].time)
        return (w0 + w1) / (w0 / d0 + w1 / d1)
    }

    /// Smallest and largest value of component `c` over all keys (the interpolation stays inside).
    public func range(component c: Int) -> ClosedRange<Double> {
        let v = keys.map { $0.value[c] }
        return v.min()!...v.max()!
    }
}
