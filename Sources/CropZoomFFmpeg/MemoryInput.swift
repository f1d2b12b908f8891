import CFFmpeg
import CropZoomCore

/// Owns a read-only `AVIOContext` over a copy of an input's bytes (`cz_memory_io_new` / `cz_memory_io_free`): what
/// an ``InputFormat`` opened from memory reads (in-process fuzzing: ``FuzzTarget``). The input keeps it as long as
/// its format context, which does not close it (`AVFMT_FLAG_CUSTOM_IO`).
///
/// `@unchecked Sendable`: read only by the thread that reads its input.
package final class MemoryInput: @unchecked Sendable {
    private let bytes: UnsafeMutableRawBufferPointer
    /// The context, for `AVFormatContext.pb`.
    private(set) var context: UnsafeMutablePointer<AVIOContext>?
    /// The bytes start with an MP4/MOV box (``InputFormat/isISOBoxType(_:)``).
    package let looksLikeISOMedia: Bool

    /// A copy of `data` and a context over it (`cz_memory_io_new`: `avio_alloc_context` with read and seek
    /// callbacks).
    package init(_ data: [UInt8], path: String) throws(CropZoomError) {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 16)
        data.withUnsafeBytes { copy.copyMemory(from: $0) }
        guard let ctx = cz_memory_io_new(copy.baseAddress!.assumingMemoryBound(to: UInt8.self), data.count) else {
            copy.deallocate()
            throw CropZoomError(.processing, what: "opening the input", path: path, reason: "out of memory")
        }
        bytes = copy
        context = ctx
        looksLikeISOMedia = data.count >= 8 && InputFormat.isISOBoxType(Array(data[4..<8]))
    }

    deinit {
        cz_memory_io_free(&context)
        bytes.deallocate()
    }
}
