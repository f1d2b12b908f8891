// ZoomFromCSV — CropZoomKit used from Swift, without the cropzoom CLI.
//
// Reads a CSV of clips — `input,output,center_x,center_y,zoom` with a header line; relative paths
// are relative to the CSV; lines starting with # are skipped — and zooms each clip, printing
// progress from the job's event stream. Ctrl-C cancels the running clip (nothing is left of it)
// and stops.
//
//     swift run ZoomFromCSV clips.csv
//
// Exit status: 0 when every clip was done, 1 when one failed, 2 for a bad CSV, 130 on Ctrl-C.

import CropZoomKit
import Foundation

struct Row {
    var input: String, output: String, center: (Double, Double), zoom: Double
}

func fail(_ message: String, _ code: Int32) -> Never {
    FileHandle.standardError.write(Data("ZoomFromCSV: \(message)\n".utf8))
    exit(code)
}

/// The CSV's rows, checked; relative paths resolved against the CSV's folder.
func readCSV(_ path: String) -> [Row] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { fail("\(path): cannot read", 2) }
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
    func resolve(_ p: String) -> String { p.hasPrefix("/") ? p : folder.appendingPathComponent(p).standardized.path }
    var rows: [Row] = []
    let lines = text.split(whereSeparator: \.isNewline).map(String.init)
    guard let header = lines.first?.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }),
        header == ["input", "output", "center_x", "center_y", "zoom"]
    else {
        fail("\(path): the first line must be: input,output,center_x,center_y,zoom", 2)
    }
    for (n, line) in lines.enumerated().dropFirst()
    where !line.hasPrefix("#") && !line.trimmingCharacters(in: .whitespaces).isEmpty {
        let f = line.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard f.count == 5, let x = Double(f[2]), let y = Double(f[3]), let z = Double(f[4]) else {
            fail("\(path):\(n + 1): expected input,output,center_x,center_y,zoom with numbers, got '\(line)'", 2)
        }
        rows.append(Row(input: resolve(f[0]), output: resolve(f[1]), center: (x, y), zoom: z))
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
