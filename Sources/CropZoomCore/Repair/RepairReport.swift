import Foundation

/// What `cropzoom repair` recovered (the summary line, the `done` event's `repair` member, and the library's result).
public struct RepairReport: Codable, Equatable, Sendable {
    /// One track of the reference and what was found of it.
    public struct Track: Codable, Equatable, Sendable {
        public var index: Int
        /// `video`, `audio`, `data`.
        public var type: String
        /// FFmpeg's codec name (`h264`, `aac`) or the sample entry's type.
        public var codec: String
        /// Samples recovered; for a metadata track not recovered, the runs of its samples the walk stepped over.
        public var samples: Int
        public var keyframes: Int
        /// How long the recovered samples last.
        public var seconds: Double
        /// Whether the walk looked for it (a track of a kind it does not recognise yet is not recovered).
        public var recovered: Bool

        package init(
            index: Int, type: String, codec: String, samples: Int, keyframes: Int, seconds: Double, recovered: Bool
        ) {
            self.index = index
            self.type = type
            self.codec = codec
            self.samples = samples
            self.keyframes = keyframes
            self.seconds = seconds
            self.recovered = recovered
        }
    }

    public var input: String
    /// The reference recording; nil for a fragmented recording, which needs none.
    public var reference: String?
    public var output: String
    public var tracks: [Track]
    /// Bytes of the media data not taken as samples, and where.
    public var gaps: [RepairGap]
    /// Video pictures skipped because no keyframe came before them.
    public var skippedBeforeKeyframe: Int
    /// The media data's size in the broken file, and how much of it the samples recovered cover.
    public var mediaBytes: Int64
    public var recoveredBytes: Int64
    /// Seconds from the first video frame to the first audio frame (negative: the sound starts first), as written;
    /// nil without both.
    public var audioStartOffset: Double?
    public var seconds: Double
    /// The recording's own timecode (`HH:MM:SS:FF`), read from its timecode sample, when it has one.
    public var timecode: String? = nil
    /// Seconds the recovered pictures last longer (negative: shorter) than the recovered sound, when they differ by
    /// more than half a second and a writer's chunk: the recording's frame rate was not the reference's, whose
    /// frame duration the pictures are timed with (``videoRate``); nil otherwise.
    public var videoMinusAudio: Double? = nil
    /// The frames per second the pictures are timed at, given with ``videoMinusAudio``.
    public var videoRate: Double? = nil
    /// How many pictures were timed by the sound's clock rather than at the reference's frame duration (the
    /// recording's frame rate was not the reference's, and the sound stored beside the pictures kept their times:
    /// docs/repair.md, "A frame rate that changed"); nil when none were.
    public var picturesTimedBySound: Int? = nil

    /// snake_case in JSON, whichever encoder writes it (the command's, a transcode's `done` record).
    enum CodingKeys: String, CodingKey {
        case input, reference, output, tracks, gaps, seconds, timecode
        case videoMinusAudio = "video_minus_audio"
        case videoRate = "video_rate"
        case picturesTimedBySound = "pictures_timed_by_sound"
        case skippedBeforeKeyframe = "skipped_before_keyframe"
        case mediaBytes = "media_bytes"
        case recoveredBytes = "recovered_bytes"
        case audioStartOffset = "audio_start_offset"
    }

    package init(
        input: String, reference: String?, output: String, tracks: [Track], gaps: [RepairGap],
        skippedBeforeKeyframe: Int, mediaBytes: Int64, recoveredBytes: Int64, audioStartOffset: Double?,
        seconds: Double
    ) {
        self.input = input
        self.reference = reference
        self.output = output
        self.tracks = tracks
        self.gaps = gaps
        self.skippedBeforeKeyframe = skippedBeforeKeyframe
        self.mediaBytes = mediaBytes
        self.recoveredBytes = recoveredBytes
        self.audioStartOffset = audioStartOffset
        self.seconds = seconds
    }

    /// One line: what was recovered and what was not.
    public var line: String { "repaired \(input) → \(output): " + found }

    /// What was recovered and what was not, without the file names.
    public var found: String {
        var parts: [String] = []
        for t in tracks where t.recovered && t.type != "data" {
            let audio = t.codec.hasPrefix("pcm_") ? "audio samples" : "audio frames"
            let noun = t.type == "video" ? "video frames" : t.type == "audio" ? audio : "samples"
            parts.append("\(t.samples) \(noun) (\(t.seconds.fixed(2)) s)")
        }
        if let timecode { parts.append("timecode \(timecode)") }
        // Tracks alike counted once ("100 data tracks (mov_text)": a file with a subtitle track per language).
        var notWalked: [(type: String, codec: String, count: Int)] = []
        for t in tracks where !t.recovered {
            let codec = t.codec + (t.samples > 0 ? ", stepped over" : "")
            if let i = notWalked.firstIndex(where: { $0.type == t.type && $0.codec == codec }) {
                notWalked[i].count += 1
            } else {
                notWalked.append((t.type, codec, 1))
            }
        }
        if !notWalked.isEmpty {
            let names = notWalked.map {
                $0.count == 1 ? "\($0.type) (\($0.codec))" : "\($0.count) \($0.type) tracks (\($0.codec))"
            }
            parts.append("not recovered: " + names.joined(separator: ", "))
        }
        let referenceHasSound = tracks.contains { $0.type == "audio" }
        // Data tracks whose samples the walk does not step over: what bytes between pictures may be.
        let data = Set(tracks.filter { $0.type == "data" && !$0.recovered && $0.samples == 0 }.map(\.codec)).sorted()
        for gap in gaps where gap.reason == "unmatched" {
            let what = referenceHasSound ? "sound the reference's settings do not read" : "bytes between the pictures"
            let question =
                referenceHasSound
                ? "is the reference's sound from the same settings?"
                : data.isEmpty
                    ? "the recording's sound? the reference has no sound track to read it with"
                    : "the samples of its data tracks (\(data.joined(separator: ", "))), or sound the reference has "
                        + "no track for?"
            parts.append(
                "\(what) stepped over (\(Self.bytes(gap.bytes)) in \(gap.runs ?? 1) runs from \(Self.bytes(gap.offset)): "
                    + "\(question))")
        }
        for gap in gaps where gap.reason != "unmatched" {
            let what =
                gap.reason == "cut"
                ? "cut mid-sample at the end"
                : gap.reason == "damaged" ? "damaged bytes skipped" : "unrecognised bytes from there on"
            parts.append("\(what) (\(Self.bytes(gap.bytes)) at \(Self.bytes(gap.offset)))")
        }
        if skippedBeforeKeyframe > 0 { parts.append("\(skippedBeforeKeyframe) frames before the first keyframe") }
        if let moved = picturesTimedBySound {
            parts.append(
                "\(moved) pictures timed by the sound's clock (the recording's frame rate was not constant, or not the "
                    + "reference's)")
        }
        if let difference = videoMinusAudio, let rate = videoRate {
            parts.append(
                String(
                    format: "the video lasts %.2f s %@ than the sound (timed at the reference's %g fps: the "
                        + "recording's frame rate was not constant, or not the reference's)",
                    abs(difference), difference < 0 ? "less" : "more", rate))
        }
        return parts.joined(separator: ", ")
    }

    package static func bytes(_ n: Int64) -> String {
        n < 10_000
            ? "\(n) bytes"
            : n < 10_000_000
                ? (Double(n) / 1e3).fixed(1) + " kB"
                : (Double(n) / 1e6).fixed(1) + " MB"
    }
}
