import CropZoomFFmpeg
import Foundation

/// `--audio-input`: the capture device whose sound a live recording keeps instead of the input's, opened beside the
/// input. The engine reads it on a thread of its own; ``LiveClock`` puts its times on the input's clock.
struct AudioInputSetup {
    let demuxer: Demuxer
    /// Its first audio stream (the one recorded; any other is dropped).
    let audioIndex: Int
    /// When it was opened, on the wall clock (seconds since 1970).
    let openedAt: Double

    init(_ cfg: TranscodeConfiguration, watch: IOWatch?) throws(CropZoomError) {
        guard let device = cfg.audioDevice, let name = cfg.audioInput else {
            throw CropZoomError(.usage, setting: .audioInput, reason: "\(setting: .audioInput) takes FORMAT:DEVICE")
        }
        watch?.arm(cfg.liveTimeout)
        do {
            demuxer = try Demuxer(
                path: device.device, format: device.format, options: AudioInputSetup.options(cfg), watch: watch,
                timeout: cfg.liveTimeout, settings: (.audioInput, .audioInputOption))
        } catch {
            var e = error
            if e.path == device.device { e.path = name }
            throw e
        }
        openedAt = Date().timeIntervalSince1970
        demuxer.stopsOnSignal = false
        let input = demuxer.input
        guard let index = (0..<input.streamCount).first(where: { input.stream($0).isAudio }) else {
            throw CropZoomError(.inputUnreadable, path: name, setting: .audioInput, reason: "no audio stream")
        }
        audioIndex = index
    }

    var input: InputFormat { demuxer.input }

    /// The device's options: the user's, and for PulseAudio 20 ms fragments unless given. With the server's default
    /// (up to 2 s for a monitor source) the demuxer stamps its first packets by a latency it has not measured yet:
    /// measured here, their times ran 0.65 s ahead of their samples for the first second (48 ms with 20 ms
    /// fragments), and the re-encoded sound, timed by its samples from the first packet, would be early by as much.
    static func options(_ cfg: TranscodeConfiguration) -> [String: String] {
        var options = cfg.audioInputOptions
        if cfg.audioDevice?.format == "pulse" && options["fragment_size"] == nil {
            let rate = Int(options["sample_rate"] ?? "") ?? 48000
            let channels = Int(options["channels"] ?? "") ?? 2
            options["fragment_size"] = String(max(1, rate * channels * 2 / 50))
        }
        return options
    }
}

/// Live inputs on one clock: where a recording with a second input (`--audio-input`) starts, in each input's own
/// times. Capture devices stamp their packets with the wall clock (x11grab, v4l2, pulse and alsa use
/// `av_gettime`), so their times are compared as they are; an input whose times are its own (a network stream's,
/// lavfi's from 0) is placed on the wall clock at the moment it was opened, which errs by at most what its probe
/// read. The recording starts at the latest of the inputs' first media — a device is read from its open
/// (``EarlyReads``), so the set-up after it is recorded, not lost: what an input has from before (the first device's
/// media while the second opened) is cut, and their times are moved back by that moment (``TrimWindow`` with an
/// anchor), so sound and picture start together, within a packet.
struct LiveClock {
    /// Per input, in its own seconds: where the recording starts.
    let starts: [Double]

    /// `first`: where an input's media starts when not at its first timestamp (a device's early reads let older
    /// video go).
    init(_ inputs: [(input: InputFormat, openedAt: Double, first: Double?)]) {
        self.init(inputs.map { ($0.input.startSeconds, $0.openedAt, $0.first) })
    }

    /// The rule on numbers: per input, its first timestamp (seconds), when it was opened (wall clock) and where its
    /// media starts if not at its first timestamp.
    init(_ inputs: [(start: Double, openedAt: Double, first: Double?)]) {
        let offsets = inputs.map { i in abs(i.start - i.openedAt) < 60 ? 0 : i.openedAt - i.start }
        let start = zip(inputs, offsets).map { max($0.start, $0.first ?? -.infinity) + $1 }.max() ?? 0
        starts = offsets.map { start - $0 }
    }
}
