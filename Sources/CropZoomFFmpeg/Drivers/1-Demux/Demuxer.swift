import CFFmpeg
import CropZoomCore
import CropZoomSystem
import Foundation

/// The demux stage: reads packets from the input file in file order.
package final class Demuxer: @unchecked Sendable {
    // @unchecked Sendable: owned and driven by one thread (the demux stage).
    package let input: InputFormat
    /// Read errors skipped so far (damaged data the demuxer could resynchronise after).
    package private(set) var skippedErrors = 0
    private var consecutiveErrors = 0
    /// Latest packet end seen, in seconds of the input's clock (the truncation message, a live recording's end).
    package private(set) var reached: Double = 0
    private var lastWasPartial = false

    private func noteTime(_ packet: Packet) {
        let st = input.stream(packet.streamIndex)
        let t = packet.pts != AVCode.noPTS ? packet.pts : packet.dts
        guard t != AVCode.noPTS else { return }
        reached = max(reached, Double(t + packet.pointer.pointee.duration) * st.timeBase.seconds)
    }

    /// Where the streams' own headers say the media ends (seconds, the timestamps' clock): the
    /// latest start + duration of a stream, else the file's start + duration. Only for
    /// containers whose header states durations (`AVFMT_DURATION_FROM_STREAM`: MP4, Matroska …),
    /// not for ones whose duration FFmpeg estimates (MPEG-TS, raw streams).
    private var declaredEnd: Double? {
        guard input.pointer.pointee.duration_estimation_method == AVFMT_DURATION_FROM_STREAM else { return nil }
        return input.span().end
    }

    /// Why the input looks cut short ("the data ends at 0.87 s of 2.00 s"), when it does; set
    /// once the end of the data is reached. Without `strict` the job goes on with what is there.
    package private(set) var truncation: String?

    private func truncationReason(indexPastEnd: Bool) -> String {
        var reason = "truncated: the data ends at \(String(format: "%.2f", reached)) s"
        if let end = declaredEnd ?? input.duration, end > reached + 0.005 {
            reason += " of \(String(format: "%.2f", end)) s"
        } else if indexPastEnd {
            reason += "; the file's index points past its end"
        } else {
            reason += "; its last packet is cut short"
        }
        return reason
    }

    /// A live source's no-data timeout (the watch is re-armed with it after every packet).
    private let timeout: Double
    /// Whether a pending signal ends a live source's reads (not a sound device's: the picture's reader ending
    /// ends it, see the threaded engine).
    package var stopsOnSignal = true
    /// How long a live source's last read was blocked waiting for data (seconds; replayed for a packet read early):
    /// its wall time less the reading thread's CPU time in it — a source that makes its frames in the read (lavfi's
    /// generators, faster than real time) works for them, it does not wait.
    package private(set) var lastWait = 0.0
    /// When a live source's last packet was read from it (monotonic seconds; replayed for a packet read early).
    package private(set) var lastArrival = 0.0
    /// A live source's last read waited for data (2 ms or more): its packet had only just arrived.
    package var lastReadWaited: Bool { lastWait >= 0.002 }
    /// A capture device's reads during the set-up (``startEarlyReads(keepingVideo:)``), replayed first.
    private var early: EarlyReads?
    private var earlyTaken = false
    /// How a live source ended: "stopped" (a signal or a stop request), "no data for N s", or nil (its end).
    package private(set) var liveEnd: String?

    /// `strict` (`--strict`, fixed at set-up): damaged data and a truncated input are errors, not skipped.
    package let strict: Bool

    package init(
        path: String, format: String? = nil, options: [String: String] = [:], watch: IOWatch? = nil,
        interrupt: IOWatch? = nil, timeout: Double = 0,
        settings: (format: Setting, options: Setting) = (.inputFormat, .inputOption), bytes: [UInt8]? = nil,
        strict: Bool = false
    ) throws(CropZoomError) {
        self.timeout = timeout
        self.strict = strict
        do {
            input = try InputFormat(
                path: path, format: format, options: options, watch: watch, interrupt: interrupt, settings: settings,
                bytes: bytes)
        } catch  where watch?.reason == .timedOut {
            throw CropZoomError(
                .inputUnreadable, path: path, setting: .liveTimeout,
                reason: "no media from the source within \(String(format: "%g", timeout)) s (\(setting: .liveTimeout))")
        }
    }

    /// For a live source: a system error on the connection (an SRT or TCP peer that hung up: EIO, ECONNRESET,
    /// EPIPE …) is the source's end, not a damaged file's; nil for a file, for no error, and for FFmpeg's own
    /// codes (damaged data is skipped as usual).
    private func sourceClosed(_ code: Int32?) -> String? {
        guard input.watch != nil, let code, code < 0, code > -4096, code != AVCode.again else { return nil }
        return "the source closed the connection (\(String(cString: strerror(-code))))"
    }

    /// For a live source: why its reads end now (a stop or silence), or nil while they may go on. A pending
    /// signal counts as a stop: the recording ends and is kept.
    private func liveEnding() -> String? {
        guard let watch = input.watch else { return nil }
        switch watch.reason {
        case .stopped: return "stopped"
        case .timedOut: return "no data for \(String(format: "%g", timeout)) s"
        case .none: return stopsOnSignal && ProcessSignal.pending != 0 ? "stopped" : nil
        }
    }

    package var path: String { input.path }

    package func isAudio(_ stream: Int) -> Bool {
        input.stream(stream).isAudio
    }

    deinit { early?.cancel() }

    /// Whether the input is a capture device read without avio (x11grab, v4l2, pulse, alsa …): it captures only
    /// while read, so it is read from its open (``startEarlyReads(keepingVideo:)``).
    package var isDevice: Bool { input.watch != nil && input.pointer.pointee.pb == nil }

    /// Reads the device on a thread of its own from now until the engine's reader's first read (``EarlyReads``);
    /// video more than `keepingVideo` seconds older than the newest is let go. For a device (``isDevice``) only.
    package func startEarlyReads(keepingVideo: Double?) {
        let input = self.input
        early = EarlyReads(
            keepVideo: keepingVideo, isVideo: { input.stream($0).mediaType == .video },
            read: { [weak self] (packet: Packet) throws(CropZoomError) in
                guard let self else { return nil }
                return try self.readSource(into: packet, strict: false).map { (self.lastArrival, self.lastWait) }
            })
    }

    /// Once the start of the recording is settled: where the early reads' kept video starts when older video was
    /// let go (``EarlyReads/settle(onLateDrop:)``); video let go from now on is counted by `onLateDrop`.
    package func settleEarlyReads(onLateDrop: @escaping @Sendable () -> Void) -> Double? {
        guard let (stream, pts) = early?.settle(onLateDrop: onLateDrop), pts != AVCode.noPTS else { return nil }
        return Double(pts) * input.stream(stream).timeBase.seconds
    }

    /// Reads the next packet (`av_read_frame`): first those a device's early reads kept. Damaged data the demuxer
    /// can skip is counted and skipped; a file that ends where its index says there is more is reported as
    /// truncated.
    package func read(into packet: Packet) throws(CropZoomError) -> AVStep<Void> {
        if let early {
            if !earlyTaken {
                early.takeOver()
                earlyTaken = true
            }
            if let step = try early.next(into: packet) {
                switch step {
                case .value(let at):
                    (lastArrival, lastWait) = at
                    return .value(())
                case .again: return .again
                case .endOfStream: return .endOfStream
                }
            }
            self.early = nil
        }
        return try readSource(into: packet, strict: strict)
    }

    private func readSource(into packet: Packet, strict: Bool) throws(CropZoomError) -> AVStep<Void> {
        while true {
            let step: AVStep<Void>
            let started = input.watch == nil ? 0 : monotonicSeconds()
            let working = input.watch == nil ? 0 : threadCPUSeconds()
            defer {
                if input.watch != nil {
                    lastArrival = monotonicSeconds()
                    lastWait = lastArrival - started - (threadCPUSeconds() - working)
                }
            }
            do { step = try input.read(into: packet) } catch {
                if let end = liveEnding() ?? sourceClosed(error.code) {
                    liveEnd = end
                    return .endOfStream
                }
                let signal = ProcessSignal.pending
                if signal != 0 { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
                skippedErrors += 1
                consecutiveErrors += 1
                if strict || consecutiveErrors > 64 { throw error }
                continue
            }
            switch step {
            case .value:
                if let end = liveEnding() {
                    // A device's reads do not go through avio and its interrupt callback (x11grab, pulse): they
                    // go on, and a stop or the deadline ends them here. Reads through avio are interrupted by
                    // then, so a packet still coming is one the demuxer and its parsers held back, waiting for
                    // the next (the last two of an MPEG-TS stream): it arrived in time and is kept.
                    if input.pointer.pointee.pb == nil {
                        packet.unref()
                        liveEnd = end
                        return .endOfStream
                    }
                } else {
                    input.watch?.arm(timeout)
                }
                consecutiveErrors = 0
                // A short read of the last packet in the file is flagged corrupt by libavformat.
                lastWasPartial = packet.isCorrupt
                noteTime(packet)
                return .value(())
            case .again:
                return .again
            case .endOfStream:
                if let end = liveEnding() ?? sourceClosed(input.pointer.pointee.pb?.pointee.error) {
                    liveEnd = end
                    return .endOfStream
                }
                let signal = ProcessSignal.pending
                if signal != 0 { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
                // avio reports a short read past the end of data as EOF too; a pb error says otherwise.
                if let pb = input.pointer.pointee.pb, pb.pointee.error < 0, pb.pointee.error != AVCode.eof {
                    throw CropZoomError.ffmpeg(pb.pointee.error, .inputUnreadable, what: "reading", path: path)
                }
                let pastEnd = input.indexPointsPastEnd()
                // The data ran out before the file's own index or header says it should (half a
                // second of slack, or 2 %, for headers that round their durations). Only Matroska's
                // duration is trusted for this: it has no sample index to check, and its muxers
                // write the duration they saw; a fragmented MP4's can be anything (143165 s in the
                // corpus), and an MP4's sample table is checked instead (indexPointsPastEnd).
                let matroska = input.formatName.hasPrefix("matroska")
                let short = matroska && declaredEnd.map { reached > 0 && reached < $0 - max(0.5, 0.02 * $0) } ?? false
                if consecutiveErrors > 0 || lastWasPartial || pastEnd || short {
                    let reason = truncationReason(indexPastEnd: pastEnd)
                    if strict {
                        throw CropZoomError(
                            .inputUnreadable, path: path, setting: .strict, reason: reason + " (\(setting: .strict))")
                    }
                    truncation = reason
                }
                return .endOfStream
            }
        }
    }
}
