// ZoomFromCSV — CropZoomKit used from Swift, without the cropzoom CLI.
//
// Reads a CSV of clips — `input,output,center_x,center_y,zoom` with a header line; fields quoted as
// RFC 4180 quotes them (`"clip, take 2.mp4"`, `""` for a quote); relative paths are relative to the
// CSV; lines starting with # are skipped — and zooms each clip, printing
// progress from the job's event stream. Ctrl-C cancels the running clip (nothing is left of it)
// and stops.
//
//     swift run ZoomFromCSV clips.csv
//
// Exit status: 0 when every clip was done, 1 when one failed, 2 for a bad CSV, 130 on Ctrl-C.

import CropZoomKit
import Foundation

struct Row {
    var input: String, output: String, center: UnitPoint, zoom: Double
}

func fail(_ message: String, _ code: Int32) -> Never {
    FileHandle.standardError.write(Data("ZoomFromCSV: \(message)\n".utf8))
    exit(code)
}

/// The records of a CSV text as RFC 4180 reads them: fields separated by commas, a field in double quotes may hold
/// commas, line breaks and quotes (doubled: `""`). Each record comes with the line it starts on; a line starting
/// with # outside quotes is a comment. Nil when a quote is never closed.
func parseCSV(_ text: String) -> [(line: Int, fields: [String])]? {
    var records: [(line: Int, fields: [String])] = []
    var fields: [String] = []
    var field = ""
    var quoted = false
    var wasQuoted = false
    var atRecordStart = true
    var comment = false
    var line = 1
    var start = 1
    var chars = Array(text)[...]
    while let c = chars.popFirst() {
        if comment {
            if c == "\n" || c == "\r\n" {
                comment = false
                line += 1
            }
            continue
        }
        if quoted {
            if c == "\"" {
                if chars.first == "\"" {
                    field.append("\"")
                    chars.removeFirst()
                } else {
                    quoted = false
                }
            } else {
                if c == "\n" || c == "\r\n" { line += 1 }
                field.append(c)
            }
            continue
        }
        switch c {
        case "#" where atRecordStart:
            comment = true
        case "\"" where field.isEmpty && !wasQuoted:
            quoted = true
            wasQuoted = true
            atRecordStart = false
        case ",":
            fields.append(wasQuoted ? field : field.trimmingCharacters(in: .whitespaces))
            field = ""
            wasQuoted = false
            atRecordStart = false
        case "\n", "\r\n":
            fields.append(wasQuoted ? field : field.trimmingCharacters(in: .whitespaces))
            if fields != [""] { records.append((start, fields)) }
            fields = []
            field = ""
            wasQuoted = false
            atRecordStart = true
            line += 1
            start = line
        default:
            field.append(c)
            if c != " " { atRecordStart = false }
        }
    }
    if quoted { return nil }
    if !field.isEmpty || !fields.isEmpty || wasQuoted {
        fields.append(wasQuoted ? field : field.trimmingCharacters(in: .whitespaces))
        records.append((start, fields))
    }
    return records
}

/// The CSV's rows, checked; relative paths resolved against the CSV's folder.
func readCSV(_ path: String) -> [Row] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { fail("\(path): cannot read", 2) }
    guard let records = parseCSV(text) else { fail("\(path): a quoted field is never closed", 2) }
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
    func resolve(_ p: String) -> String { p.hasPrefix("/") ? p : folder.appendingPathComponent(p).standardized.path }
    guard let header = records.first?.fields, header == ["input", "output", "center_x", "center_y", "zoom"] else {
        fail("\(path): the first line must be: input,output,center_x,center_y,zoom", 2)
    }
    var rows: [Row] = []
    for (line, f) in records.dropFirst() {
        guard f.count == 5, let x = Double(f[2]), let y = Double(f[3]), let z = Double(f[4]) else {
            fail("\(path):\(line): expected input,output,center_x,center_y,zoom with numbers, got \(f)", 2)
        }
        rows.append(Row(input: resolve(f[0]), output: resolve(f[1]), center: UnitPoint(x: x, y: y), zoom: z))
    }
    if rows.isEmpty { fail("\(path): no clips", 2) }
    return rows
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let csv = arguments.first else { fail("usage: ZoomFromCSV clips.csv", 2) }
let rows = readCSV(csv)
ProcessSignals.install()

var failures = 0
for (i, row) in rows.enumerated() {
    var config = TranscodeConfiguration(input: row.input, output: row.output)
    config.geometry.zoom = row.zoom
    config.geometry.center = row.center
    let job = TranscodeJob(configuration: config)

    // Progress from the event stream; Ctrl-C (the handlers installed above) cancels the job.
    let watcher = Task {
        for await event in job.events {
            switch event {
            case .progress(let p):
                let percent = p.fraction.map { String(format: "%3.0f%%", $0 * 100) } ?? "    "
                print("[\(i + 1)/\(rows.count)] \(percent) \(p.frames) frames  \(row.input)")
            case .notice(let text):
                print("[\(i + 1)/\(rows.count)] note: \(text)")
            case .warning(let text):
                print("[\(i + 1)/\(rows.count)] warning: \(text)")
            case .done, .failed:
                break  // run()'s outcome, printed below
            }
        }
    }
    let guardian = Task {
        while !Task.isCancelled {
            if ProcessSignals.pending != 0 {
                job.cancel()
                return
            }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
    }
    do {
        let summary = try await job.run()
        print(
            "[\(i + 1)/\(rows.count)] done: \(summary.output), \(summary.framesOut) frames, "
                + "\(String(format: "%.1f", summary.fps)) fps"
        )
    } catch {
        if error.kind == .cancelled || ProcessSignals.pending != 0 {
            print("[\(i + 1)/\(rows.count)] cancelled: \(row.input) (nothing written)")
            guardian.cancel()
            let signal = ProcessSignals.pending
            exit(signal != 0 ? 128 + signal : 130)  // SIGTERM → 143, Ctrl-C → 130
        }
        print("[\(i + 1)/\(rows.count)] failed: \(error.description)")
        failures += 1
    }
    guardian.cancel()
    await watcher.value
}
exit(failures == 0 ? 0 : 1)
