import CFFmpeg
import CropZoomCore
import CropZoomSystem

/// Owns a read-only `AVIOContext` on a URL (`avio_open2` / `avio_closep`): how an HTTP or FTP input is looked at
/// before FFmpeg's demuxer opens it — whether it can seek, and its first bytes (``StandardInput``'s spooling).
///
/// `@unchecked Sendable`: used by the thread that opens the input, then closed.
package final class URLReader: @unchecked Sendable {
    private var context: UnsafeMutablePointer<AVIOContext>?
    package let url: String

    /// `avio_open2` for reading, with the protocol's options among `options` (others are ignored) and the job's
    /// cancel switch, or the process's signals, as its interrupt callback.
    package init(_ url: String, options: [String: String], interrupt: IOWatch?) throws(CropZoomError) {
        self.url = url
        var callback = AVIOInterruptCB.watching(interrupt)
        var dict: OpaquePointer? = nil
        for (key, value) in options.sorted(by: { $0.key < $1.key }) { av_dict_set(&dict, key, value, 0) }
        var ctx: UnsafeMutablePointer<AVIOContext>? = nil
        let r = RawPath.withCString(url) { avio_open2(&ctx, $0, AVIO_FLAG_READ, &callback, &dict) }
        av_dict_free(&dict)
        guard r >= 0, ctx != nil else {
            throw CropZoomError.ffmpeg(r, .inputUnreadable, what: "", path: url)
        }
        context = ctx
    }

    deinit { avio_closep(&context) }

    /// Whether the server lets FFmpeg seek (`AVIO_SEEKABLE_NORMAL`: an HTTP server that takes byte ranges).
    package var isSeekable: Bool { (context.map { $0.pointee.seekable } ?? 0) & AVIO_SEEKABLE_NORMAL != 0 }

    /// `avio_read`: up to `count` bytes appended to `bytes`; fewer only at the end.
    package func read(_ count: Int, onto bytes: inout [UInt8]) throws(CropZoomError) -> Int {
        guard let context else { return 0 }
        let start = bytes.count
        bytes += [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBufferPointer {
                avio_read(context, $0.baseAddress! + start + got, Int32(count - got))
            }
            if n == AVCode.eof || n == 0 { break }
            if n < 0 {
                bytes.removeLast(count)
                throw CropZoomError.ffmpeg(n, .inputUnreadable, what: "reading", path: url)
            }
            got += Int(n)
        }
        bytes.removeLast(count - got)
        return got
    }
}
