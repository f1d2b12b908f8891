import CFFmpeg
import Testing

@testable import CropZoomFFmpeg
@testable import CropZoomKit

@Suite("Rate control settings")
struct RateControlTests {
    static func encoder(_ name: String) throws -> UnsafePointer<AVCodec> {
        try #require(avcodec_find_encoder_by_name(name), "\(name) is not in this FFmpeg")
    }

    @Test("the --crf range: the encoder's crf AVOption where it is bounded, x264/x265's own 0–51 where it is not")
    func crfRanges() throws {
        #expect(VideoEncoder.crfRange(try Self.encoder("libx264")) == 0...51)
        #expect(VideoEncoder.crfRange(try Self.encoder("libx265")) == 0...51)
        #expect(VideoEncoder.crfRange(try Self.encoder("libvpx-vp9")) == 0...63)
        #expect(VideoEncoder.crfRange(try Self.encoder("libaom-av1")) == 0...63)
        #expect(VideoEncoder.crfRange(try Self.encoder("libsvtav1")) == 0...63)
        #expect(VideoEncoder.crfRange(try Self.encoder("mpeg4")) == nil, "no crf option")
    }

    @Test("refused: --crf out of range, --crf with --bitrate (not constrained quality), --bitrate when lossless")
    func refusals() throws {
        func reason(_ name: String, crf: Double?, bitrate: Int?) throws -> String? {
            let codec = try Self.encoder(name)
            do {
                try VideoEncoder.checkRateControl(codec: codec, crf: crf, bitrate: bitrate)
                return nil
            } catch {
                #expect(error.kind == .usage)
                return error.reason(naming: \.flag)
            }
        }
        #expect(try reason("libx264", crf: 60, bitrate: nil) == "--crf 60: libx264 takes 0–51")
        #expect(try reason("libx264", crf: 51, bitrate: nil) == nil)
        #expect(try reason("libvpx-vp9", crf: 63, bitrate: nil) == nil)
        let both = "use one of --crf or --bitrate"
        #expect(try reason("libx264", crf: 20, bitrate: 1_000_000) == "\(both): libx264 would ignore one of them")
        #expect(try reason("libsvtav1", crf: 20, bitrate: 1_000_000)?.hasPrefix(both) == true)
        for name in ["libvpx-vp9", "libvpx", "libaom-av1"] {
            #expect(try reason(name, crf: 20, bitrate: 1_000_000) == nil, "\(name)")
        }
        for name in ["ffv1", "huffyuv", "ffvhuff", "utvideo", "png", "rawvideo"] {
            let lossless = "--bitrate: \(name) is lossless and has no bit rate to set"
            #expect(try reason(name, crf: nil, bitrate: 1_000_000) == lossless)
        }
        for name in ["libx264", "mjpeg", "mpeg4"] {
            #expect(try reason(name, crf: nil, bitrate: 1_000_000) == nil, "\(name)")
        }
    }
}
