import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom probe INPUT… [--json]`: the container and every stream, as cropzoom sees them.
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract:
            "Describe media files: container, duration, tags, chapters, and each stream (codec, sizes, rotation, "
            + "rates, colour, HDR, audio layout).",
        discussion:
            "Several files are described in turn (JSON: an array); one that cannot be read is reported on stderr "
            + "and the others still described. Exit codes: 0 ok, 2 bad usage, 3 an input unreadable.")

    @Argument(help: "The files to describe (- for standard input).")
    var inputs: [String]

    @Flag(help: "Print JSON (stable snake_case field names; docs/probe-and-bench.md) instead of text.")
    var json = false

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("Missing expected argument '<inputs> ...'") }
        guard inputs.filter({ $0 == "-" }).count <= 1 else {
            throw ValidationError("standard input (-) can be read once")
        }
    }

    func run() throws {
        var described: [MediaInfo] = []
        var failure: ExitCode? = nil
        for input in inputs {
            do {
                let info = try reportingErrors { () throws(CropZoomError) in try MediaProbe.probe(input) }
                described.append(info)
                if !json { print(ProbeCommand.text(info), terminator: "") }
            } catch let code as ExitCode {
                failure = failure ?? code
            }
        }
        if json && !described.isEmpty {
            print(inputs.count == 1 ? try snakeCaseJSON(described[0]) : try snakeCaseJSON(described), terminator: "")
        }
        if let failure { throw failure }
    }

    static func text(_ info: MediaInfo) -> String {
        func secs(_ v: Double?) -> String { v.map { String(format: "%.3f s", $0) } ?? "unknown" }
        var out =
            "\(info.path): \(info.format) (\(info.formatLongName)), duration \(secs(info.duration)), start "
            + "\(secs(info.startTime))"
        if let size = info.sizeBytes { out += ", \(size) bytes" }
        if let rate = info.bitRate { out += String(format: ", %.0f kb/s", Double(rate) / 1000) }
        out += "\n"
        if let tags = info.tags {
            let shown = tags.filter { !["major_brand", "minor_version", "compatible_brands"].contains($0.key) }
            if !shown.isEmpty {
                out +=
                    "  tags: "
                    + shown.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                    .joined(separator: ", ") + "\n"
            }
        }
        for (n, c) in (info.chapters ?? []).enumerated() {
            out +=
                String(format: "  chapter %d: %.3f–%.3f s", n + 1, c.start, c.end) + (c.title.map { " \($0)" } ?? "")
                + "\n"
        }
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
                let colour = [s.colorRange, s.colorSpace, s.colorPrimaries, s.colorTransfer].compactMap { $0 }
                if !colour.isEmpty { line += " (\(colour.joined(separator: ", ")))" }
                if let hdr = s.hdr {
                    line += ", HDR \(hdr)"
                    if let l = s.masteringDisplay?.maxLuminance { line += String(format: " mastered at %.0f cd/m²", l) }
                    if let c = s.contentLightLevel { line += ", MaxCLL \(c.maxContent), MaxFALL \(c.maxAverage)" }
                }
                if let dv = s.dolbyVision { line += ", Dolby Vision profile \(dv.profile) level \(dv.level)" }
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
