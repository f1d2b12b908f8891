import ArgumentParser
import CropZoomKit
import Foundation

/// Writes progress, notices, the summary and errors to stderr, as a bar, NDJSON or plain lines.
///
/// `@unchecked Sendable`: used by one task at a time — the task that prints a job's events while
/// it runs, then the command once that task has ended (`Transcode.run` awaits it).
final class Reporter: @unchecked Sendable {
    enum Style { case none, bar, json }
    let style: Style
    let quiet: Bool
    /// `--null`: the summary says nothing was written instead of naming an output.
    var null = false
    private var barShown = false

    init(mode: TranscodeConfiguration.ProgressMode, quiet: Bool) {
        self.quiet = quiet
        switch mode {
        case .none: style = .none
        case .bar: style = .bar
        case .json: style = .json
        case .auto: style = isatty(2) != 0 ? .bar : .none
        }
    }

    private func write(_ s: String) { Stderr.write(s) }

    private func clearBar() {
        if barShown {
            write("\r\u{1B}[K")
            barShown = false
        }
    }

    func notice(_ text: String) {
        if style == .json {
            json(.notice(.init(message: text)))
            return
        }
        guard !quiet else { return }
        clearBar()
        write("cropzoom: note: \(text)\n")
    }

    func warning(_ text: String) {
        if style == .json {
            json(.warning(.init(message: text)))
            return
        }
        guard !quiet else { return }
        clearBar()
        write("cropzoom: warning: \(text)\n")
    }

    func progress(_ p: ProgressEvent) {
        let fps = p.elapsed > 0 ? Double(p.frames) / p.elapsed : 0
        let speed = p.elapsed > 0 ? p.time / p.elapsed : 0
        switch style {
        case .none: return
        case .json:
            json(JobRecord(p))
        case .bar:
            let width = 24
            var line = p.phase.map { "\($0.rawValue) " } ?? ""
            if let f = p.fraction {
                let filled = Int(f * Double(width))
                line +=
                    "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
                line += String(format: "%3.0f%%", f * 100)
            }
            if let framesIn = p.framesIn {
                // Live: the rate in and out, what was dropped, how far behind the capture the encoder is.
                let fpsIn = p.elapsed > 0 ? Double(framesIn) / p.elapsed : 0
                line += String(
                    format: "  frame %d  in %.0f fps  out %.0f fps  dropped %d", p.frames, fpsIn, fps, p.framesDropped)
                if let latency = p.latency { line += String(format: "  latency %.2f s", latency) }
            } else {
                line += String(format: "  frame %d  %.0f fps  %.2fx", p.frames, fps, speed)
            }
            if let f = p.fraction, f > 0.01 {
                let eta = p.elapsed * (1 - f) / f
                line += String(format: "  ETA %d:%02d", Int(eta) / 60, Int(eta) % 60)
            }
            write("\r\u{1B}[K" + line)
            barShown = true
        }
    }

    func finished(_ s: TranscodeSummary) {
        clearBar()
        if style == .json {
            json(.finished(s))
            return
        }
        guard !quiet else { return }
        var audio: [String] = []
        if s.audioStreamsCopied > 0 { audio.append("\(s.audioStreamsCopied) audio copied") }
        if s.audioStreamsReencoded > 0 { audio.append("\(s.audioStreamsReencoded) audio re-encoded") }
        if audio.isEmpty { audio.append("no audio") }
        let wrote = null ? "nothing written (--null)" : "wrote \(s.output)"
        var line = "cropzoom: \(wrote): \(s.outputWidth)x\(s.outputHeight) \(s.videoCodec) \(s.pixelFormat), "
        line += "\(s.framesOut) frames, \(audio.joined(separator: ", ")), "
        line += String(format: "%.2f s (%.0f fps, %.1fx)", s.seconds, s.fps, s.speed)
        if s.corruptSkipped > 0 { line += ", \(s.corruptSkipped) damaged packets skipped" }
        if s.truncated != nil { line += ", input truncated" }
        let dropped = s.framesDropped.values.reduce(0, +)
        if dropped > 0 {
            let by = DropPoint.allCases.compactMap { p in s.framesDropped[p].map { "\($0) \(p.rawValue) late" } }
            line += ", \(dropped) frames dropped (\(by.joined(separator: ", ")))"
        }
        if let end = s.liveEnd { line += ", recording \(end)" }
        if s.duplicateTimestampsDropped > 0 {
            line += ", \(s.duplicateTimestampsDropped) frames with repeated timestamps dropped"
        }
        write(line + "\n")
    }

