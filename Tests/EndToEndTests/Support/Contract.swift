// The contract checks shared by the sample and corpus tests.  Each returns a list of
// problems (empty = the property holds) with numbers in it, so a test can both #expect on it
// and print a one-line verdict.
//
// Timing precision used throughout (contract point 1 and 2): a timestamp of the output must
// equal the input's within HALF A TICK of the output stream's time base, plus 1 µs for
// ffprobe printing `*_time` values with 6 decimals (each side may be off by 0.5 µs).

import Foundation

enum Contract {

    /// ffprobe prints times with 6 decimals.
    static let printSlack = 1e-6

    /// Half a tick of `timeBase` plus the printing slack.
    static func tolerance(_ timeBase: Oracle.Rational) -> Double {
        let tick = timeBase.doubleValue
        return (tick.isFinite && tick > 0 ? tick / 2 : 0.5e-3) + printSlack
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.3f ms", seconds * 1000) }
    static func s6(_ seconds: Double) -> String { String(format: "%.6f", seconds) }

    /// True for containers that cannot store negative timestamps and shift every stream
    /// instead (Matroska, WebM).
    static func shiftsNegativeTimestamps(_ output: URL) -> Bool {
        ["mkv", "webm", "mka"].contains(output.pathExtension.lowercased())
    }

    /// The earliest timestamp of `path` (format start time; packets may start earlier than
    /// the reported start in MP4 with edit-list priming, so those are looked at too).
    static func earliestTimestamp(_ path: String) throws -> Double {
        var earliest = try Oracle.format(path).formatStartTime ?? 0
        for stream in try Oracle.streams(path) where stream.codecType == "audio" || stream.codecType == "video" {
            if let start = stream.startTime { earliest = min(earliest, start) }
        }
        return earliest
    }

    /// An MPEG-TS/PS input's clock origin (its format start time), which cropzoom's output
    /// starts from: every stream moves back by it, their offsets kept. Nil for other inputs.
    static func clockOrigin(_ input: String) throws -> Double? {
        let format = try Oracle.format(input)
        guard ["mpegts", "mpeg"].contains(format.formatName), let start = format.formatStartTime, start != 0 else {
            return nil
        }
        return start
    }

    /// The common shift the output container applied to every stream: 0 unless the output is
    /// Matroska/WebM and the input has negative timestamps, in which case it is measured on
    /// the first video frame and must lie in (0, -earliest input timestamp + 1 ms].
    static func commonShift(input: String, output: URL, inputPTS: [Double], outputPTS: [Double])
        throws -> (shift: Double, problems: [String])
    {
        if let origin = try clockOrigin(input) {
            // An MPEG-TS output may move every stream forward again by its first packet's
            // decode delay (B-frames): measured on the first frame, at most 0.2 s.
            guard ["ts", "m2ts"].contains(output.pathExtension.lowercased()), let i = inputPTS.min(),
                let o = outputPTS.min()
            else { return (-origin, []) }
            let shift = o - i
            if shift < -origin - printSlack || shift > -origin + 0.2 {
                return (
                    shift,
                    ["the output moved by \(ms(shift)), not by the clock origin \(ms(-origin)) (+ ≤ 0.2 s)"]
                )
            }
            return (shift, [])
        }
        guard shiftsNegativeTimestamps(output) else { return (0, []) }
        let earliest = try earliestTimestamp(input)
        guard earliest < 0, let i = inputPTS.min(), let o = outputPTS.min() else { return (0, []) }
        let shift = o - i
        if shift < -printSlack || shift > -earliest + 1e-3 {
            return (
                shift,
                [
                    "the Matroska shift \(ms(shift)) is not within 0…\(ms(-earliest)) (the input's most negative "
                        + "timestamp)"
                ]
            )
        }
        return (shift, [])
    }

    // MARK: - Point 1: one output frame per input frame, same pts

    struct FrameReport {
        var problems: [String]
        var inputFrames: Int
        var outputFrames: Int
        var droppedRepeats: Int
        var shift: Double
    }

    /// Compares the decoded frame pts of the first video stream of `input` and `output`.
    /// `repeatsDropped`: the number of frames cropzoom said it dropped because their pts
    /// repeated (nil = none may be dropped); then the input list without its repeated pts
    /// must match, and the count must equal the number of repeats ffprobe finds.
    static func checkFrames(input: String, output: URL, repeatsDropped: Int? = nil) throws -> FrameReport {
        let inPTS = try Oracle.videoFramePTS(input)
        let outPTS = try Oracle.videoFramePTS(output.path)
        guard let outVideo = try Oracle.streams(output.path).first(where: { $0.codecType == "video" }) else {
            return FrameReport(
                problems: ["the output has no video stream"], inputFrames: inPTS.count,
                outputFrames: 0, droppedRepeats: 0, shift: 0)
        }
        let tol = tolerance(outVideo.timeBase)
        var problems: [String] = []
        let (shift, shiftProblems) = try commonShift(input: input, output: output, inputPTS: inPTS, outputPTS: outPTS)
        problems += shiftProblems

        // Input frames whose pts already appeared (the only ones cropzoom may drop).
        var seen = Set<Int64>()
        var unique: [Double] = []
        for t in inPTS {
            let key = Int64((t * 1e6).rounded())
            if seen.insert(key).inserted { unique.append(t) }
        }
        let repeats = inPTS.count - unique.count
        var expected = inPTS
        if let dropped = repeatsDropped, dropped > 0 {
            if dropped != repeats {
                problems.append(
                    "the summary says \(dropped) frames with repeated timestamps were dropped, ffprobe finds "
                        + "\(repeats) repeated pts in the input"
                )
            }
            expected = unique
        }
        if outPTS.count != expected.count {
            problems.append(
                "frame count: input \(inPTS.count) decoded frames"
                    + (repeats > 0 ? " (\(repeats) with repeated pts)" : "")
                    + ", output \(outPTS.count)")
        }
        var mismatches: [String] = []
        var worst = 0.0
        for (n, (a, b)) in zip(expected, outPTS).enumerated() {
            let error = abs((b - shift) - a)
            worst = max(worst, error)
            if error > tol {
                if mismatches.count < 3 { mismatches.append("#\(n) in \(s6(a)) out \(s6(b - shift))") }
            }
        }
        let bad = zip(expected, outPTS).filter { abs(($0.1 - shift) - $0.0) > tol }.count
        if bad > 0 {
            problems.append(
                "\(bad) of \(min(expected.count, outPTS.count)) frame pts differ by more than half a tick "
                    + "(\(ms(tol)), time base \(outVideo.timeBase)); worst \(ms(worst)); e.g. "
                    + "\(mismatches.joined(separator: ", "))"
                    + (shift != 0 ? " (after the common shift \(ms(shift)))" : ""))
        }
        return FrameReport(
            problems: problems, inputFrames: inPTS.count, outputFrames: outPTS.count,
            droppedRepeats: inPTS.count - outPTS.count, shift: shift)
    }

    // MARK: - Point 2: audio copied packet for packet

    /// Compares every audio stream of `input` with the output audio stream of the same rank:
    /// same number of packets, in order, equal MD5 (when `compareHashes`), equal pts (half a
    /// tick of the output audio time base, after `shift`), and the offset between the first
    /// audio pts and the first video pts unchanged within 1 ms.
    static func checkCopiedAudio(input: String, output: URL, compareHashes: Bool = true, shift: Double = 0)
        throws -> [String]
    {
        let inStreams = try Oracle.streams(input)
        let outStreams = try Oracle.streams(output.path)
        let inAudio = inStreams.filter { $0.codecType == "audio" }
        let outAudio = outStreams.filter { $0.codecType == "audio" }
        var problems: [String] = []
        if inAudio.count != outAudio.count {
            problems.append("audio streams: input \(inAudio.count), output \(outAudio.count)")
        }
        let inFirstVideo = try Oracle.videoFramePTS(input).min()
        let outFirstVideo = try Oracle.videoFramePTS(output.path).min()
        for (rank, (a, b)) in zip(inAudio, outAudio).enumerated() {
            let label = "audio #\(rank) (stream \(a.index) -> \(b.index))"
            if a.codecName != b.codecName {
                problems.append("\(label): codec \(a.codecName ?? "?") became \(b.codecName ?? "?") (not copied)")
                continue
            }
            let pin = try Oracle.packets(input, streamIndex: a.index)
            let pout = try Oracle.packets(output.path, streamIndex: b.index)
            if pin.count != pout.count {
                problems.append("\(label): \(pin.count) packets in, \(pout.count) out")
            }
            let tol = tolerance(b.timeBase)
            var hashDiffs = 0
            var firstHashDiff: Int?
            var ptsDiffs = 0
            var firstPtsDiff: String?
            for (n, (p, q)) in zip(pin, pout).enumerated() {
                if compareHashes && (p.hash != q.hash || p.size != q.size) {
                    hashDiffs += 1
                    if firstHashDiff == nil { firstHashDiff = n }
                }
                if let x = p.ptsTime, let y = q.ptsTime {
                    if abs((y - shift) - x) > tol {
                        ptsDiffs += 1
                        if firstPtsDiff == nil { firstPtsDiff = "#\(n) in \(s6(x)) out \(s6(y - shift))" }
                    }
                } else if (p.ptsTime == nil) != (q.ptsTime == nil) {
                    ptsDiffs += 1
                    if firstPtsDiff == nil { firstPtsDiff = "#\(n) pts present in one file only" }
                }
            }
            if hashDiffs > 0 {
                let n = firstHashDiff!
                problems.append(
                    "\(label): \(hashDiffs) of \(min(pin.count, pout.count)) packets differ in bytes (MD5), first "
                        + "#\(n): "
                        + "\(pin[n].size) B \(pin[n].hash) vs \(pout[n].size) B \(pout[n].hash)")
            }
            if ptsDiffs > 0 {
                problems.append(
                    "\(label): \(ptsDiffs) packet pts differ by more than \(ms(tol)) (time base \(b.timeBase)), "
                        + "first \(firstPtsDiff!)"
                )
            }
            // A/V offset.
            if let va = inFirstVideo, let vb = outFirstVideo,
                let aa = pin.compactMap(\.ptsTime).min(), let ab = pout.compactMap(\.ptsTime).min()
            {
                let before = aa - va
                let after = ab - vb
                if abs(before - after) > 1e-3 {
                    problems.append("\(label): first audio pts - first video pts was \(ms(before)), is \(ms(after))")
                }
            }
        }
        return problems
    }

    // MARK: - Point 3: the picture

    /// Pixel format to compare pictures in: the precision both have — 10-bit where both are deeper than 8 bits,
    /// 4:4:4 where both are 4:4:4 (an H.264 default of 8-bit 4:2:0 from a 4:4:4 or 10-bit input is compared
    /// at 8-bit 4:2:0).
    static func comparisonPixelFormat(_ inputPixFmt: String?, output outputPixFmt: String?) -> String {
        let (f, g) = (inputPixFmt ?? "", outputPixFmt ?? inputPixFmt ?? "")
        let deep = { (s: String) in s.contains("10") || s.contains("12") }
        if deep(f) && deep(g) { return "yuv420p10le" }
        if f.contains("444") && g.contains("444") { return "yuv444p" }
        return "yuv420p"
    }

    // MARK: - Output files

    /// Top-level boxes of an ISO-BMFF (MP4/MOV) file: 4-byte big-endian size + 4-byte type;
    /// size 1 means a 64-bit size follows, size 0 means "to the end of the file".
    static func topLevelBoxes(_ url: URL) throws -> [(type: String, offset: UInt64, size: UInt64)] {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let fileSize = try handle.seekToEnd()
        var offset: UInt64 = 0
        var boxes: [(type: String, offset: UInt64, size: UInt64)] = []
        func be(_ bytes: Data) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }
        while offset + 8 <= fileSize {
            try handle.seek(toOffset: offset)
            guard let header = try handle.read(upToCount: 16), header.count >= 8 else { break }
            var size = be(header.prefix(4))
            let type = String(decoding: header.dropFirst(4).prefix(4), as: UTF8.self)
            if size == 1 {
                guard header.count >= 16 else {
                    throw Oracle.Failure("\(url.path): truncated 64-bit box header at \(offset)")
                }
                size = be(header.dropFirst(8).prefix(8))
            } else if size == 0 {
                size = fileSize - offset
            }
            guard size >= 8, offset + size <= fileSize else {
                throw Oracle.Failure(
                    "\(url.path): box '\(type)' at \(offset) has impossible size \(size) (file \(fileSize) B)")
            }
            boxes.append((type, offset, size))
            offset += size
        }
        return boxes
    }

