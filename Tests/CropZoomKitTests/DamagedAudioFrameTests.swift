import CFFmpeg
import CropZoomCore
import Foundation
import Testing

@testable import CropZoomFFmpeg

/// Damaged AAC can decode to a frame of a layout swresample refuses (a program config element read from garbage gave
/// 47 channels; found by the fuzz harness, Tests/fuzz/regressions/case-09edaa1f5c.json). Such a frame is damaged
/// sound: it is counted, stands as silence of its length (the sound after it stays in step with the pictures), and
/// the resampler keeps the set-up it had, so the frames after it convert.
@Suite("Damaged audio frames")
struct DamagedAudioFrameTests {
    static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("samples/std-h264-aac.mp4").path

    /// A frame of `samples` planar float samples at `rate` in `channels` channels (their default layout, or an
    /// unspecified order where there is none), as a decoder hands it over.
    static func frame(channels: Int32, samples: Int32, rate: Int32 = 48000) throws -> Frame {
        let f = try Frame()
        f.pointer.pointee.nb_samples = samples
        f.pointer.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        f.pointer.pointee.sample_rate = rate
        av_channel_layout_default(&f.pointer.pointee.ch_layout, channels)
        try #require(av_frame_get_buffer(f.pointer, 0) >= 0)
        return f
    }

    @Test("a frame of a layout swresample refuses is counted and stands as silence; the frames after it convert")
    func refusedLayoutStandsAsSilence() throws {
        let input = try InputFormat(path: Self.sample, probe: true)
        let audio = try #require((0..<input.streamCount).first { input.stream($0).isAudio })
        let t = try AudioTranscoder(input: input, streamIndex: audio, encoderName: "aac", globalHeader: true)
        try t.resample(Self.frame(channels: 2, samples: 1024))
        #expect(t.fifo.count == 1024)
        #expect(t.corruptPackets == 0)
        try t.resample(Self.frame(channels: 47, samples: 1024))
        #expect(t.corruptPackets == 1, "the refused frame is counted")
        #expect(t.fifo.count == 2048, "as much silence as the frame lasts")
        try t.resample(Self.frame(channels: 2, samples: 1024))
        #expect(t.fifo.count == 3072, "the resampler kept its set-up")
        #expect(t.corruptPackets == 1)
    }

    @Test("around a refused frame the resampler keeps the samples it holds back (44.1 kHz sound into 48 kHz)")
    func refusedFrameKeepsTheResamplersDelay() throws {
        let input = try InputFormat(path: Self.sample, probe: true)
        let audio = try #require((0..<input.streamCount).first { input.stream($0).isAudio })
        let plain = try AudioTranscoder(input: input, streamIndex: audio, encoderName: "aac", globalHeader: true)
        let damaged = try AudioTranscoder(input: input, streamIndex: audio, encoderName: "aac", globalHeader: true)
        for _ in 0..<2 { try plain.resample(Self.frame(channels: 2, samples: 1024, rate: 44100)) }
        try damaged.resample(Self.frame(channels: 2, samples: 1024, rate: 44100))
        try damaged.resample(Self.frame(channels: 47, samples: 1024, rate: 44100))
        try damaged.resample(Self.frame(channels: 2, samples: 1024, rate: 44100))
        // 1024 samples at 44.1 kHz last 1115 at 48 kHz (rounded to the nearest).
        #expect(damaged.fifo.count == plain.fifo.count + 1115)
        #expect(damaged.corruptPackets == 1)
    }

    @Test("with --strict such a frame is an error naming the input, the layout and the setting")
    func strictRefusesTheFrame() throws {
        let input = try InputFormat(path: Self.sample, probe: true)
        let audio = try #require((0..<input.streamCount).first { input.stream($0).isAudio })
        let t = try AudioTranscoder(
            input: input, streamIndex: audio, encoderName: "aac", globalHeader: true, strict: true)
        try t.resample(Self.frame(channels: 2, samples: 1024))
        let error = #expect(throws: CropZoomError.self) { try t.resample(Self.frame(channels: 47, samples: 1024)) }
        #expect(error?.setting == .strict)
        #expect(error?.path == Self.sample)
        #expect(error?.description.contains("a decoded audio frame of 47 channels that cannot be converted") == true)
        #expect(t.fifo.count == 1024, "nothing written for it")
    }
}
