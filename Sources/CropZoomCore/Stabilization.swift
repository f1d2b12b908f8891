import Foundation

/// `--stabilize`: a steady picture from a handheld recording. The camera's motion is measured frame by frame, an
/// L1-optimal camera path chosen inside the room a crop leaves (static, constant-speed and eased pieces, as a tripod,
/// a dolly and a cameraman would), and every frame rendered through the existing warp along that path. Frames, times
/// and audio are those of any transcode.
public struct Stabilization: Sendable, Equatable, Codable {
    /// `smooth`: the steadiest path the crop allows (holds, constant pans, eases); `tripod`: one view held wherever
    /// the crop allows.
    public enum Mode: String, Sendable, CaseIterable, Codable { case smooth, tripod }
    /// `crop`: zoomed in just enough that no border shows, the zoom changing slowly; `fill`: the picture at its own
    /// scale, the uncovered corners filled with ``TranscodeConfiguration/background``.
    public enum Border: String, Sendable, CaseIterable, Codable { case crop, fill }

    public var mode: Mode = .smooth
    /// The longest a correction may take (seconds) before the path gives in to the camera; nil: as long as the crop
    /// allows.
    public var smoothing: Double? = nil
    /// The most the picture may be zoomed in (≥ 1): the room the path has. Each frame is zoomed as little as the
    /// steadiness allows, at most this, the zoom changing by at most 3 % a second out and 9 % in (see
    /// `docs/design/stabilize.md`).
    public var maxZoom: Double = 1.1
    public var border: Border = .crop
    /// `--path-in`: render this camera path (CSV, as `--path-out` writes it) instead of analysing the input.
    public var pathIn: String? = nil
    /// `--path-out`: write the chosen camera path there (CSV).
    public var pathOut: String? = nil
    /// A camera path to render, as `TranscodeJob.cameraPath()` returns it (and an app may have edited it):
    /// no analysis. Before ``pathIn``.
    public var path: CameraPath? = nil

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.update(&mode, .mode)
        try c.update(&smoothing, .smoothing)
        try c.update(&maxZoom, .maxZoom)
        try c.update(&border, .border)
        try c.update(&pathIn, .pathIn)
        try c.update(&pathOut, .pathOut)
        try c.update(&path, .path)
    }
}
