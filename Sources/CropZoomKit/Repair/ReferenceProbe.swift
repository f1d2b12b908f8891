import CropZoomFFmpeg
import Foundation

/// The reference opened and probed (``RepairSetup/openReference(_:probe:)``) on a thread of its own, beside the set-up
/// and the walk, where the header cannot be written from the container's parameters (``RepairSetup/needsProbedHeader``,
/// or a repair written again): `avformat_find_stream_info` decodes a picture and a sound frame (3–5 ms, and the AAC
/// decoder's tables); the writer's thread waits for it before it writes the header, and a message that describes the
/// reference's picture waits for it too.
///
/// `@unchecked Sendable`: `result` is written once by the thread (behind `lock`) before it signals `ended`, and read
/// only after a wait; the probed input is only read after (its codec parameters, by the writer and a message).
final class ReferenceProbe: @unchecked Sendable {
    private var result: Result<InputFormat, CropZoomError>?
    private let lock = NSLock()
    private let ended = DispatchSemaphore(value: 0)

    /// Starts probing `path`.
    init(path: String) {
        let thread = Thread { [self] in
            let probed = Result { () throws(CropZoomError) -> InputFormat in
                try RepairSetup.openReference(path, probe: true)
            }
            lock.withLock { result = probed }
            ended.signal()
        }
        thread.name = "cropzoom repair probe"
        thread.start()
    }

    /// The probed reference, waiting for the thread; its error where the reference could not be probed.
    func wait() throws(CropZoomError) -> InputFormat {
        ended.wait()
        ended.signal()
        return try lock.withLock { result }!.get()
    }
}