    /// `--stats`: the engine's own account of the run, on stderr.
    func statistics(_ s: TranscodeSummary) {
        let e = s.engine
        var lines = [
            "cropzoom: stats: threads \(e.threads) (decoder \(e.decoderThreads), encoder \(e.encoderThreads), "
                + "transform workers \(e.transformWorkers)"
                + "\(e.upstreamNice != 0 ? ", demux/decode/transform at nice \(e.upstreamNice)" : "")); cpu "
                + "\(String(format: "%.2f", e.cpuSeconds)) s in \(String(format: "%.2f", s.seconds)) s wall "
                + "(\(String(format: "%.0f", e.cpuSeconds / max(s.seconds, 1e-9) * 100))% of one core)"
        ]
        let busy = EngineStage.allCases.compactMap { k in
            e.busy[k].map {
                String(format: "%@ %.3f s (%.2f ms/frame)", k.rawValue, $0, $0 * 1000 / Double(max(1, s.framesOut)))
            }
        }
        lines.append("cropzoom: stats: busy: " + busy.joined(separator: ", "))
        let waits = e.waits.sorted { $0.key.description < $1.key.description }.map {
            String(format: "%@ %.3f s", $0.key.description, $0.value)
        }
        if !waits.isEmpty { lines.append("cropzoom: stats: waits: " + waits.joined(separator: ", ")) }
        lines.append(
            "cropzoom: stats: pool: capacity \(s.pool.capacity), allocations \(s.pool.allocations), reuses "
                + "\(s.pool.reuses), high-water \(s.pool.highWater)"
        )
        if style == .json {
            json(.statistics(s))
            return
        }
        write(lines.joined(separator: "\n") + "\n")
    }

    func failed(_ e: CropZoomError) {
        clearBar()
        if style == .json { json(.error(.init(message: e.message, exitCode: Int(e.exitCode)))) }
        write("cropzoom: error: \(e.message)\n")
    }

    /// One NDJSON line. As UTF-8 (a path's non-UTF-8 byte stays U+10FF00 + byte): NDJSON must be valid UTF-8.
    private func json(_ record: JobRecord) {
        Stderr.write(record.jsonLine + Data("\n".utf8))
    }
}

/// Standard error, written with write(2): a reader that went away (a closed pipe; SIGPIPE is
/// ignored) must not crash the process — FileHandle.write traps on EPIPE, which would leave the
/// temporary output behind. What cannot be written is dropped.
enum Stderr {
    static func write(_ data: Data) { Descriptor.writeAll(2, data) }
}

extension Stderr {
    /// `text`, a byte of a path that is not UTF-8 written as that byte again (`RawPath`).
    static func write(_ text: String) { write(RawPath.data(text)) }
}

/// `--progress` of the commands that supervise other runs (`batch`, `run`, `bench`): a status
/// line on a terminal (`bar`), a line per update (`lines`), or nothing.
enum StatusStyle: String, ExpressibleByArgument, CaseIterable, Sendable {
    case auto, bar, lines, none

    /// `auto` decided: the bar when stderr is a terminal, else nothing.
    var resolved: StatusStyle { self == .auto ? (isatty(2) != 0 ? .bar : .none) : self }

    /// Shows `text` after `label: ` in this style.
    func say(_ label: String, _ text: String) {
        switch self {
        case .bar: Stderr.write("\r\u{1B}[K\(label): \(text)")
        case .lines: Stderr.write("\(label): \(text)\n")
        case .none, .auto: break
        }
    }

    /// Takes the status line away (before the table or an error is printed).
    func clear() { if self == .bar { Stderr.write("\r\u{1B}[K") } }
}
