import Testing

@testable import CropZoomFFmpeg
@testable import CropZoomKit

@Suite("Encoder threads")
struct EncoderThreadTests {
    @Test(
        "x264 gets as many lookahead threads as threads from 2 to 5, one per 128 rows at most; its own choice otherwise"
    )
    func x264Lookahead() {
        #expect(VideoEncoder.x264LookaheadThreads(threads: 1, height: 1080) == nil)
        #expect(VideoEncoder.x264LookaheadThreads(threads: 2, height: 1080) == 2)
        #expect(VideoEncoder.x264LookaheadThreads(threads: 3, height: 1080) == 3)
        #expect(VideoEncoder.x264LookaheadThreads(threads: 5, height: 2160) == 5)
        #expect(VideoEncoder.x264LookaheadThreads(threads: 3, height: 256) == 2)
        #expect(
            VideoEncoder.x264LookaheadThreads(threads: 3, height: 240) == nil,
            "one slice of 128 rows: x264's own choice")
        #expect(VideoEncoder.x264LookaheadThreads(threads: 6, height: 1080) == nil)
        #expect(VideoEncoder.x264LookaheadThreads(threads: 12, height: 2160) == nil)
    }
}
