import Foundation

/// How a job's threads are shared out: the video decoder's frame threads, the video encoder's
/// threads and the transform workers, so that codec threads and workers share the cores
/// instead of oversubscribing them. Every number below was measured on 2 cores against the
/// ffmpeg CLI (Benchmarks/README.md, "Thread plan").
package struct ThreadPlan: Equatable {
    package var threads: Int, decoder: Int, encoder: Int, workers: Int
    /// Nice value of the stages before the encoder (demux, decode, transform workers).
    package var upstreamNice: Int32 = 0

    /// What the plan depends on besides the core count.
    package struct Load: Equatable {
        /// Pixels per frame decoded and encoded.
        package var inputPixels: Int, outputPixels: Int
        /// The video encoder (nil: none, `--codec none`) and its preset.
        package var encoder: String?, preset: String?
        /// `--strict` decodes on one thread (see below).
        package var strict = false
        /// The transform is the heavy stage (the 2-D warp: ~23 ms per 1080p frame on one core,
        /// against ~5 ms to decode and ~1.5 ms for a zoom).
        package var heavyTransform = false

        package init(
            inputPixels: Int, outputPixels: Int, encoder: String? = nil, preset: String? = nil, strict: Bool = false,
            heavyTransform: Bool = false
        ) {
            self.inputPixels = inputPixels
            self.outputPixels = outputPixels
            self.encoder = encoder
            self.preset = preset
            self.strict = strict
            self.heavyTransform = heavyTransform
        }
    }

    /// The plan for `threads` cores (nil: `processors`, the CPUs the process may use, `UsableCPUs`) and
    /// `load`; the configuration's overrides (`--decoder-threads`, `--encoder-threads`, `--workers`) win.
    package static func make(
        threads requested: Int?, load: Load,
        decoder: Int? = nil, encoder: Int? = nil, workers: Int? = nil,
        processors: Int
    ) -> ThreadPlan {
        let n = max(1, requested ?? processors)
        // --threads 1: everything, codecs included, on the calling thread (the serial engine).
        if n == 1 { return ThreadPlan(threads: 1, decoder: 1, encoder: 1, workers: 0) }
        var plan = ThreadPlan(threads: n, decoder: n + 1, encoder: n + n / 2, workers: max(1, n / 2))
        if load.encoder != nil {
            // Encoding: the encoder is the heavy stage. The decoder gets the input's share of the
            // pixel work, at least one thread (1080p→1080p: 1 thread; 4K→1080p: 2 on 2 cores).
            // Fewer decoder frame threads cost less CPU (frame threading adds ~10 %) and memory
            // (each holds its own reference pictures): row A's peak RSS fell 335 → 316 MiB.
            let share = Double(load.inputPixels) / Double(max(1, load.inputPixels + load.outputPixels))
            plan.decoder = min(n + 1, max(1, Int((Double(n) * share).rounded())))
            // x264's fastest presets encode a frame in about the time decode + transform take,
            // so a pipeline split (encoder on half the cores, one thread each) beats frame
            // threading, which costs x264 6 % more CPU: row D 2.07 s → 1.97 s.
            if load.encoder == "libx264", ["ultrafast", "superfast"].contains(load.preset ?? "") {
                plan.encoder = max(1, n / 2)
            }
        }
        // A warp per frame outweighs decoding and (fast) encoding: a worker per core.
        // 1080p --rotate 7.5, x264 veryfast, 2 cores: 1 worker 3.95–4.15 s, 2 workers 3.19–3.26 s.
        if load.heavyTransform { plan.workers = n }
        plan.decoder = decoder ?? plan.decoder
        plan.encoder = encoder ?? plan.encoder
        plan.workers = workers ?? plan.workers
        // A pipeline split (the encoder on one thread, beside the stages that feed it): the
        // encoder is the critical path, and the scheduler would share the cores evenly between
        // it and the stages that are ahead of it anyway. Lower their priority, so they fill the
        // encoder's idle time instead of taking its core: row D 2.31 s → 2.17–2.20 s (nice 5, 10
        // and 19 measured alike). Not with a threaded encoder, whose threads would then starve
        // the decoder (row D with 2–3 x264 threads: 2.26 s → 2.31–2.33 s; row A: no gain).
        if load.encoder != nil && plan.encoder == 1 { plan.upstreamNice = 10 }
        // FFmpeg 5.1's frame-threaded decoders report some damage (concealed frames) only on
        // some schedules; --strict must see every one, so it decodes on one thread.
        if load.strict { plan.decoder = 1 }
        return plan
    }

    package init(threads: Int, decoder: Int, encoder: Int, workers: Int, upstreamNice: Int32 = 0) {
        self.threads = threads
        self.decoder = decoder
        self.encoder = encoder
        self.workers = workers
        self.upstreamNice = upstreamNice
    }
}
