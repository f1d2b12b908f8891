import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom probe INPUT [--json]`: the container and every stream, as cropzoom sees them.
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract:
            "Describe a media file: container, duration, and each stream (codec, sizes, rotation, rates, audio "
            + "layout).",
        discussion: "Exit codes: 0 ok, 2 bad usage, 3 input unreadable.")

    @Argument(help: "The file to describe.")
    var input: String

    @Flag(help: "Print JSON (stable snake_case field names; README, \"Probe\") instead of text.")
    var json = false

    func run() throws {
        let info = try reportingErrors { () throws(CropZoomError) in try MediaProbe.probe(input) }
        print(json ? try snakeCaseJSON(info) : ProbeCommand.text(info), terminator: "")
    }

    static func text(_ info: MediaInfo) -> String {
        func secs(_ v: Double?) -> String { v.map { String(format: "%.3f s", $0) } ?? "unknown" }
        var out =
            "\(info.path): \(info.format) (\(info.formatLongName)), duration \(secs(info.duration)), start "
            + "\(secs(info.startTime))"
        if let size = info.sizeBytes { out += ", \(size) bytes" }
        if let rate = info.bitRate { out += String(format: ", %.0f kb/s", Double(rate) / 1000) }
        out += "\n"
        for s in info.streams {
            var line = "  #\(s.index) \(s.type): \(s.codec)\(s.profile.map { " (\($0))" } ?? "")"
            if s.type == "video" {
                line += ", \(s.width ?? 0)x\(s.height ?? 0)"
                if s.displayWidth != s.width || s.displayHeight != s.height || s.rotation != 0 || s.mirrored == true {
                    line += " shown as \(s.displayWidth ?? 0)x\(s.displayHeight ?? 0)"
                }
                if let r = s.rotation, r != 0 { line += ", rotated \(r)° clockwise" }
                if s.mirrored == true { line += ", then mirrored left-right" }
                if let sar = s.sampleAspectRatio, sar != "1:1" { line += ", SAR \(sar)" }
                if let pf = s.pixelFormat { line += ", \(pf)" }
                if let f = s.fieldOrder, f != "progressive" { line += ", interlaced (\(f))" }
                if let fps = s.fps { line += String(format: ", %.3g fps", fps) }
                line += " (r \(s.rFrameRate ?? "?"), avg \(s.avgFrameRate ?? "?"))"
                if let v = s.variableFrameRate { line += v ? ", variable rate" : ", constant rate" }
                if s.attachedPicture { line += ", attached picture" }
            } else if s.type == "audio" {
                line += ", \(s.sampleRate ?? 0) Hz, \(s.channelLayout ?? "\(s.channels ?? 0) channels")"
                if let f = s.sampleFormat { line += ", \(f)" }
            }
            line += ", start \(secs(s.startTime))"
            if let d = s.duration { line += String(format: ", %.3f s", d) }
            if let l = s.language, l != "und" { line += ", \(l)" }
            out += line + "\n"
        }
        return out
    }
}
