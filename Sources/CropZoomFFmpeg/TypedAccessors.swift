import CFFmpeg
import CropZoomCore

// The typed doors the library uses: each takes and gives Swift values (``CodecID``, ``MediaType``, ``CodecContext``)
// where the wrapper's own code works on FFmpeg's.

extension OutputFormat {
    /// Whether the container can hold `codec` (``canStore(_:)-(AVCodecID)``).
    package func canStore(_ codec: CodecID) -> Bool { canStore(codec.av) }

    /// The container's default codec for streams of `type` (none: it has none).
    package func defaultCodec(_ type: MediaType) -> CodecID { CodecID(defaultCodec(type.av)) }

    /// Whether `path` holds a frame-number pattern (`%d`, `%03d` …) an image sequence needs
    /// (`av_filename_number_test`).
    package static func isNumberedPattern(_ path: String) -> Bool {
        RawPath.withCString(path) { av_filename_number_test($0) } != 0
    }
}

extension SubtitleConverter {
    /// Whether `codec` is a text subtitle format, which converts to another.
    package static func isText(_ codec: CodecID) -> Bool { isText(codec.av) }
}

extension Muxer {
    /// Adds a stream that receives encoded packets from `encoder` (its parameters copied from the context).
    package func addEncodedStream(from encoder: CodecContext, input: StreamRef?) throws(CropZoomError) -> Int {
        try addEncodedStream(from: encoder.pointer, input: input)
    }

    /// Adds a stream that receives the input's text subtitles converted to `target`.
    package func addConvertedSubtitle(from input: StreamRef, target: CodecID) throws(CropZoomError) -> Int {
        try addConvertedSubtitle(from: input, target: target.av)
    }
}

extension CodecContext {
    /// The codec it runs (`codec_id`).
    package var codecKind: CodecID { CodecID(codecID) }
}

extension AudioTranscoder {
    /// The audio encoder FFmpeg has under `given`, or a usage error naming the setting.
    package static func encoderRef(named given: String) throws(CropZoomError) -> EncoderRef {
        EncoderRef(try encoder(named: given))
    }
}

extension ToneMapping {
    /// The mapping of a picture whose YUV matrix is `matrix` and whose primaries are `primaries`.
    package init(curve: Curve, hlg: Bool, sourcePeak: Double, matrix: ColorMatrix, primaries: ColorPrimaries) {
        self.init(curve: curve, hlg: hlg, sourcePeak: sourcePeak, matrix: matrix.av, primaries: primaries.av)
    }
}

extension InputFormat {
    /// Seeks to the keyframe at or before `microseconds` on the file's clock (`avformat_seek_file`, any stream);
    /// a failed seek leaves the reading where it was.
    package func seek(toMicroseconds target: Int64) {
        _ = avformat_seek_file(pointer, -1, Int64.min, target, target, 0)
    }
}

/// FFmpeg's internal time base (`AV_TIME_BASE`: microseconds).
package enum AVTime {
    package static let perSecond = Double(AV_TIME_BASE)
}

extension PixelFormatInfo {
    /// The format described.
    package var pixelFormat: PixelFormat { PixelFormat(format) }
}

extension ZimgScaler {
    /// Why zimg cannot take a `width` × `height` picture in `format`, or nil.
    package static func refusal(width: Int, height: Int, format: PixelFormat) -> String? {
        refusal(width: width, height: height, format: format.av)
    }
}

extension Frame {
    /// The picture's pixel format (`format`).
    package var format: PixelFormat { PixelFormat(pixelFormat) }
}

extension ToneMapper {
    /// What the transform renders for the mapper: 4:4:4, 16 bits, in the input's colours.
    package static var intermediate: PixelFormat { PixelFormat(intermediateFormat) }
}
