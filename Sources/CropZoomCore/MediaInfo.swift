import Foundation

/// What `cropzoom probe` reports about a file: the container and each stream, as FFmpeg reads
/// them (`avformat_open_input` + `avformat_find_stream_info`), plus what cropzoom derives —
/// the displayed size and orientation, and whether the video frame rate varies. Field names
/// are stable (the JSON uses them in snake_case; docs/probe-and-bench.md).
public struct MediaInfo: Codable, Sendable, Equatable {
    public var path: String
    /// Demuxer short name(s), as ffprobe's `format_name`.
    public var format: String
    public var formatLongName: String
    /// Seconds; nil when the container does not say.
    public var duration: Double?
    public var startTime: Double?
    /// Bits per second over the whole file, when known.
    public var bitRate: Int?
    public var sizeBytes: Int?
    /// The container's tags, as FFmpeg reads them (`title`, `creation_time`, `com.apple.quicktime.make` …); nil
    /// when it has none.
    public var tags: [String: String]?
    /// Chapters in order; nil when there are none.
    public var chapters: [ChapterInfo]?
    public var streams: [StreamInfo]

    /// True when the file has a video stream cropzoom can work on.
    public var hasVideo: Bool { streams.contains { $0.type == "video" && !$0.attachedPicture } }

    /// Every field (the probe's reader fills them).
    package init(
        path: String,
        format: String,
        formatLongName: String,
        duration: Double? = nil,
        startTime: Double? = nil,
        bitRate: Int? = nil,
        sizeBytes: Int? = nil,
        tags: [String: String]? = nil,
        chapters: [ChapterInfo]? = nil,
        streams: [StreamInfo]
    ) {
        self.path = path
        self.format = format
        self.formatLongName = formatLongName
        self.duration = duration
        self.startTime = startTime
        self.bitRate = bitRate
        self.sizeBytes = sizeBytes
        self.tags = tags
        self.chapters = chapters
        self.streams = streams
    }
}

/// One chapter: its times in seconds and its title.
public struct ChapterInfo: Codable, Sendable, Equatable {
    public var start: Double
    public var end: Double
    public var title: String?

    /// Every field (the probe's reader fills them).
    package init(
        start: Double,
        end: Double,
        title: String? = nil
    ) {
        self.start = start
        self.end = end
        self.title = title
    }
}

/// HDR10 static metadata: the mastering display's primaries and white point (CIE 1931 x, y) and luminance
/// (cd/m²), as `AVMasteringDisplayMetadata` holds them.
public struct MasteringDisplay: Codable, Sendable, Equatable {
    public var red: [Double]?
    public var green: [Double]?
    public var blue: [Double]?
    public var whitePoint: [Double]?
    public var minLuminance: Double?
    public var maxLuminance: Double?

    /// Every field (the probe's reader fills them).
    package init(
        red: [Double]? = nil,
        green: [Double]? = nil,
        blue: [Double]? = nil,
        whitePoint: [Double]? = nil,
        minLuminance: Double? = nil,
        maxLuminance: Double? = nil
    ) {
        self.red = red
        self.green = green
        self.blue = blue
        self.whitePoint = whitePoint
        self.minLuminance = minLuminance
        self.maxLuminance = maxLuminance
    }
}

/// HDR10 content light level (cd/m²): MaxCLL and MaxFALL.
public struct ContentLightLevel: Codable, Sendable, Equatable {
    public var maxContent: Int
    public var maxAverage: Int

    /// Every field (the probe's reader fills them).
    package init(
        maxContent: Int,
        maxAverage: Int
    ) {
        self.maxContent = maxContent
        self.maxAverage = maxAverage
    }
}

/// A Dolby Vision configuration record (`AVDOVIDecoderConfigurationRecord`).
public struct DolbyVision: Codable, Sendable, Equatable {
    public var profile: Int
    public var level: Int
    /// The base layer's compatibility: 0 none, 1 HDR10, 2 SDR, 4 HLG …
    public var compatibilityID: Int

    /// Every field (the probe's reader fills them).
    package init(
        profile: Int,
        level: Int,
        compatibilityID: Int
    ) {
        self.profile = profile
        self.level = level
        self.compatibilityID = compatibilityID
    }
}

public struct StreamInfo: Codable, Sendable, Equatable {
    public var index: Int
    /// "video", "audio", "subtitle", "data", "attachment" or "unknown".
    public var type: String
    /// Codec short name ("h264", "aac", …; "unknown" when libavcodec has none).
    public var codec: String
    public var profile: String?
    public var startTime: Double?
    public var duration: Double?
    /// Frames or packets the container declares (0 when it does not).
    public var declaredFrames: Int
    public var language: String?
    public var isDefault: Bool
    /// A cover picture stored as a video stream (not video).
    public var attachedPicture: Bool

