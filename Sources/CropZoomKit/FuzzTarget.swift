import CropZoomFFmpeg

/// In-process fuzzing's entry (libFuzzer's `LLVMFuzzerTestOneInput` and its replay driver, `Tests/fuzz/libfuzzer`;
/// Benchmarks/RELIABILITY.md): one input, given as bytes, through the job path the command line takes — set-up,
/// the plan, then a transcode of its first few frames — on the serial engine, to the null output. Nothing is
/// written and nothing but the bytes is read. Not API: `@_spi(Fuzzing)`.
@_spi(Fuzzing) public enum FuzzTarget {
    /// The most video frames an input is transcoded for.
    public static let frameLimit = 10

    /// The job every input gets: a 1.5× zoom encoded as a `.mkv` would be (libx264 `ultrafast`, audio copied or
    /// re-encoded as Matroska needs) to the null output (`null`), at most ``frameLimit`` frames, one thread (the
    /// serial engine, so a run is deterministic). The input is named `memory` in messages.
    public static var configuration: TranscodeConfiguration {
        var cfg = TranscodeConfiguration(input: "memory", output: "fuzz.mkv")
        cfg.null = true
        cfg.threads = 1
        cfg.frameLimit = frameLimit
        cfg.preset = "ultrafast"
        cfg.geometry.zoom = 1.5
        return cfg
    }

    /// Runs `bytes` as an input file read from memory (an `AVIOContext` over them, ``MemoryInput``): the plan
    /// (`JobRunner.plan`, as `TranscodeJob.plan`), then the transcode (`JobRunner.run`, as `TranscodeJob.run`), with
    /// FFmpeg's log silenced (`FFmpegLog.silence()`). Returns the transcode's summary or throws its error,
    /// the error the command line would report; never exits.
    public static func run(_ bytes: [UInt8]) throws(CropZoomError) -> TranscodeSummary {
        FFmpegLog.silence()
        let planner = JobRunner(configuration: configuration)
        planner.inputBytes = bytes
        _ = try planner.plan()
        let runner = JobRunner(configuration: configuration)
        runner.inputBytes = bytes
        return try runner.run()
    }
}
