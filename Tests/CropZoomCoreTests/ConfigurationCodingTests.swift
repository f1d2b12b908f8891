import Foundation
import Testing

@testable import CropZoomCore

/// The configuration as JSON: every property round-trips, an absent key keeps its default, values a person
/// writes as text are that text, and bad values fail to decode with the reason.
@Suite("Configuration coding")
struct ConfigurationCodingTests {
    /// A configuration with every stored property (and every geometry property) set to something other than its
    /// default; `everyPropertyIsSet` fails when a property is added without a value here.
    static var full: TranscodeConfiguration {
        var c = TranscodeConfiguration(input: "in\u{10FFFF}.mov", output: "out.mkv")
        var g = GeometryRequest()
        g.zoom = 1.65
        g.center = UnitPoint(x: 0.6, y: 0.4)
        g.crop = .init(width: 640, height: 360, x: nil, y: 20)
        g.size = .init(width: 1280, height: -2)
        g.fit = .contain
        g.rotate = 90
        g.flip = .horizontal
        g.orientation = .ignore
        g.zoomTrack = Track(keys: [.init(time: 0, value: [1]), .init(time: 4, value: [1.65])], ease: .smooth)
        g.centerTrack = Track(keys: [.init(time: 0, value: [0.5, 0.5]), .init(time: 2, value: [0.6, 0.4])])
        g.cropTrack = Track(constant: [640, 360, .nan, .nan])
        g.aspect = .init(width: 9, height: 16)
        g.angle = Track(constant: [7.5])
        g.transform = Track(constant: [1, 0, 0, 1, -10, 0])
        c.geometry = g
        c.scaler = .lanczos
        c.kernel = .zimg
        c.deinterlace = .on
        c.codec = "libx265"
        c.crf = 20
        c.preset = "slow"
        c.profile = "main10"
        c.level = "5.1"
        c.tune = "grain"
        c.tag = "hev1"
        c.gop = 48
        c.encoderOptions = ["x265-params": "aq-mode=2"]
        c.bitrate = 4_000_000
        c.pixelFormat = "yuv420p10le"
        c.toneMap = .hable
        c.audio = .aac
        c.audioCodec = "opus"
        c.audioBitrate = 96_000
        c.audioChannels = .layout("5.1")
        c.audioStreams = [.language("eng"), .index(2)]
        c.streamKinds.subtitles = nil
        c.streamKinds.data = false
        c.streamKinds.cover = false
        c.background = .color(red: 16, green: 32, blue: 48)
        c.threads = 4
        c.decoderThreads = 2
        c.encoderThreads = 3
        c.workers = 2
        c.frameLimit = 100
        c.start = 1.5
        c.end = 4
        c.format = "matroska"
        c.null = true
        c.keepStartTime = true
        c.overwrite = true
        c.force = true
        c.strict = true
        c.reference = "good.mp4"
        c.verbose = true
        c.live = true
        c.inputFormat = "lavfi"
        c.inputOptions = ["framerate": "30"]
        c.frameRate = "30000/1001"
        c.maxLatency = 0.5
        c.liveTimeout = 3
        c.audioInput = "pulse:default"
        c.audioInputOptions = ["sample_rate": "48000"]
        c.segment = 10
        var s = Stabilization()
        s.mode = .tripod
        s.smoothing = 2
        s.maxZoom = 1.05
        s.border = .fill
        s.pathIn = "in.csv"
        s.pathOut = "out.csv"
        s.path = CameraPath(
            width: 640, height: 360,
            samples: [
                .init(time: 0, motion: .identity, measured: true, correction: Similarity(a: 0.95, b: 0, tx: 1, ty: 2)),
                .init(
                    time: 0.04, motion: Similarity(x: 1.5, y: -2, degrees: 0.3, scale: 1.001), measured: false,
                    correction: Similarity(x: 3, y: 1, degrees: -0.2, scale: 0.96)),
            ])
        c.stabilize = s
        var r = Reframing(follow: .faces)
        r.pathIn = "window.csv"
        r.pathOut = "chosen.csv"
        r.preview = "sheet.png"
        r.path = ReframePath(
            width: 1280, height: 720,
            samples: [
                .init(
                    time: 0, x: 10, y: 0, width: 404, height: 720,
                    subject: Rect(x: 100, y: 200, width: 120, height: 120)),
                .init(time: 0.04, x: 12.5, y: 0, width: 404, height: 720, cut: true, signal: "track"),
            ])
        c.reframe = r
        return c
    }

