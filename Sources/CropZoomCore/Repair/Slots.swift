/// Values by a small number — a track's index, a parameter set's id — in an array of optionals, where a dictionary
/// hashed the number several times a sample (the repair's timing and its slice headers: 3 % each of a walk of small
/// pictures).
package struct Slots<Value: Sendable>: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    private var values: [Value?] = []

    package init() {}

    package init(dictionaryLiteral pairs: (Int, Value)...) {
        for (i, value) in pairs { self[i] = value }
    }

    /// The value at `i` (a track's index); nil when none was given.
    package subscript(i: Int) -> Value? {
        get { i < values.count ? values[i] : nil }
        set {
            if i >= values.count {
                guard newValue != nil else { return }
                values += [Value?](repeating: nil, count: i + 1 - values.count)
            }
            values[i] = newValue
        }
    }

    /// A parameter set by its id (H.264's SPS 0–31 and PPS 0–255, HEVC's 0–15 and 0–63, as their parsers bound
    /// them); ids past 255 are none.
    package subscript(id: UInt32) -> Value? {
        get { id < 256 ? self[Int(id)] : nil }
        set { if id < 256 { self[Int(id)] = newValue } }
    }

    /// The value taken out (nil left in its place), so that changing it copies nothing.
    package mutating func removeValue(at i: Int) -> Value? {
        guard i < values.count else { return nil }
        defer { values[i] = nil }
        return values[i]
    }

    /// Whether no number has a value.
    package var isEmpty: Bool { values.allSatisfy { $0 == nil } }

    /// The numbers with a value, in order.
    package var filled: [Int] { values.indices.filter { values[$0] != nil } }

    /// The values given, by number.
    package func makeIterator() -> some IteratorProtocol<(key: Int, value: Value)> {
        values.indices.lazy.compactMap { i in values[i].map { (key: i, value: $0) } }.makeIterator()
    }
}
