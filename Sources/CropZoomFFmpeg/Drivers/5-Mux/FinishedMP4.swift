import CFFmpeg
import CropZoomCore

/// The last step of a live MP4/MOV recording that ended normally: the fragmented file it was written as (playable
/// at every moment, see ``Muxer``) is copied, packet for packet, into a regular one with its index at the front
/// (`movflags=+faststart`), which players seek in at once and every tool reads. Times, codecs, dispositions and
/// tags are kept. Until that copy is renamed over the recording, the fragmented file is the recording: a crash
/// during the copy loses nothing.
package enum FinishedMP4 {
    /// What a copy wrote of one stream.
    package struct Copied: Sendable {
        /// `video`, `audio`, `data`, and FFmpeg's codec name.
        package var type = "data"
        package var codec = ""
        package var packets = 0
        package var keyframes = 0
        package var bytes: Int64 = 0
        /// The earliest presentation time and the latest end, in seconds (nil: no packet).
        package var first: Double?
        package var end: Double?
        /// Where the last packet written ends in the input (its position plus its size).
        package var lastByte: Int64 = 0
    }

    /// Copies the fragmented file at `path` into a regular MP4/MOV at `target` (`avformat_open_input`,
    /// `avcodec_parameters_copy`, `av_interleaved_write_frame`, `av_write_trailer`); `displayPath` names the
    /// output in messages and chooses the container. `cutAt`: the file is known to end mid-fragment there (a
    /// recording whose writer died): a packet the end cuts (FFmpeg flags it corrupt, or its bytes run past the end)
    /// is left out, and the read error at the cut ends the copy. Returns what was written of each stream.
    @discardableResult
    package static func rewrite(_ path: String, into target: String, displayPath: String, cutAt: Int64? = nil)
        throws(CropZoomError) -> [Copied]
    {
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
        var copied = (0..<input.streamCount).map { i in
            let st = input.stream(i)
            return Copied(type: st.isVideo ? "video" : st.isAudio ? "audio" : "data", codec: st.codecName)
        }
        let packet = try Packet()
        while true {
            // `av_read_frame` fills a blank packet: one left out below (cut by the end) still holds its payload.
            packet.unref()
            let step: AVStep<Void>
            do {
                step = try input.read(into: packet)
            } catch {
                // The cut: FFmpeg reports the fragment it ends as a read error once the whole packets are read.
                guard cutAt != nil, copied.contains(where: { $0.packets > 0 }) else { throw error }
                step = .endOfStream
            }
            switch step {
            case .again: continue
            case .endOfStream:
                try output.finish()
                return copied
            case .value:
                let i = packet.streamIndex
                let position = packet.pointer.pointee.pos
                if let cutAt, packet.isCorrupt || position < 0 || position + Int64(packet.size) > cutAt {
                    continue
                }
                let base = bases[i]
                let start = packet.pts == AVCode.noPTS ? packet.dts : packet.pts
                if start != AVCode.noPTS {
                    let (s, e) = (Double(start) * base.seconds, Double(start + packet.duration) * base.seconds)
                    copied[i].first = min(copied[i].first ?? s, s)
                    copied[i].end = max(copied[i].end ?? e, e)
                }
                copied[i].packets += 1
                copied[i].keyframes += packet.isKeyframe ? 1 : 0
                copied[i].bytes += Int64(packet.size)
                copied[i].lastByte = max(copied[i].lastByte, position + Int64(packet.size))
                packet.rescale(from: base, to: output.stream(i).timeBase)
                packet.pointer.pointee.pos = -1
                try output.write(packet)
            }
        }
    }
}