    /// The labels of the properties that hold the same value in `a` and `b`.
    static func sameValues(_ a: Any, _ b: Any) -> [String] {
        let left = Mirror(reflecting: a).children
        let right = Dictionary(uniqueKeysWithValues: Mirror(reflecting: b).children.map { ($0.label!, $0.value) })
        return left.compactMap { child in
            String(describing: child.value) == String(describing: right[child.label!]!) ? child.label! : nil
        }
    }

    static func json(_ c: TranscodeConfiguration) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(c), as: UTF8.self)
    }

    static func decode(_ text: String) throws -> TranscodeConfiguration {
        try JSONDecoder().decode(TranscodeConfiguration.self, from: Data(text.utf8))
    }

    @Test("the sample sets every stored property, so the round trip below covers them all")
    func everyPropertyIsSet() {
        let plain = TranscodeConfiguration(input: "a", output: "b")
        let unset = Self.sameValues(Self.full, plain).filter { $0 != "input" && $0 != "output" }
        #expect(unset.isEmpty, "properties left at their default in the sample: \(unset)")
        #expect(Self.sameValues(Self.full.geometry, GeometryRequest()).isEmpty)
    }

    @Test("every property survives JSON and back, NaN crop keys as null, text values as text")
    func roundTrip() throws {
        let text = try Self.json(Self.full)
        let back = try Self.decode(text)
        #expect(back == Self.full, "\(text)")
        #expect(Self.sameValues(back, Self.full).count == Mirror(reflecting: back).children.count)
        #expect(text.contains(##""background":"#102030""##), "\(text)")
        #expect(text.contains(#""audioChannels":"5.1""#) && text.contains(#""audioStreams":["eng",2]"#), "\(text)")
        #expect(text.contains(#""center":{"x":0.6,"y":0.4}"#), "\(text)")
        #expect(text.contains(#"{"time":0,"value":[640,360,null,null]}"#), "\(text)")
        #expect(text.contains(#""subtitles":null"#), "\(text)")
        // The default configuration round-trips too (nil optionals absent, every subtitle kept: []).
        let plain = TranscodeConfiguration(input: "a.mov", output: "b.mp4")
        #expect(try Self.decode(Self.json(plain)) == plain)
    }

    @Test("an absent key keeps its default; input and output are required")
    func defaults() throws {
        let c = try Self.decode(
            #"{"input": "a.mov", "output": "b.mp4", "geometry": {"zoom": 2}, "audioChannels": 2, "background": "blur","#
                + #" "streamKinds": {"cover": false}, "geometry2": 1}"#)
        var expected = TranscodeConfiguration(input: "a.mov", output: "b.mp4")
        expected.geometry.zoom = 2
        expected.audioChannels = .count(2)
        expected.background = .blur
        expected.streamKinds.cover = false
        #expect(c == expected)
        #expect(c.streamKinds.subtitles == [] && c.geometry.center == .middle && c.maxLatency == 1)
        #expect(throws: DecodingError.self) { try Self.decode(#"{"output": "b.mp4"}"#) }
    }

    @Test("a value that means nothing fails with the reason")
    func badValues() throws {
        do {
            _ = try Self.decode(#"{"input": "a", "output": "b", "background": "plaid"}"#)
            Issue.record("decoded a plaid background")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription.contains("background takes black, white, gray, #RRGGBB"))
        }
        #expect(throws: DecodingError.self) { try Self.decode(#"{"input": "a", "output": "b", "scaler": "fast"}"#) }
        #expect(throws: DecodingError.self) {
            try Self.decode(#"{"input": "a", "output": "b", "geometry": {"angle": {"keys": []}}}"#)
        }
    }

    @Test("UnitPoint: --center's text and the middle")
    func unitPoint() throws {
        #expect(UnitPoint.middle == UnitPoint(x: 0.5, y: 0.5) && "\(UnitPoint(x: 0.25, y: 1))" == "0.25,1.0")
        let c = try Settings([.center: "0.62,0.4"]).configuration(input: "a", output: "b")
        #expect(c.geometry.center == UnitPoint(x: 0.62, y: 0.4))
    }

    @Test("messages name standard input stdin, any other input by its path")
    func inputName() {
        #expect(TranscodeConfiguration(input: "-", output: "o.mp4").inputName == "stdin")
        #expect(TranscodeConfiguration(input: "a/-.mp4", output: "o.mp4").inputName == "a/-.mp4")
    }
}