    /// Problems with the MP4/MOV layout: `moov` must exist and come before `mdat`.
    static func checkFaststart(_ url: URL) throws -> [String] {
        let boxes = try topLevelBoxes(url)
        let types = boxes.map(\.type)
        guard let moov = types.firstIndex(of: "moov") else { return ["no moov box (top level: \(types))"] }
        guard let mdat = types.firstIndex(of: "mdat") else { return ["no mdat box (top level: \(types))"] }
        return moov < mdat ? [] : ["moov comes after mdat (top level: \(types.joined(separator: ", ")))"]
    }

    // MARK: - cropzoom's stderr

    /// The `N` of "N frames with repeated timestamps dropped" in the summary (0 when absent).
    static func repeatedTimestampsDropped(_ stderr: String) -> Int {
        number(before: " frames with repeated timestamps dropped", in: stderr) ?? 0
    }

    /// The `N` of "N damaged packets skipped" in the summary (0 when absent).
    static func damagedPacketsSkipped(_ stderr: String) -> Int {
        number(before: " damaged packets skipped", in: stderr) ?? 0
    }

    private static func number(before phrase: String, in text: String) -> Int? {
        guard let range = text.range(of: phrase) else { return nil }
        let digits = text[..<range.lowerBound].reversed().prefix(while: { $0.isNumber })
        return Int(String(digits.reversed()))
    }
}
