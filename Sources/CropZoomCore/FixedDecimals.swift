extension Double {
    /// The number with `digits` (0…3) decimals as `String(format: "%.Nf")` writes it — the exact binary value rounded
    /// to the nearest, a tie to even — without Foundation's format machinery, whose first calls in a process cost a
    /// millisecond (each argument's conformances looked up): a repair's summary line is on its critical path.
    package func fixed(_ digits: Int) -> String {
        precondition((0...3).contains(digits), "0…3 decimals")
        let a = magnitude
        // Up to 9e12 (not a time or size cropzoom writes beyond) the value has a fraction in binary (it is below
        // 2^52) and its scaled significand fits 64 bits.
        guard isFinite, a < 9e12 else { return isNaN ? "nan" : isInfinite ? (self < 0 ? "-inf" : "inf") : "\(self)" }
        let scale: UInt64 = [1, 10, 100, 1000][digits]
        var units: UInt64 = 0
        if a >= 0x1p-60 {
            // a = m · 2^-shift with m a 53-bit integer (1 ≤ shift < 113 here); m · scale < 2^63.
            let p = (a.significandBitPattern | (1 << 52)) * scale
            let shift = 52 - Int(a.exponent)
            if shift < 64 {
                units = p >> UInt64(shift)
                let rest = p & ((1 << UInt64(shift)) - 1)
                let half: UInt64 = 1 << UInt64(shift - 1)
                if rest > half || (rest == half && units & 1 == 1) { units += 1 }
            }
        }
        let whole = String(units / scale)
        let minus = sign == .minus ? "-" : ""
        guard digits > 0 else { return minus + whole }
        let fraction = String(units % scale)
        return minus + whole + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
}
