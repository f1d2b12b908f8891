import Foundation

// JSON (Codable) forms of the configuration's values. The configuration and the geometry decode with defaults:
// a key that is absent keeps its default, so `{"input": "a.mov", "output": "b.mp4", "geometry": {"zoom": 2}}` is a
// whole configuration. Values a person writes as text are coded as that text: a background is `"#102030"`,
// `"edge"`, `"blur"` or `"cover"`, audio channels `2` or `"5.1"`, a stream `1` or `"eng"`.

extension KeyedDecodingContainer {
    /// Replaces `value` with what `key` holds, when it is present and not null.
    func update<T: Decodable>(_ value: inout T, _ key: Key) throws {
        if let decoded = try decodeIfPresent(T.self, forKey: key) { value = decoded }
    }
}

extension TranscodeConfiguration.Background: Codable {
    /// `#RRGGBB`, `edge`, `blur` or `cover` (`black`, `white` and `gray` are read too), as `--background`.
    public var text: String {
        switch self {
        case .color(let r, let g, let b): return String(format: "#%02x%02x%02x", r, g, b)
        case .edge: return "edge"
        case .blur: return "blur"
        case .cover: return "cover"
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        do { self = try Settings.background(text) } catch {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(text)
    }
}

/// The single-value form of a value a person writes as a number or as a name: audio channels `2` or `"5.1"`, a
/// stream `1` or `"eng"`.
enum NumberOrName: Codable {
    case number(Int)
    case name(String)

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let number = try? c.decode(Int.self) {
            self = .number(number)
        } else {
            self = .name(try c.decode(String.self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .number(let n): try c.encode(n)
        case .name(let text): try c.encode(text)
        }
    }
}

extension TranscodeConfiguration.AudioChannels: Codable {
    /// A count (`2`) or a layout name (`"5.1"`), as `--audio-channels`.
    public init(from decoder: any Decoder) throws {
        switch try NumberOrName(from: decoder) {
        case .number(let n): self = .count(n)
        case .name(let layout): self = .layout(layout)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .count(let n): try NumberOrName.number(n).encode(to: encoder)
        case .layout(let layout): try NumberOrName.name(layout).encode(to: encoder)
        }
    }
}

extension TranscodeConfiguration.StreamSelector: Codable {
    /// A stream's number (`1`) or a language (`"eng"`), as `--audio-stream`.
    public init(from decoder: any Decoder) throws {
        switch try NumberOrName(from: decoder) {
        case .number(let n): self = .index(n)
        case .name(let code): self = .language(code)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .index(let n): try NumberOrName.number(n).encode(to: encoder)
        case .language(let code): try NumberOrName.name(code).encode(to: encoder)
        }
    }
}

extension Track.Ease: Codable {}

extension Track.Key: Codable {
    private enum CodingKeys: String, CodingKey { case time, value }

    /// A component that is NaN (a crop key's X and Y when the window is centred) is `null` in JSON, which has no NaN.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let value = try c.decode([Double?].self, forKey: .value)
        self.init(time: try c.decode(Double.self, forKey: .time), value: value.map { $0 ?? .nan })
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(time, forKey: .time)
        try c.encode(value.map { $0.isNaN ? nil : $0 }, forKey: .value)
    }
}

extension Track: Codable {
    private enum CodingKeys: String, CodingKey { case keys, ease }

    /// Keys in any order (sorted by time, as `init(keys:ease:)` does); `ease` defaults to linear.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let keys = try c.decode([Key].self, forKey: .keys)
        guard !keys.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .keys, in: c, debugDescription: "a track needs a key")
        }
        self.init(keys: keys, ease: try c.decodeIfPresent(Ease.self, forKey: .ease) ?? .linear)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(keys, forKey: .keys)
        try c.encode(ease, forKey: .ease)
    }
}
