import Foundation

/// `--path-out` / `--path-in`: a ``CameraPath`` as CSV, one row per frame, for plotting and editing.
///
/// Columns: `frame,time,measured`; the motion F_t (`motion_x,motion_y,motion_angle,motion_scale`); the camera path
/// M_t (`camera_x,camera_y,camera_angle`: where the frame's centre is in the first frame's pixels, and its turn);
/// the correction B_t (`x,y,angle,zoom`: the stabilised picture is frame t zoomed by `zoom` about its centre, turned
/// by `angle` degrees clockwise and moved by (x, y) coded pixels); the stabilised camera P_t
/// (`path_x,path_y,path_angle`). Reading, only `time` and the correction's four columns are needed: edit those.
/// A first line `# cropzoom camera path WxH` gives the coded picture's size, followed by `pixel-aspect A` when its
/// pixels are not square (then the x columns are in square pixels: coded x × A).
extension CameraPath {
    public static let csvColumns = [
        "frame", "time", "measured", "motion_x", "motion_y", "motion_angle", "motion_scale", "camera_x", "camera_y",
        "camera_angle", "x", "y", "angle", "zoom", "path_x", "path_y", "path_angle",
    ]

    /// The path as CSV text (numbers with enough digits to read back the same path within 1e-9 px).
    public func csv() -> String {
        let aspect = pixelAspect == 1 ? "" : " pixel-aspect \(String(format: "%.10g", pixelAspect))"
        var lines = ["# cropzoom camera path \(width)x\(height)\(aspect)", Self.csvColumns.joined(separator: ",")]
        let cam = camera
        let stab = stabilised
        func n(_ v: Double) -> String { String(format: "%.10g", v) }
        for (i, s) in samples.enumerated() {
            let m = s.motion
            let b = s.correction
            let row = [
                String(i), n(s.time), s.measured ? "1" : "0", n(m.tx), n(m.ty), n(m.degrees), n(m.scale),
                n(cam[i].tx), n(cam[i].ty), n(cam[i].degrees), n(b.tx), n(b.ty), n(b.degrees), n(1 / b.scale),
                n(stab[i].tx), n(stab[i].ty), n(stab[i].degrees),
            ]
            lines.append(row.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads a path written by ``csv()`` (and edited): `time,x,y,angle,zoom` per row at least. `width`/`height`: the
    /// picture's size when the first line does not give it. Throws a reason naming the line.
    public init(csv text: String, width: Int? = nil, height: Int? = nil) throws(CameraPathError) {
        var size = width.flatMap { w in height.map { (w, $0) } }
        var aspect = 1.0
        var header: [String: Int]? = nil
        var samples: [Sample] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let words = line.split(separator: " ")
                if words.contains("path") {
                    for word in words {
                        let wh = word.split(separator: "x", omittingEmptySubsequences: false).compactMap { Int($0) }
                        if wh.count == 2, wh[0] > 0, wh[1] > 0 { size = (wh[0], wh[1]) }
                    }
                    if let i = words.firstIndex(of: "pixel-aspect"), i + 1 < words.count {
                        guard let a = Double(words[i + 1]), a > 0, a.isFinite else {
                            throw CameraPathError(line: number + 1, reason: "'\(words[i + 1])' is not a pixel aspect")
                        }
                        aspect = a
                    }
                }
                continue
            }
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard let columns = header else {
                header = Dictionary(cells.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
                for needed in ["time", "x", "y", "angle", "zoom"] where header?[needed] == nil {
                    throw CameraPathError(line: number + 1, reason: "no column '\(needed)' in the header")
                }
                continue
            }
            func value(_ name: String, default fallback: Double? = nil) throws(CameraPathError) -> Double {
                guard let i = columns[name], i < cells.count, !cells[i].isEmpty else {
                    if let fallback { return fallback }
                    throw CameraPathError(line: number + 1, reason: "no value for '\(name)'")
                }
                guard let v = Double(cells[i]), v.isFinite else {
                    throw CameraPathError(line: number + 1, reason: "'\(cells[i])' is not a number ('\(name)')")
                }
                return v
            }
            let zoom = try value("zoom")
            guard zoom >= 0.1, zoom <= 100 else {
                throw CameraPathError(line: number + 1, reason: "zoom \(zoom) is outside 0.1…100")
            }
            let time = try value("time")
            if let last = samples.last, time <= last.time {
                throw CameraPathError(line: number + 1, reason: "time \(time) does not follow \(last.time)")
            }
            let motion = Similarity(
                x: try value("motion_x", default: 0), y: try value("motion_y", default: 0),
                degrees: try value("motion_angle", default: 0), scale: try value("motion_scale", default: 1))
            samples.append(
                Sample(
                    time: time, motion: motion, measured: try value("measured", default: 1) != 0,
                    correction: Similarity(
                        x: try value("x"), y: try value("y"), degrees: try value("angle"), scale: 1 / zoom)))
        }
        guard !samples.isEmpty else { throw CameraPathError(line: 0, reason: "no frames") }
        guard let size else { throw CameraPathError(line: 1, reason: "no '# cropzoom camera path WxH' line") }
        self.init(width: size.0, height: size.1, pixelAspect: aspect, samples: samples)
    }
}

/// Why a camera path file could not be read: the line (1-based; 0: the whole file) and the reason.
public struct CameraPathError: Error, Sendable, Equatable {
    public var line: Int
    public var reason: String
}
