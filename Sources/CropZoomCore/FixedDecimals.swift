extension Double {
    /// The number with `digits` (0…3) decimals as `String(format: "%.Nf")` writes it — the exact binary value rounded
    /// to the nearest, a tie to even — without Foundation's format machinery, whose first calls in a process cost a
    /// millisecond (each argument's conformances looked up): a repair's summary line is on its critical path.
    package func fixed(_ digits: Int) -> String {
        precondition((0...3).contains(digits), "0…3 decimals")
        let a = magnitude
        // Beyond 2^53 / 1000 the scaled significand would not fit 64 bits; not a time or size cropzoom writes.
        guard isFinite, a < 9e12 else { return isNaN ? "nan" : isInfinite ? (self < 0 ? "-inf" : "inf") : "\(self)" }
        let scale: UInt64 = [1, 10, 100, 1000][digits]
        var units: UInt64 = 0
        if a >= 0x1p-60 {
            // a = m · 2^e with m a 53-bit integer; m · scale < 2^63.
            let m = a.significandBitPattern | (1 << 52)
            let e = Int(a.exponent) - 52
            let p = m * scale
            if e >= 0 {
                units = p << UInt64(e)
            } else if -e < 64 {
                let shift = UInt64(-e)
                units = p >> shift
                let rest = p & ((1 << shift) - 1)
                let half: UInt64 = 1 << (shift - 1)
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
