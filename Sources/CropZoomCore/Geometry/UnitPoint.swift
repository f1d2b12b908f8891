/// A point of the picture as fractions of its width and height: (0, 0) is the top left corner, (1, 1) the bottom
/// right, (0.5, 0.5) the middle — where a zoom or a crop window is centred (`--center X,Y`).
public struct UnitPoint: Sendable, Hashable, Codable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The middle of the picture, (0.5, 0.5).
    public static let middle = UnitPoint(x: 0.5, y: 0.5)

    /// `X,Y`, as `--center` takes it.
    public var description: String { "\(x),\(y)" }
}
