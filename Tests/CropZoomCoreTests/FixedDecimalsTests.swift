import Foundation
import Testing

@testable import CropZoomCore

/// `Double.fixed(_:)` writes what `String(format: "%.Nf")` (glibc's printf) writes, without Foundation's format
/// machinery: checked against it on ties, near-ties, signs and a spread of magnitudes.
@Suite("Fixed decimals")
struct FixedDecimalsTests {
    static let values: [Double] = {
        var v: [Double] = [
            0, -0.0, 0.125, 0.375, 2.5, 3.5, 0.005, 0.015, 20.005, 1.005, -1.005, 0.045, 1e-7, -1e-7, 0x1p-61,
            999.9995, 9.995, 0.0005, 1234567.891, 8.999e12, 20, 60.0 / 1.001, 1.0 / 3, 2.0 / 3,
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<20000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let unit = Double(state >> 11) / Double(1 << 53)
            let magnitude = [1.0, 10, 1000, 1e6, 1e9][Int(state & 3)]
            v.append((unit * magnitude) * (state & 4 == 0 ? 1 : -1))
            // Halves and thousandths, where a tie or a near-tie decides.
            v.append(Double(Int(state >> 40) % 100_000) / 1000 + 0.0005)
        }
        return v
    }()

    @Test("the same text as String(format:) for 0 to 3 decimals", arguments: 0...3)
    func matchesPrintf(digits: Int) {
        var mismatches: [String] = []
        for x in Self.values {
            let expected = String(format: "%.\(digits)f", x)
            let got = x.fixed(digits)
            if got != expected { mismatches.append("\(x): \(got) vs \(expected)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
