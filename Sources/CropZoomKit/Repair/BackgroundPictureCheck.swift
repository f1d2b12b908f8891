import CropZoomCore
import CropZoomFFmpeg
import Foundation

/// ``RecoveredPictureCheck`` on a thread of its own, so the decoding of the first recovered pictures runs on another
/// core while the walk goes on (on a two-minute 720p recording it was a fifth of the repair's time). The thread makes
/// the check itself (opening the decoder is off the walk's path too). The walk hands over a copy of each of the first
/// ``RepairJob/checkedPictures`` pictures (``add(_:pts:dts:key:)``), asks ``failedPictures()`` as it goes (a
/// reference from other settings, or a check that could not be made, stops the repair early) and ``finish()`` before
/// the output is kept.
///
/// `@unchecked Sendable`: the check is made on the thread and touched only there; the queue synchronises itself;
/// `verdict` and `parameters` are behind `lock`; `sent` and `known` belong to the walking thread.
final class BackgroundPictureCheck: @unchecked Sendable {
    private struct Picture {
        var bytes: [UInt8]
        var pts: Int64
        var dts: Int64
        var key: Bool
    }

    private let queue: BoundedQueue<Picture>
    private let control = RunControl()
    private let lock = NSLock()
    /// Pictures that did not decode whole, once the thread has drained the decoder (or its error).
    private var verdict: Result<Int, CropZoomError>?
    /// The decoder's parameters once a picture came out (``RecoveredPictureCheck/parameters``).
    private var parameters: DecodedParameters?
    private let ended = DispatchSemaphore(value: 0)
    /// Pictures handed over.
    private(set) var sent = 0
    /// The verdict once ``failedPictures()`` saw it (the walk asks after every sample: no lock taken again).
    private var known: Result<Int, CropZoomError>?

    /// Starts the thread, which makes the check with `make` (its error is the check's verdict).
    init(_ make: @escaping @Sendable () throws(CropZoomError) -> RecoveredPictureCheck) {
        queue = BoundedQueue(capacity: RepairJob.checkedPictures, control: control)
        let thread = Thread { [self] in
            var decoded: DecodedParameters?
            let result = Result { () throws(CropZoomError) -> Int in
                let check = try make()
                defer { decoded = check.parameters }
                while let p = try queue.pop() {
                    try check.add(p.bytes, pts: p.pts, dts: p.dts, key: p.key)
                }
                return try check.finish()
            }
            lock.withLock {
                verdict = result
                parameters = decoded
            }
            ended.signal()
        }
        thread.name = "cropzoom repair check"
        thread.start()
    }

    /// Whether more pictures are wanted.
    var wantsMore: Bool { sent < RepairJob.checkedPictures }

    /// Hands over a copy of one recovered picture (decode order; `pts`: its presentation time); the last one wanted
    /// ends the check's input.
    func add(_ bytes: ArraySlice<UInt8>, pts: Int64, dts: Int64, key: Bool) throws(CropZoomError) {
        guard wantsMore else { return }
        sent += 1
        _ = try queue.push(Picture(bytes: Array(bytes), pts: pts, dts: dts, key: key))
        if !wantsMore { queue.close() }
    }

    /// The pictures that did not decode whole, when the check has ended; nil while it runs.
    func failedPictures() throws(CropZoomError) -> Int? {
        if known == nil { known = lock.withLock { verdict } }
        return try known?.get()
    }

    /// Ends the check's input, waits for it, and returns the pictures that did not decode whole.
    func finish() throws(CropZoomError) -> Int {
        queue.close()
        ended.wait()
        ended.signal()
        return try failedPictures() ?? 0
    }

    /// What the decoder knew once its first picture came out, after ``finish()``; nil when none came out.
    var decodedParameters: DecodedParameters? { lock.withLock { parameters } }

    /// Stops the thread without waiting for its verdict (the repair failed or was cancelled).
    func abandon() {
        control.fail(CropZoomError(.cancelled, path: "", reason: "the repair ended"))
        ended.wait()
        ended.signal()
    }
}
