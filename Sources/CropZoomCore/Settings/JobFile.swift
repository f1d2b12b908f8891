import Foundation
import SystemPackage
import Yams

/// A job file (`cropzoom run JOB.yaml|JOB.json`): shared `defaults` and a list of `clips`, each with its input,
/// output and settings, decoded straight into one ``TranscodeConfiguration`` per clip.
///
/// Keys are the settings' keys (``Setting/key``); numbers and lists are written as the command line writes them
/// (`center: [0.6, 0.4]` is `0.6,0.4`). Relative paths are relative to the job file's folder. Every error is a
/// `.usage` error whose description names the file, the clip and the field:
/// `job.yaml: clips[1] (a.mp4): zoom must be a number ≥ 0.1 (got 0.05)`.
public struct JobFile: Sendable {
    /// One clip, validated.
    public struct Clip: Sendable {
        /// `clips[I] (INPUT)`, as messages name the clip.
        public var label: String
        public var input: String
        public var output: String
        /// The clip may replace an existing output (`overwrite: true`).
        public var overwrite: Bool
        /// The settings given, `defaults` merged under the clip's own.
        public var settings: Settings
        public var configuration: TranscodeConfiguration
    }

    /// The job file's path, as given.
    public var path: String
    public var clips: [Clip]

    /// Fields only a clip gives (not a setting, not in `defaults`).
    public static let clipFields: Set<String> = ["input", "output", "overwrite"]

    /// Decodes a job file's text; `path` gives the format (its extension), the folder relative paths start
    /// from, and the name in messages.
    public init(text: String, path: String) throws(CropZoomError) {
        self.path = path
        let shown = path == "-" ? "stdin" : path
        func refuse(_ reason: String) -> CropZoomError { CropZoomError(.usage, path: shown, reason: reason) }
        let ext =
            path == "-"
            ? (text.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("{") ? "json" : "yaml")
            : (path as NSString).pathExtension.lowercased()
        let root: Value
        do {
            switch ext {
            case "json": root = try JSONDecoder().decode(Value.self, from: Data(text.utf8))
            case "yaml", "yml": root = try YAMLDecoder().decode(Value.self, from: text)
            default: throw refuse("a job file is .json, .yaml or .yml")
            }
        } catch let error as CropZoomError {
            throw error
        } catch {
            throw refuse("not valid \(ext == "json" ? "JSON" : "YAML"): \(JobFile.firstLine(of: error))")
        }
        guard case .mapping(let top) = root else {
            throw refuse("the top level must be a mapping with `clips` (and optional `defaults`)")
        }
        for key in top.keys.sorted() where !["defaults", "clips"].contains(key) {
            throw refuse("unknown top-level field '\(key)' (expected defaults, clips)")
        }
        var defaults = Settings()
        if let given = top["defaults"] {
            guard case .mapping(let fields) = given else { throw refuse("defaults: must be a mapping") }
            for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
                guard let setting = Setting(rawValue: key), setting.inJobFiles else {
                    let only = JobFile.clipFields.contains(key) ? " (only a clip can give it)" : ""
                    throw refuse("defaults: unknown field '\(key)'\(only)")
                }
                defaults[setting] = try JobFile.text(of: value, for: setting) { why in
                    refuse("defaults: \(key): \(why)")
                }
            }
        }
        guard case .list(let list) = top["clips"], !list.isEmpty else {
            throw refuse("clips: must be a non-empty list")
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        func resolve(_ p: String) -> String {
            p.hasPrefix("/") || p == "-" ? p : folder.appendingPathComponent(p).standardized.path
        }

        clips = []
        for (i, item) in list.enumerated() {
            guard case .mapping(let fields) = item else { throw refuse("clips[\(i)]: must be a mapping") }
            var label = "clips[\(i)]"
            if case .text(let input) = fields["input"] { label += " (\(input))" }
            let clipLabel = label
            func fail(_ field: String, _ why: String) -> CropZoomError {
                CropZoomError(.usage, what: clipLabel, path: shown, reason: "\(field): \(why)")
            }
            var clipSettings = Settings()
            for (key, value) in fields.sorted(by: { $0.key < $1.key }) where !JobFile.clipFields.contains(key) {
                guard let setting = Setting(rawValue: key), setting.inJobFiles else { throw fail(key, "unknown field") }
                clipSettings[setting] = try JobFile.text(of: value, for: setting) { why in fail(key, why) }
            }
            guard case .text(let input) = fields["input"], !input.isEmpty else {
                throw fail("input", "missing (a path)")
            }
            guard case .text(let output) = fields["output"], !output.isEmpty else {
                throw fail("output", "missing (a path)")
            }
            var overwrite = false
            if let value = fields["overwrite"] {
                guard case .bool(let b) = value else { throw fail("overwrite", "must be true or false") }
                overwrite = b
            }
            var settings = defaults.merging(clipSettings)
            // A path file, a contact sheet or a reference, like the clip's own files, is relative to the job file's folder.
            for setting in [Setting.pathIn, .pathOut, .preview, .reference] {
                if let p = settings[setting], !p.isEmpty { settings[setting] = resolve(p) }
            }
            var clip = Clip(
                label: label, input: resolve(input), output: resolve(output), overwrite: overwrite,
                settings: settings, configuration: TranscodeConfiguration(input: "", output: ""))
            do {
                clip.configuration = try settings.configuration(input: clip.input, output: clip.output)
            } catch {
                throw describe(error, clip: clip)
            }
            clips.append(clip)
        }
    }

