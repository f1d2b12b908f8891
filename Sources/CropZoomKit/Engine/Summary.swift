import CropZoomFFmpeg

extension JobRunner {
    /// The rules a finished run must pass before its file is finished: some video was encoded (else the trim's window
    /// or the input is named); a truncated input is a warning (`--strict` refused it earlier).
    static func check(_ counts: EngineCounts, job: Job, warn: (String) -> Void) throws(CropZoomError) {
        if counts.framesOut == 0 {
            if let range = job.trim.range {
                var reason =
                    String(format: "no video frame between %.3f s and ", range.start)
                    + (range.end.map { String(format: "%.3f s", $0) } ?? "the end")
                if let vs = job.trim.videoSpan.start, let ve = job.trim.videoSpan.end {
                    reason += String(format: ": the video runs from %.3f s to %.3f s", vs, ve)
                }
                throw CropZoomError(.usage, path: job.configuration.inputName, reason: reason)
            }
            throw CropZoomError(
                .inputUnreadable, path: job.configuration.inputName, reason: "no video frame could be decoded")
        }
        if let truncation = counts.truncation {
            warn(
                "\(job.configuration.inputName): \(truncation); the output holds what was there (\(setting: .strict) refuses such input)"
            )
        }
    }
}

extension TranscodeSummary {
    /// The summary of a finished job: its set-up, what the engine counted, the notices; `seconds` and `cpuSeconds`:
    /// the wall-clock and CPU time it took.
    init(job: Job, counts: EngineCounts, notices: [String], seconds: Double, cpuSeconds: Double) {
        let threads = job.threads
        self.init(
            // (HLS's --segment names its playlist, the output itself.)
            output: job.configuration.null
                ? "(null)" : job.muxer.segment != nil ? job.configuration.segmentPattern : job.configuration.output,
            outputWidth: job.plan.output.width,
            outputHeight: job.plan.output.height,
            videoCodec: job.encoder?.context.name ?? "none", pixelFormat: job.outputFormat.name,
            framesIn: counts.framesIn, framesOut: counts.framesOut,
            corruptSkipped: counts.decoderCorrupt + counts.demuxSkipped + counts.audioCorrupt
                + counts.copiedDamaged,
            duplicateTimestampsDropped: counts.duplicates,
            audioStreamsCopied: job.streams.audioCopied, audioStreamsReencoded: job.streams.audioReencoded,
            otherStreamsCopied: job.streams.otherCopied, streamsDropped: job.streams.dropped,
            audioPackets: counts.audioPackets,
            seconds: seconds, mediaDuration: job.duration ?? counts.lastTime,
            notices: notices, truncated: counts.truncation, pool: counts.pool,
            engine: EngineReport(
                threads: threads.threads, transformWorkers: max(1, threads.workers),
                decoderThreads: threads.decoder, encoderThreads: job.encoder == nil ? 0 : threads.encoder,
                busy: counts.busy.filter { job.encoder != nil || $0.key != .encode },
                waits: counts.waits,
                cpuSeconds: cpuSeconds,
                upstreamNice: Int(threads.upstreamNice)),
            window: job.plan.source, ffmpegFilter: job.plan.ffmpegFilter(scaler: job.configuration.scaler))
        if job.live != nil {
            self.framesDropped = Dictionary(
                uniqueKeysWithValues: DropPoint.allCases.map { ($0, counts.dropped[$0] ?? 0) })
        }
        self.liveEnd = counts.liveEnd
        self.clockRestarts = counts.clockRestarts
        self.firstFrameAfter = job.live?.firstFrameAfter
    }
}
