import CFFmpeg
import CropZoomCore

/// Writes packets that come from somewhere other than a demuxer — `cropzoom repair`'s samples, read from a broken
/// file — into a regular MP4/MOV whose streams are a reference file's: codec parameters, time bases, dispositions,
/// display matrices and stream tags as the reference has them; the container's tags too, except those that describe
/// the reference recording itself (its date, its place). The index goes at the end (one write pass; a multi-gigabyte
/// `+faststart` would be a second full copy).
package final class Remux {
    private let output: OutputFormat
    /// What the muxer is given: a reference to the caller's packet, so the caller keeps its buffer to refill.
    private let sending: Packet
    private let bases: [TimeBase]
    private var started = false
    private let options: [String: String]

    /// Tags of the reference's container that describe that recording, not the one repaired.
    package static let recordingTags = [
        "creation_time", "timecode", "location", "location-eng", "com.apple.quicktime.location.ISO6709",
        "com.apple.quicktime.creationdate", "com.apple.quicktime.content.identifier", "date",
    ]

    /// The output at `target` (the file written; `displayPath` names it in messages and picks the container) with
    /// one stream for each of `streams` of `reference`, in that order (`avformat_new_stream`,
    /// `avcodec_parameters_copy`, `av_stream_new_side_data` for the display matrix).
    package init(reference: InputFormat, streams: [Int], target: String, displayPath: String) throws(CropZoomError) {
        output = try OutputFormat(path: target, displayPath: displayPath, formatName: nil)
        // The target is the empty temporary AtomicOutput made: opened without truncating it, as truncating a file on
        // ext4 has its close start writing it back (`auto_da_alloc`), 4 ms on the critical path of a 47 MB repair.
        output.protocolOptions["truncate"] = "0"
        output.copyMetadata(from: reference, except: Self.recordingTags + Muxer.inputContainerTags)
        var bases: [TimeBase] = []
        for i in streams {
            let from = reference.stream(i)
            let to = try Self.copyStream(from, into: output, displayPath: displayPath)
            av_dict_set(&to.pointer.pointee.metadata, "creation_time", nil, 0)
            // The reference's clock is not the recording's (``setTimecode(_:)`` gives the recording's own).
            av_dict_set(&to.pointer.pointee.metadata, "timecode", nil, 0)
            var size = 0
            if let data = av_stream_get_side_data(from.pointer, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36,
                let copy = av_stream_new_side_data(to.pointer, AV_PKT_DATA_DISPLAYMATRIX, size)
            {
                copy.update(from: data, count: size)
            }
            bases.append(from.timeBase)
        }
        self.bases = bases
        sending = try Packet()
        let vendor = Muxer.keepVendorMetadata(output)
        var options = ["movie_timescale": String(Muxer.movieTimescale(bases))]
        if vendor { options["movflags"] = "+use_metadata_tags" }
        self.options = options
    }

    /// A new stream of `output` as `from` is: codec parameters (`avcodec_parameters_copy`), time base, disposition,
    /// frame rate and tags (`av_dict_copy`). A video stream keeps its sample entry's type where the muxer takes it
    /// (`hvc1` rather than FFmpeg's default `hev1`, which QuickTime and iOS refuse; `avc3` and `hev1`, whose
    /// parameter sets may be only in the stream); other tags are left to the muxer.
    static func copyStream(_ from: StreamRef, into output: OutputFormat, displayPath: String) throws(CropZoomError)
        -> StreamRef
    {
        let to = try output.addStream()
        try check(avcodec_parameters_copy(to.parameters, from.parameters), "copying a stream", path: displayPath)
        let tag = from.parameters.pointee.codec_tag
        let video = from.parameters.pointee.codec_type == AVMEDIA_TYPE_VIDEO
        let kept = video && tag != 0 && output.acceptsTag(tag, for: from.parameters.pointee.codec_id)
        to.parameters.pointee.codec_tag = kept ? tag : 0
        to.pointer.pointee.time_base = from.pointer.pointee.time_base
        to.pointer.pointee.disposition = from.pointer.pointee.disposition
        to.pointer.pointee.avg_frame_rate = from.pointer.pointee.avg_frame_rate
        av_dict_copy(&to.pointer.pointee.metadata, from.pointer.pointee.metadata, 0)
        return to
    }

    /// Gives the video streams the recording's timecode (`HH:MM:SS:FF`), which the MOV/MP4 muxer writes as a
    /// timecode track; false once the header is written (the first sample), when it is too late.
    package func setTimecode(_ timecode: String) -> Bool {
        guard !started else { return false }
        for i in 0..<output.streamCount where output.stream(i).isVideo {
            av_dict_set(&output.stream(i).pointer.pointee.metadata, "timecode", timecode, 0)
        }
        return true
    }

    /// The time base of output stream `index` as given (the reference's; the muxer may choose another).
    package func timeBase(_ index: Int) -> TimeBase { bases[index] }

    /// Writes `packet`, one sample of output stream `packet.streamIndex` with its times in the reference stream's
    /// time base (`av_interleaved_write_frame` of a reference to it, after the header on the first call): the packet
    /// keeps its buffer, for ``Packet/refill(_:)`` to use again once the muxer has let go of it.
    package func write(_ packet: Packet) throws(CropZoomError) {
        if !started {
            try output.writeHeader(options: options)
            started = true
        }
        let stream = packet.streamIndex
        packet.pointer.pointee.pos = -1
        packet.rescale(from: bases[stream], to: output.stream(stream).timeBase)
        sending.unref()
        try sending.ref(packet)
        try output.write(sending)
    }

    /// Gives output streams (by index) the parameters FFmpeg learns by decoding, before ``finish()`` writes them into
    /// the index; false, and nothing given, when one disagrees with what the header was written with (a picture size
    /// or sample rate that only decoding tells): the file must then be written again from a probed reference.
    package func complete(_ parameters: [Int: DecodedParameters]) -> Bool {
        guard parameters.allSatisfy({ $0.value.agrees(with: output.stream($0.key).parameters) }) else { return false }
        for (index, p) in parameters { p.apply(to: output.stream(index).parameters) }
        return true
    }

    /// Writes the index and closes the file (`av_write_trailer`).
    package func finish() throws(CropZoomError) {
        if !started {
            try output.writeHeader(options: options)
            started = true
        }
        try output.finish()
    }
}
