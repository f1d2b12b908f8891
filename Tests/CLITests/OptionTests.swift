import CropZoomKit
import Testing

@testable import cropzoom

/// Option parsing and validation of `cropzoom transcode`: what reaches the configuration, and
/// what is refused before any file is opened.
@Suite("Options")
struct OptionTests {
    @Test func defaultsAndFullConfiguration() throws {
        let t = try Transcode.parse(["in.mp4", "-o", "out.mp4"])
        var c = try t.configuration()
        #expect(c.input == "in.mp4" && c.output == "out.mp4")
        #expect(c.geometry == GeometryRequest())
        #expect(c.audio == .auto && c.scaler == .bicubic && !c.overwrite && !c.strict)

        let u = try Transcode.parse([
            "in.mov", "-o", "o.mkv", "--zoom", "1.65", "--center", "0.62,0.4",
            "--crop", "1280:720:10:20", "--size", "1920x-2", "--rotate", "270",
            "--flip", "vertical", "--scaler", "lanczos", "--orientation", "ignore",
            "--codec", "libx265", "--crf", "20", "--preset", "fast", "--bitrate", "2.5M",
            "--pix-fmt", "yuv420p10le", "--audio", "aac", "-y", "--strict",
        ])
        c = try u.configuration()
        #expect(c.geometry.zoom == 1.65)
        #expect(c.geometry.center == UnitPoint(x: 0.62, y: 0.4))
        #expect(c.geometry.crop == .init(width: 1280, height: 720, x: 10, y: 20))
        #expect(c.geometry.size == .init(width: 1920, height: -2))
        #expect(c.geometry.rotate == 270 && c.geometry.flip == .vertical && c.geometry.orientation == .ignore)
        #expect(c.scaler == .lanczos && c.codec == "libx265" && c.crf == 20 && c.preset == "fast")
        #expect(c.bitrate == 2_500_000 && c.pixelFormat == "yuv420p10le" && c.audio == .aac)
        #expect(c.overwrite && c.strict)
        #expect(
            c.kernel == .auto && c.threads == nil && c.decoderThreads == nil && c.encoderThreads == nil
                && c.workers == nil)

        let e = try Transcode.parse([
            "in.mp4", "-o", "o.mp4", "--kernel", "swscale", "--threads", "4",
            "--decoder-threads", "2", "--encoder-threads", "6", "--workers", "3",
        ])
        c = try e.configuration()
        #expect(
            c.kernel == .swscale && c.threads == 4 && c.decoderThreads == 2 && c.encoderThreads == 6 && c.workers == 3)
    }

    @Test func bitrates() {
        #expect(Settings.bitrate("800k") == 800_000)
        #expect(Settings.bitrate("4M") == 4_000_000)
        #expect(Settings.bitrate("123456") == 123_456)
        #expect(Settings.bitrate("fast") == nil)
        #expect(Settings.bitrate("-1M") == nil)
    }

    static let refused: [([String], String)] = [
        (["--zoom", "0.05"], "--zoom"),
        (["--zoom", "nan"], "--zoom"),
        (["--center", "2,2"], "--center"),
        (["--center", "0.5"], "--center"),
        (["--crop", "10:abc"], "--crop"),
        (["--crop", "0:10"], "--crop"),
        (["--crop", "10:10:-1:0"], "--crop"),
        (["--size", "0x0"], "--size"),
        (["--size", "-2x-2"], "--size"),
        (["--size", "640"], "--size"),
        (["--rotate", "45deg"], "--rotate"),
        (["--transform", "2,0,0,2,0"], "--transform"),
        (["--transform", "0,0,0,0,0,0"], "--transform"),
        (["--crop", "0s:640:360, 1s:640:480"], "--crop"),
        (["--crop", "1e20:720"], "--crop"),  // beyond Int: refused, not a trap
        (["--crop", "1280:720:1e300:0"], "--crop"),
        (["--crop", "0s:640:360, 1s:320:180:0"], "--crop"),  // keys with 2 and 3 numbers
        (["--crop", "640.5:360"], "--crop"),
        (["--crf", "-1"], "--crf must be between"),  // negatives get their option's message,
        (["--zoom", "-2"], "--zoom must be a number"),  // not ArgumentParser's "Missing value"
        (["--threads", "-2"], "--threads takes a number"),
        (["--start", "-1"], "--start -1: not a time"),
        (["--rotate", "1e300"], "--rotate"),  // trapped (SIGILL) before, as did --bitrate 1e300
        (["--rotate", "0s:0, 1s:1e7"], "--rotate"),
        (["--bitrate", "1e300"], "--bitrate"),
        (["--transform", "1e300,0,0,1e300,0,0"], "--transform"),  // failed only mid-run before (exit 1)
        (["--transform", "1,0,0,1,1e300,0"], "--transform"),
        (["--flip", "diagonal"], "flip"),
        (["--crf", "99"], "--crf"),
        (["--bitrate", "fast"], "--bitrate"),
        (["--audio", "mp3"], "audio"),
        (["--kernel", "libyuv"], "kernel"),
        (["--workers", "0"], "--workers"),
        (["--decoder-threads", "257"], "--decoder-threads"),
        (["--threads", "1", "--encoder-threads", "2"], "--encoder-threads"),
    ]

    @Test("--size with -1/-2 on either side, the width included (it read as a missing value)")
    func sizeFollowingAspect() throws {
        for (text, w, h) in [("-2x360", -2, 360), ("640x-2", 640, -2), ("-1x720", -1, 720)] {
            let c = try Transcode.parse(["in.mp4", "-o", "out.mp4", "--size", text]).configuration()
            #expect(
                c.geometry.size?.width == w && c.geometry.size?.height == h,
                "\(text): \(String(describing: c.geometry.size))")
        }
    }

    @Test(arguments: refused)
    func invalidOptionsAreRefused(_ args: [String], _ mentions: String) {
        do {
            _ = try Transcode.parse(["in.mp4", "-o", "out.mp4"] + args)
            Issue.record("\(args) was accepted")
        } catch {
            #expect(CropZoom.exitCode(for: error) == .validationFailure)
            #expect(Transcode.message(for: error).contains(mentions), "\(Transcode.message(for: error))")
        }
    }

    @Test func outputIsRequired() {
        #expect(throws: (any Error).self) { _ = try Transcode.parse(["in.mp4"]) }
    }

    @Test func transcodeIsTheDefaultCommand() throws {
        let root = try CropZoom.parseAsRoot(["in.mp4", "-o", "out.mp4", "--zoom", "2"])
        let t = try #require(root as? Transcode)
        #expect(try t.configuration().geometry.zoom == 2)
    }
}
