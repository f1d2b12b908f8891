import CCropZoomSystem
import Foundation

/// Runs a job on the calling thread, stage after stage (`--threads 1`, with single-threaded
/// codecs): the baseline for per-core throughput.
struct SerialEngine {
    let job: Job
    let progress: ((Int, Double) -> Void)?

    func run() throws(CropZoomError) -> EngineCounts {
        var c = EngineCounts()
        let pool = FramePool(
            width: job.plan.output.width, height: job.plan.output.height,
            format: job.outputFormat, capacity: 4)
        try pool.prefill()
        let transformer = job.makeTransformer(pool: pool)
        let packet = try Packet()
        let strict = job.configuration.strict
        var gate = TimestampGate()
        var lastReport = 0.0
        var t = Timer()
        let limit = job.configuration.frameLimit ?? Int.max
        var admitted = 0
        var pastEnd = false  // a frame at or after the trim's end was decoded

        func writeVideo(_ pkt: Packet) throws(CropZoomError) {
            guard let out = job.videoOutput else { return }
            t.switchTo("mux")
            try job.muxer.write(pkt, stream: out)
            t.switchTo("encode")
        }
        func handle(_ frame: Frame) throws(CropZoomError) {
            guard admitted < limit else { return }
            switch job.place(frame) {
            case .before: return
            case .after:
                pastEnd = true
                return
            case .keep: break
            }
            guard gate.admit(frame) else { return }
            admitted += 1
            let pts = frame.presentationTime
            t.switchTo("transform")
            let out = try transformer.transform(frame)
            defer { pool.release(out) }
            job.stampForEncoder(out)
            t.switchTo("encode")
            try job.encoder?.encode(out, writeVideo)
            t.switchTo("decode")
            c.framesOut += 1
            if pts != AVCode.noPTS { c.lastTime = job.mediaTime(pts) }
            if let progress {
                let now = monotonicSeconds()
                if now - lastReport >= 0.25 {
                    lastReport = now
                    progress(c.framesOut, c.lastTime)
                }
            }
        }

        // Once the video is complete, reading goes on only while a copied stream may still have
        // packets before the trim's end (files interleave loosely).
        var waitingFor = job.trim?.end.contains { $0 != nil } == true ? job.passThroughStreams : []
        readLoop: while !((admitted >= limit || pastEnd) && waitingFor.isEmpty) {
            if job.cancel.isSet { throw CropZoomError(.cancelled, path: job.configuration.input, reason: "cancelled") }
            let signal = cz_pending_signal()
            if signal != 0 { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
            t.switchTo("demux")
            switch try job.demuxer.read(into: packet, strict: strict) {
            case .again: continue
            case .endOfStream: break readLoop
            case .value:
                defer { packet.unref() }
                guard packet.streamIndex < job.routes.count else { continue }
                switch job.routes[packet.streamIndex] {
                case .video:
                    if admitted >= limit || pastEnd { continue }
                    t.switchTo("decode")
                    try job.decoder.decode(packet, strict: strict, handle)
                case .copy(let out):
                    if let trim = job.trim, !trim.admit(packet, waitingFor: &waitingFor) { continue }
                    if job.demuxer.isAudio(packet.streamIndex) { c.audioPackets += 1 }
                    t.switchTo("mux")
                    if !(try job.writeCopied(packet, stream: out)) { c.copiedDamaged += 1 }
                case .reencode(let tr, let out):
                    if let trim = job.trim, !trim.admit(packet, waitingFor: &waitingFor) { continue }
                    c.audioPackets += 1
                    t.switchTo("audio")
                    try tr.transcode(packet) { (p: Packet) throws(CropZoomError) in try job.muxer.write(p, stream: out)
                    }
                case .drop:
                    break
                }
            }
        }
        t.switchTo("decode")
        if admitted < limit && !pastEnd { try job.decoder.decode(nil, strict: strict, handle) }
        t.switchTo("encode")
        try job.encoder?.encode(nil, writeVideo)
        t.switchTo("audio")
        for case .reencode(let tr, let out) in job.routes {
            try tr.transcode(nil) { (p: Packet) throws(CropZoomError) in try job.muxer.write(p, stream: out) }
            c.audioCorrupt += tr.corruptPackets
        }
        t.switchTo(nil)
        c.framesIn = gate.framesIn
        c.duplicates = gate.duplicates
        c.busy = t.totals
        c.pool = pool.snapshot()
        return c
    }
}

/// Accumulates busy time per named stage on one thread (no allocation after the first use of
/// each name).
struct Timer {
    private(set) var totals: [String: Double] = [:]
    private var current: String?
    private var since = 0.0

    mutating func switchTo(_ stage: String?) {
        let now = monotonicSeconds()
        if let current { totals[current, default: 0] += now - since }
        current = stage
        since = now
    }
}

/// Lets through, in decode order, each frame whose presentation time is later than the last
/// one's; a frame repeating an earlier timestamp cannot be stored and is counted instead.
struct TimestampGate {
    private(set) var framesIn = 0
    private(set) var duplicates = 0
    private var lastPTS: Int64? = nil

    mutating func admit(_ frame: Frame) -> Bool {
        framesIn += 1
        let pts = frame.presentationTime
        if let last = lastPTS, pts != AVCode.noPTS, pts <= last {
            duplicates += 1
            return false
        }
        if pts != AVCode.noPTS { lastPTS = pts }
        return true
    }
}
