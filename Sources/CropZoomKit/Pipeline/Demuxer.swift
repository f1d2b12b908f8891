import CFFmpeg

/// The demux stage: reads packets from the input file in file order.
final class Demuxer: @unchecked Sendable {
    // @unchecked Sendable: owned and driven by one thread (the demux stage).
    let input: InputFormat
    /// Read errors skipped so far (damaged data the demuxer could resynchronise after).
    private(set) var skippedErrors = 0
    private var consecutiveErrors = 0

    init(path: String) throws(CropZoomError) {
        input = try InputFormat(path: path)
    }

    var path: String { input.path }

    /// Reads the next packet (`av_read_frame`). Damaged data the demuxer can skip is counted and
    /// skipped; a file that ends where its index says there is more is reported as truncated.
    func read(into packet: Packet, strict: Bool) throws(CropZoomError) -> AVStep<Void> {
        while true {
            let r = input.read(into: packet)
            if r >= 0 {
                consecutiveErrors = 0
                return .value(())
            }
            if r == AVCode.again { return .again }
            let signal = cz_pending_signal()
            if signal != 0 { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
            if r == AVCode.eof {
                // avio reports a short read past the end of data as EOF too; a pb error says otherwise.
                if let pb = input.pointer.pointee.pb, pb.pointee.error < 0, pb.pointee.error != AVCode.eof {
                    throw CropZoomError.ffmpeg(pb.pointee.error, .inputUnreadable, what: "reading", path: path)
                }
                return .endOfStream
            }
            skippedErrors += 1
            consecutiveErrors += 1
            if strict || consecutiveErrors > 64 {
                throw CropZoomError.ffmpeg(r, .inputUnreadable, what: "reading", path: path)
            }
        }
    }
}
