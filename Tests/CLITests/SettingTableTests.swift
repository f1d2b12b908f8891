import CropZoomKit
import Foundation
import Testing

@testable import cropzoom

/// The library's table of settings is what the command line offers: one option per setting, named and described
/// by the table, and a setting given on the command line or in a job file makes the same configuration.
@Suite("Setting table")
struct SettingTableTests {
    /// A value other than the default for every setting (the Geometry … Streams samples, and the rest).
    static func sample(_ setting: Setting) -> String? {
        let others: [Setting: String] = [
            .strict: "", .force: "", .threads: "4", .decoderThreads: "2", .encoderThreads: "3", .workers: "2",
            .live: "", .inputFormat: "lavfi", .inputOption: "framerate=30", .maxLatency: "0.5", .liveTimeout: "3",
            .audioInput: "alsa:hw:0,0", .audioInputOption: "channels=2", .segment: "4", .framerate: "24",
            .stabilize: "", .stabilizeSmoothing: "2", .stabilizeMode: "tripod", .stabilizeCrop: "1.05",
            .stabilizeBorder: "fill", .pathIn: "/clips/path.csv", .pathOut: "/clips/chosen.csv", .aspect: "9:16",
            .follow: "faces", .preview: "/clips/sheet.png", .reference: "/clips/good.mp4",
        ]
        return others[setting] ?? BenchOptionTests.samples[setting.longName]
    }

    @Test("every setting is a transcode option with the table's name and help")
    func everySettingIsAnOption() throws {
        let dump = Transcode.fullMessage(
            for: try #require(#expect(throws: (any Error).self) { try Transcode.parse(["--experimental-dump-help"]) }))
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any])
        let arguments = try #require((tool["command"] as? [String: Any])?["arguments"] as? [[String: Any]])
        var abstracts: [String: String] = [:]
        for argument in arguments {
            guard let name = ((argument["names"] as? [[String: Any]])?.first?["name"]) as? String else { continue }
            abstracts[name] = argument["abstract"] as? String
        }
        for setting in Setting.allCases {
            let abstract = try #require(abstracts[setting.longName], "\(setting.flag) is not an option of transcode")
            #expect(abstract.hasPrefix(setting.help(naming: \.flag)), "\(setting.flag): \(abstract)")
        }
    }

    @Test("a setting on the command line and the same key in a job file make the same configuration")
    func commandLineAndJobFileAgree() throws {
        for setting in Setting.allCases {
            let value = try #require(Self.sample(setting), "\(setting.key) has no sample here")
            let argv = ["/clips/a.mp4", "-o", "/clips/o.mkv", setting.flag] + (setting.isSwitch ? [] : [value])
            let t = try Transcode.parse(argv)
            let given = Settings([setting: setting.isSwitch ? "true" : value])
            #expect(t.settings == given, "\(setting.flag)")
            #expect(try Transcode.parse(["/clips/a.mp4", "-o", "/clips/o.mkv"] + given.arguments()).settings == given)
            guard setting.inJobFiles else { continue }
            let written = setting.isSwitch ? "true" : "'\(value)'"
            let yaml = "clips:\n  - {input: a.mp4, output: o.mkv, \(setting.key): \(written)}\n"
            let job = try JobFile(text: yaml, path: "/clips/job.yaml")
            #expect(try t.configuration() == job.clips[0].configuration, "\(setting.key)")
        }
    }

    @Test("library errors name settings; the command line writes them as flags, a job file as keys")
    func errorsNameSettings() throws {
        let cases: [([String], String)] = [
            (["--crop", "0s:640:360, 1s:640:480"], "--crop keyframes must keep one aspect ratio"),
            (["--start", "3", "--end", "2"], "--end 2 is not after --start 3"),
            (["--threads", "1", "--workers", "2"], "--workers needs more than one thread: --threads 1 runs"),
        ]
        for (args, message) in cases {
            do {
                _ = try Transcode.parse(["a.mp4", "-o", "o.mkv"] + args)
                Issue.record("\(args) accepted")
            } catch {
                #expect(Transcode.message(for: error).hasPrefix(message), "\(Transcode.message(for: error))")
            }
        }
        let error = CropZoomError(.usage, setting: .pixFmt, reason: "\(setting: .pixFmt) p010: use \(setting: .codec)")
        #expect(error.message == "--pix-fmt p010: use --codec" && error.description == "pix_fmt p010: use codec")
    }
}