    /// An error about `clip` (its settings refused, or its plan failing) as the job file says it:
    /// `PATH: clips[I] (INPUT): FIELD …`, settings named by their keys, the field first. The clip's own input is
    /// not named again; another file the error concerns (its output) is, in brackets.
    public func describe(_ error: CropZoomError, clip: Clip) -> CropZoomError {
        var about = error
        about.path = nil
        var text = about.description
        if let path = error.path, path != clip.input { text += " (\(path))" }
        if let key = error.setting?.key, !text.hasPrefix(key + " "), !text.hasPrefix(key + ":") {
            text = "\(key): \(text)"
        } else if error.setting == nil, error.kind == .usage {
            text = "settings: \(text)"
        }
        var described = CropZoomError(
            error.kind, what: clip.label, path: path == "-" ? "stdin" : path, setting: error.setting, reason: text)
        described.code = error.code
        return described
    }

    // MARK: Values

    /// A value as a job file holds it.
    enum Value: Decodable, Sendable {
        case bool(Bool)
        case number(Double)
        case text(String)
        case list([Value])
        case mapping([String: Value])
        case null

        init(from decoder: any Decoder) throws {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self = .null
            } else if let b = try? single.decode(Bool.self) {
                self = .bool(b)
            } else if let n = try? single.decode(Double.self) {
                self = .number(n)
            } else if let s = try? single.decode(String.self) {
                self = .text(s)
            } else if let l = try? single.decode([Value].self) {
                self = .list(l)
            } else {
                self = .mapping(try single.decode([String: Value].self))
            }
        }
    }

    /// A setting's value as text, the way the command line would write it.
    static func text(
        of value: Value, for setting: Setting, refuse: (String) -> CropZoomError
    ) throws(CropZoomError) -> String? {
        if setting.isSwitch {
            guard case .bool(let on) = value else { throw refuse("must be true or false") }
            return on ? "true" : nil
        }
        if setting.isRepeatable, case .list(let items) = value {
            var lines: [String] = []
            for item in items {
                guard case .text(let s) = item else { throw refuse("must be a list of text") }
                lines.append(s)
            }
            return lines.isEmpty ? nil : lines.joined(separator: "\n")
        }
        switch value {
        case .text(let s): return s
        case .number(let n): return number(n)
        case .bool(let b): throw refuse("must be a number or text, not \(b)")
        case .list(let items)
        where (setting == .center && items.count == 2) || (setting == .transform && items.count == 6):
            var numbers: [String] = []
            for item in items {
                guard case .number(let n) = item else { throw refuse("must be a list of numbers") }
                numbers.append(number(n))
            }
            return numbers.joined(separator: ",")
        default: throw refuse("must be a number or text")
        }
    }

    /// `2` for 2.0, `0.65` for 0.65: a number as a person writes it.
    static func number(_ n: Double) -> String {
        n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : "\(n)"
    }

    static func firstLine(of error: any Error) -> String {
        let text: String
        switch error {
        case DecodingError.dataCorrupted(let context):
            text = (context.underlyingError.map { "\($0)" }) ?? context.debugDescription
        default: text = "\(error)"
        }
        return text.split(separator: "\n").first.map(String.init) ?? text
    }
}
