import CFFmpeg
import CropZoomCore

/// The last step of a live MP4/MOV recording that ended normally: the fragmented file it was written as (playable
/// at every moment, see ``Muxer``) is copied, packet for packet, into a regular one with its index at the front
/// (`movflags=+faststart`), which players seek in at once and every tool reads. Times, codecs, dispositions and
/// tags are kept. Until that copy is renamed over the recording, the fragmented file is the recording: a crash
/// during the copy loses nothing.
package enum FinishedMP4 {
    /// Copies the fragmented file at `path` into a regular MP4/MOV at `target` (`avformat_open_input`,
    /// `avcodec_parameters_copy`, `av_interleaved_write_frame`, `av_write_trailer`); `displayPath` names the
    /// output in messages and chooses the container.
    package static func rewrite(_ path: String, into target: String, displayPath: String) throws(CropZoomError) {
        let input = try InputFormat(path: path)
        let output = try OutputFormat(path: target, displayPath: displayPath, formatName: nil)
        output.copyMetadata(from: input)
        var bases: [TimeBase] = []
        for i in 0..<input.streamCount {
            let from = input.stream(i)
            _ = try Remux.copyStream(from, into: output, displayPath: displayPath)
            bases.append(from.timeBase)
        }
        let vendor = Muxer.keepVendorMetadata(output)
        try output.writeHeader(options: [
            "movflags": vendor ? "+faststart+use_metadata_tags" : "+faststart",
            "movie_timescale": String(Muxer.movieTimescale(bases)),
        ])
        let packet = try Packet()
        while true {
            switch try input.read(into: packet) {
            case .again: continue
            case .endOfStream:
                try output.finish()
                return
            case .value:
                let i = packet.streamIndex
                packet.rescale(from: bases[i], to: output.stream(i).timeBase)
                packet.pointer.pointee.pos = -1
                try output.write(packet)
            }
        }
    }
}
