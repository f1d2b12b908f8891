import Testing

@testable import CropZoomFFmpeg
@testable import CropZoomKit

@Suite("FFmpeg results")
struct AVResultTests {
    @Test func ffmpegCodesCarryAvStrerrorText() {
        let e = CropZoomError.ffmpeg(AVCode.invalidData, .inputUnreadable, what: "", path: "a.mp4")
        #expect(e.reason == "Invalid data found when processing input")
        #expect(e.code == AVCode.invalidData)
        #expect(e.description == "a.mp4: Invalid data found when processing input")
    }

    @Test func avStepsAreNotErrors() throws {
        // EAGAIN and EOF from a decoder that has seen nothing / everything are control flow.
        #expect(AVCode.again != AVCode.eof)
        #expect(AVCode.again < 0 && AVCode.eof < 0)
    }
}
