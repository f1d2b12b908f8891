import CropZoomCore
import Foundation

/// A capture device's reads from the moment it is open until the engine's reader takes over (issue 27 item 6).
///
/// A device captures only while it is read: x11grab grabs the screen when asked, and once asked late it grabs the
/// same moment many times over (a burst the live policy drops); a sound server's or a camera's buffer overflows. The
/// set-up after the device opens — the second device, the encoder, the output's header — takes from milliseconds
/// to seconds (a PulseAudio monitor of an idle sink: 1.8 s, measured). A thread therefore reads the device from
/// its open until ``takeOver()``, keeping each packet with the moment it arrived and how long the read waited, and
/// the demuxer's reader replays them first, as if it had read them then. Video older than `keepVideo` seconds
/// before the newest is let go from the front (up to the next keyframe), so the backlog stays within the live
/// latency bound; ``settle(onLateDrop:)`` says from where the picture is whole. Sound is kept whole.
///
/// `@unchecked Sendable`: the queue and flags are behind `lock` while the early thread runs; ``next(into:)`` reads
/// them without it, after ``takeOver()`` has waited for that thread to end (its semaphore orders the two). The demuxer
/// is used by the early thread alone until then (the set-up meanwhile reads only stream parameters that a device's
/// reads do not change).
package final class EarlyReads: @unchecked Sendable {
    package struct Item {
        package let packet: Packet
        /// When the read returned (monotonic seconds).
        package let arrival: Double
        /// How long the read waited for the device (seconds).
        package let wait: Double
        package let isVideo: Bool
    }

    private let lock = NSLock()
    private var items: [Item] = []
    private var head = 0
    /// How the reads ended before the take-over (the device's end, a stop, an error), if they did.
    private var ending: CropZoomError?
    private var ended = false
    private var stopping = false
    private let done = DispatchSemaphore(value: 0)
    private let keepVideo: Double?
    /// Video packets let go from the front; once the start is settled each is counted (`onLateDrop`).
    private var dropped = 0
    package var letGo: Int { lock.withLock { dropped } }
    private var settled = false
    private var onLateDrop: (@Sendable () -> Void)?

    /// Starts reading `demuxer` on a thread of its own (`read` is the demuxer's own read of the source).
    package init(
        keepVideo: Double?, isVideo: @escaping @Sendable (Int) -> Bool,
        read: @escaping @Sendable (Packet) throws(CropZoomError) -> AVStep<(arrival: Double, wait: Double)>?
    ) {
        self.keepVideo = keepVideo
        let thread = Thread { [self] in
            defer { done.signal() }
            while !lock.withLock({ stopping }) {
                let packet: Packet
                do throws(CropZoomError) {
                    packet = try Packet()
                    switch try read(packet) {
                    case nil, .endOfStream?:
                        lock.withLock { ended = true }
                        return
                    case .again?:
                        continue
                    case .value(let at)?:
                        add(
                            Item(
                                packet: packet, arrival: at.arrival, wait: at.wait, isVideo: isVideo(packet.streamIndex)
                            ))
                    }
                } catch {
                    lock.withLock {
                        ending = error
                        ended = true
                    }
                    return
                }
            }
        }
        thread.name = "cropzoom-early-read"
        thread.start()
    }

    private func add(_ item: Item) {
        lock.withLock {
            items.append(item)
            guard let keep = keepVideo, item.isVideo else { return }
            var dropping = false
            while head < items.count - 1, items[head].isVideo {
                let front = items[head]
                let old = item.arrival - front.arrival > keep
                guard old || (dropping && !front.packet.isKeyframe) else { break }
                front.packet.unref()
                head += 1
                dropped += 1
                dropping = true
                if settled { onLateDrop?() }
            }
            if head > 64 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
        }
    }

    /// Where the kept video starts (its first packet's presentation time, in its stream's units) when older video
    /// was let go, else nil. From now on, video let go is counted by `onLateDrop` (the recording has started).
    package func settle(onLateDrop: @escaping @Sendable () -> Void) -> (stream: Int, pts: Int64)? {
        lock.withLock {
            settled = true
            self.onLateDrop = onLateDrop
            guard dropped > 0, let first = items[head...].first(where: { $0.isVideo }) else { return nil }
            return (first.packet.streamIndex, first.packet.pts)
        }
    }

    /// Tells the early thread to stop and waits for its read under way (at most one frame or fragment).
    package func takeOver() {
        lock.withLock { stopping = true }
        done.wait()
        done.signal()
    }

    /// Asks the early thread to stop without waiting (a set-up that failed).
    package func cancel() { lock.withLock { stopping = true } }

    /// The next packet read early, moved into `packet`, with when it arrived and how long its read waited; then how
    /// the early reads ended (nil: the reader goes on reading the device). After ``takeOver()``.
    package func next(into packet: Packet) throws(CropZoomError) -> AVStep<(arrival: Double, wait: Double)>? {
        if head < items.count {
            let item = items[head]
            head += 1
            packet.take(item.packet)
            return .value((item.arrival, item.wait))
        }
        items = []
        head = 0
        if let ending {
            self.ending = nil
            ended = false
            throw ending
        }
        if ended {
            ended = false
            return .endOfStream
        }
        return nil
    }

    /// Packets waiting to be replayed.
    package var count: Int { lock.withLock { items.count - head } }
}
