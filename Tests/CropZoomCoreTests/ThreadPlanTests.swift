import Testing

@testable import CropZoomCore

@Suite("Thread plan")
struct ThreadPlanTests {
    static let p1080 = 1920 * 1080, p2160 = 3840 * 2160

    @Test("--threads 1 runs everything on one thread, whatever the load")
    func serial() {
        let plan = ThreadPlan.make(
            threads: 1,
            load: .init(inputPixels: Self.p2160, outputPixels: Self.p1080, encoder: "libx264", preset: "veryfast"),
            decoder: 4, encoder: 4, workers: 4, processors: 8)
        #expect(plan == ThreadPlan(threads: 1, decoder: 1, encoder: 1, workers: 0))
    }

    @Test("no encoder: the decoder gets cores + 1 frame threads, half the cores transform")
    func decodeOnly() {
        let plan = ThreadPlan.make(
            threads: nil, load: .init(inputPixels: Self.p1080, outputPixels: Self.p1080, encoder: nil, preset: nil),
            processors: 2)
        #expect(plan == ThreadPlan(threads: 2, decoder: 3, encoder: 3, workers: 1))
    }

    @Test("encoding 1080p to 1080p: one decoder thread, x264 1.5 threads per core (rows A)")
    func encodeSameSize() {
        let plan = ThreadPlan.make(
            threads: nil,
            load: .init(inputPixels: Self.p1080, outputPixels: Self.p1080, encoder: "libx264", preset: "veryfast"),
            processors: 2)
        #expect(plan == ThreadPlan(threads: 2, decoder: 1, encoder: 3, workers: 1))
        let eight = ThreadPlan.make(
            threads: 8, load: .init(inputPixels: Self.p1080, outputPixels: Self.p1080, encoder: "libx264", preset: nil),
            processors: 2)
        #expect(eight == ThreadPlan(threads: 8, decoder: 4, encoder: 12, workers: 4))
    }

    @Test("4K to 1080p: the decoder gets the input's share of the pixels (row C)")
    func encodeDownscale() {
        let plan = ThreadPlan.make(
            threads: 2,
            load: .init(inputPixels: Self.p2160, outputPixels: Self.p1080, encoder: "libx264", preset: "veryfast"),
            processors: 2)
        #expect(plan.decoder == 2)
        #expect(plan.encoder == 3)
    }

    @Test(
        "x264 ultrafast/superfast: the encoder gets half the cores, one thread each (row D)",
        arguments: ["ultrafast", "superfast"])
    func fastPresets(preset: String) {
        let plan = ThreadPlan.make(
            threads: 2,
            load: .init(inputPixels: Self.p1080, outputPixels: Self.p1080, encoder: "libx264", preset: preset),
            processors: 2)
        #expect(plan == ThreadPlan(threads: 2, decoder: 1, encoder: 1, workers: 1, upstreamNice: 10))
        // Not for other encoders, whose presets mean something else.
        let x265 = ThreadPlan.make(
            threads: 2,
            load: .init(inputPixels: Self.p1080, outputPixels: Self.p1080, encoder: "libx265", preset: preset),
            processors: 2)
        #expect(x265.encoder == 3)
        #expect(x265.upstreamNice == 0, "a threaded encoder keeps the upstream stages at normal priority")
    }

    @Test("a warp per frame (rotation by any angle, --transform): a transform worker per core; --workers still wins")
    func heavyTransform() {
        var load = ThreadPlan.Load(
            inputPixels: Self.p1080, outputPixels: Self.p1080, encoder: "libx264", preset: "veryfast")
        load.heavyTransform = true
        #expect(
            ThreadPlan.make(threads: nil, load: load, processors: 2)
                == ThreadPlan(threads: 2, decoder: 1, encoder: 3, workers: 2))
        #expect(ThreadPlan.make(threads: nil, load: load, workers: 1, processors: 2).workers == 1)
        #expect(ThreadPlan.make(threads: 1, load: load, processors: 2).workers == 0)
    }

    @Test("overrides win, except that --strict decodes on one thread")
    func overrides() {
        let load = ThreadPlan.Load(
            inputPixels: Self.p1080, outputPixels: Self.p1080, encoder: "libx264", preset: "veryfast")
        let plan = ThreadPlan.make(threads: 2, load: load, decoder: 3, encoder: 6, workers: 2, processors: 2)
        #expect(plan == ThreadPlan(threads: 2, decoder: 3, encoder: 6, workers: 2))
        var strict = load
        strict.strict = true
        #expect(ThreadPlan.make(threads: 2, load: strict, decoder: 3, processors: 2).decoder == 1)
    }
}