    // Video.
    /// Stored (coded) picture size.
    public var width: Int?
    public var height: Int?
    /// Size as a player shows it: rotated by the display matrix, stretched by the sample
    /// aspect ratio to square pixels.
    public var displayWidth: Int?
    public var displayHeight: Int?
    /// Clockwise rotation a player applies (0, 90, 180, 270), and whether it then mirrors the
    /// picture left-right.
    public var rotation: Int?
    public var mirrored: Bool?
    /// "num:den" ("1:1" when the stream declares none).
    public var sampleAspectRatio: String?
    public var pixelFormat: String?
    public var bitDepth: Int?
    /// "num/den", as ffprobe's r_frame_rate and avg_frame_rate.
    public var rFrameRate: String?
    public var avgFrameRate: String?
    /// avg_frame_rate as a number (frames per second), when known.
    public var fps: Double?
    /// True when the presentation times of the first frames are not evenly spaced.
    public var variableFrameRate: Bool?
    /// How many frames that was decided on (the first `MediaProbe.rateWindow` or all).
    public var frameRateCheckedFrames: Int?
    /// ffprobe's `field_order`: "progressive", or interlaced "tt", "bb", "tb", "bt"; nil when
    /// the stream does not say.
    public var fieldOrder: String?
    /// ffprobe's colour names (`tv`/`pc`, `bt709`, `bt2020nc`, `smpte2084`, `arib-std-b67`, `left` …); nil when
    /// the stream does not say.
    public var colorRange: String?
    public var colorSpace: String?
    public var colorPrimaries: String?
    public var colorTransfer: String?
    public var chromaLocation: String?
    /// "PQ" or "HLG" for HDR video (by its transfer); nil otherwise.
    public var hdr: String?
    /// HDR10 metadata from the stream's side data or, for PQ video without it, its first frame (as a transcode
    /// reads it).
    public var masteringDisplay: MasteringDisplay?
    public var contentLightLevel: ContentLightLevel?
    public var dolbyVision: DolbyVision?

    // Audio.
    public var sampleRate: Int?
    public var channels: Int?
    public var channelLayout: String?
    public var sampleFormat: String?

    /// The stream's tags (`language`, `handler_name`, `title` …); nil when it has none.
    public var tags: [String: String]?

    /// Every field (the probe's reader fills them).
    package init(
        index: Int,
        type: String,
        codec: String,
        profile: String? = nil,
        startTime: Double? = nil,
        duration: Double? = nil,
        declaredFrames: Int,
        language: String? = nil,
        isDefault: Bool,
        attachedPicture: Bool,
        width: Int? = nil,
        height: Int? = nil,
        displayWidth: Int? = nil,
        displayHeight: Int? = nil,
        rotation: Int? = nil,
        mirrored: Bool? = nil,
        sampleAspectRatio: String? = nil,
        pixelFormat: String? = nil,
        bitDepth: Int? = nil,
        rFrameRate: String? = nil,
        avgFrameRate: String? = nil,
        fps: Double? = nil,
        variableFrameRate: Bool? = nil,
        frameRateCheckedFrames: Int? = nil,
        fieldOrder: String? = nil,
        colorRange: String? = nil,
        colorSpace: String? = nil,
        colorPrimaries: String? = nil,
        colorTransfer: String? = nil,
        chromaLocation: String? = nil,
        hdr: String? = nil,
        masteringDisplay: MasteringDisplay? = nil,
        contentLightLevel: ContentLightLevel? = nil,
        dolbyVision: DolbyVision? = nil,
        sampleRate: Int? = nil,
        channels: Int? = nil,
        channelLayout: String? = nil,
        sampleFormat: String? = nil,
        tags: [String: String]? = nil
    ) {
        self.index = index
        self.type = type
        self.codec = codec
        self.profile = profile
        self.startTime = startTime
        self.duration = duration
        self.declaredFrames = declaredFrames
        self.language = language
        self.isDefault = isDefault
        self.attachedPicture = attachedPicture
        self.width = width
        self.height = height
        self.displayWidth = displayWidth
        self.displayHeight = displayHeight
        self.rotation = rotation
        self.mirrored = mirrored
        self.sampleAspectRatio = sampleAspectRatio
        self.pixelFormat = pixelFormat
        self.bitDepth = bitDepth
        self.rFrameRate = rFrameRate
        self.avgFrameRate = avgFrameRate
        self.fps = fps
        self.variableFrameRate = variableFrameRate
        self.frameRateCheckedFrames = frameRateCheckedFrames
        self.fieldOrder = fieldOrder
        self.colorRange = colorRange
        self.colorSpace = colorSpace
        self.colorPrimaries = colorPrimaries
        self.colorTransfer = colorTransfer
        self.chromaLocation = chromaLocation
        self.hdr = hdr
        self.masteringDisplay = masteringDisplay
        self.contentLightLevel = contentLightLevel
        self.dolbyVision = dolbyVision
        self.sampleRate = sampleRate
        self.channels = channels
        self.channelLayout = channelLayout
        self.sampleFormat = sampleFormat
        self.tags = tags
    }
}
