import CropZoomCore
import CropZoomFFmpeg
import Foundation

/// ``Remux`` on a thread of its own, so that the muxing and the writing of a repaired file run on another core while
/// the walk through the broken file goes on (docs/design/repair.md, "Session 7"). The thread makes the remux itself
/// (probing the reference for its codec parameters is off the walk's path: "Session 11"). The walk copies each sample
/// into a packet of a batch from a fixed pool (``write(stream:bytes:pts:dts:duration:key:)``; the packet's buffer is
/// kept from sample to sample) and hands full batches over through a bounded queue; the thread writes them and gives
/// the batch back. A remux that cannot be made or a write that fails (a full disk, a muxer refusing a time) stops the
/// walk at its next hand-over with that error; ``finish()`` waits for the last write and writes the index.
///
/// `@unchecked Sendable`: the remux is made and used by the thread, then by the walking thread once the thread has
/// ended (``finish()``: `made` is set, behind `lock`, before the thread signals `ended`); `timecode` is the walking
/// thread's until its first hand-over, read by the thread after its first pop (the queue orders the two); a batch
/// belongs to the walk until pushed, to the thread until released; the queue, the pool and `control` synchronise
/// themselves; `filling` and `sent` belong to the walking thread.
final class BackgroundRemux: @unchecked Sendable {
    /// Packets handed over together: one wake-up of the writer for a batch, not one for each sample (a thread woken
    /// for every sample spent more in switching than the writing took).
    private final class Batch {
        let packets: [Packet]
        var count = 0
        var bytes = 0
        init() throws(CropZoomError) {
            var packets: [Packet] = []
            for _ in 0..<BackgroundRemux.batchSize { packets.append(try Packet()) }
            self.packets = packets
        }
    }

    /// The remux, once the thread has made it (behind `lock`).
    private var made: Remux?
    private let lock = NSLock()
    /// The recording's timecode, given before the first hand-over (``setTimecode(_:)``).
    private var timecode: String?
    private let queue: BoundedQueue<Batch>
    private let batches: ShellPool<Batch>
    private let control = RunControl()
    private let ended = DispatchSemaphore(value: 0)
    /// The batch being filled (the walking thread's).
    private var filling: Batch?
    /// Samples handed over.
    private(set) var sent = 0

    /// A batch is handed over when it holds this many samples or bytes; at most `depth` batches exist (the one being
    /// filled, those queued and the one being written), so what is in flight stays within `depth` × (1 MiB + one
    /// sample), whatever the pictures' size. (64 samples: a 2 MB repair's 1,539 samples in 25 wake-ups of the
    /// writer, not 97: docs/design/repair.md, "Session 15".)
    static let batchSize = 64
    static let batchBytes = 1 << 20
    static let depth = 4
    /// What a batch's packets keep of their buffers from one use to the next (refilled without allocating): what the
    /// pool holds stays within `depth` × 4 MiB, whatever the pictures' size.
    static let keptPerBatch = 4 << 20

    /// Starts the thread, which makes the remux with `make` before it writes the first batch.
    init(_ make: @escaping @Sendable () throws(CropZoomError) -> Remux) throws(CropZoomError) {
        queue = BoundedQueue(capacity: Self.depth, control: control)
        batches = try ShellPool(capacity: Self.depth, control: control) { () throws(CropZoomError) in try Batch() }
        let thread = Thread { [self] in
            do throws(CropZoomError) {
                let remux = try make()
                lock.withLock { made = remux }
                var first = true
                while let batch = try queue.pop() {
                    if first, let timecode { _ = remux.setTimecode(timecode) }
                    first = false
                    for packet in batch.packets[..<batch.count] { try remux.write(packet) }
                    // The buffers kept for the batch's next use, within its budget.
                    var kept = 0
                    for packet in batch.packets {
                        let size = packet.capacity
                        if kept + size > Self.keptPerBatch { packet.unref() } else { kept += size }
                    }
                    batch.count = 0
                    batch.bytes = 0
                    batches.release(batch)
                }
            } catch {
                // `.stopped` is the walk's own stop (abandon); any other error is the write's, told to the walk.
                if error != .stopped { control.fail(error) }
            }
            ended.signal()
        }
        thread.name = "cropzoom repair writer"
        thread.start()
    }

    /// ``Remux/setTimecode(_:)`` while no sample has been handed over (the thread gives it to the remux before the
    /// first write); false after (the header may be written).
    func setTimecode(_ timecode: String) -> Bool {
        guard sent == 0 else { return false }
        self.timecode = timecode
        return true
    }

    /// Hands over a copy of one sample of output stream `stream` (`bytes`; its times in the reference stream's time
    /// base), waiting while the writer is ``depth`` batches behind. Throws the writer's error once a write failed.
    func write(
        stream: Int, bytes: some Collection<UInt8>, pts: Int64, dts: Int64, duration: Int64, key: Bool
    ) throws(CropZoomError) {
        do throws(CropZoomError) {
            let batch: Batch
            if let filling {
                batch = filling
            } else {
                batch = try batches.acquire()
                filling = batch
            }
            let packet = batch.packets[batch.count]
            try packet.refill(bytes)
            packet.streamIndex = stream
            packet.pts = pts
            packet.dts = dts
            packet.duration = duration
            packet.isKeyframe = key
            batch.count += 1
            batch.bytes += packet.size
            sent += 1
            if batch.count == Self.batchSize || batch.bytes >= Self.batchBytes { try handOver() }
        } catch {
            throw control.firstError ?? error
        }
    }

    /// Hands the batch being filled to the writer.
    private func handOver() throws(CropZoomError) {
        guard let batch = filling else { return }
        filling = nil
        _ = try queue.push(batch)
    }

    /// Waits for every sample handed over to be written, gives the streams the parameters decoding found
    /// (``Remux/complete(_:)``, by output stream), then writes the index and closes the file (``Remux/finish()``);
    /// false, with nothing written, when those parameters disagree with the header. Throws the first write's error.
    @discardableResult
    func finish(completing parameters: [Int: DecodedParameters] = [:]) throws(CropZoomError) -> Bool {
        do throws(CropZoomError) {
            try handOver()
        } catch {
            throw control.firstError ?? error
        }
        queue.close()
        ended.wait()
        ended.signal()
        if let error = control.firstError { throw error }
        guard let remux = lock.withLock({ made }) else {
            throw CropZoomError(.processing, path: "", reason: "the writer was not made")
        }
        guard remux.complete(parameters) else { return false }
        // No sample was written: the header is the trailer's to write, with the timecode.
        if let timecode { _ = remux.setTimecode(timecode) }
        try remux.finish()
        return true
    }

    /// Stops the thread without writing what is left (the repair failed or was cancelled); the output is discarded.
    func abandon() {
        control.fail(.stopped)
        ended.wait()
        ended.signal()
    }
}
