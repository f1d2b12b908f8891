import Foundation
import Testing

@testable import CropZoomCore
@testable import CropZoomFFmpeg
@testable import CropZoomKit

/// The repair's writer and picture check make their FFmpeg objects on their own threads (probing the reference is off
/// the walk's path): an object that cannot be made is the error the walk gets, not a hang and not a silent success.
@Suite("Repair threads", .timeLimit(.minutes(1)))
struct RepairThreadsTests {
    static let refused = CropZoomError(.usage, what: "reading the reference", path: "ref.mp4", reason: "refused")

    @Test("a writer that cannot be made: the walk's hand-overs or finish() throw its error")
    func writerNotMade() throws {
        let remux = try BackgroundRemux { () throws(CropZoomError) -> Remux in throw Self.refused }
        var thrown: CropZoomError?
        // Two batches handed over (fewer than the pool holds: nothing waits for a writer that is not there).
        do throws(CropZoomError) {
            for i in 0..<(BackgroundRemux.batchSize * 2) {
                try remux.write(
                    stream: 0, bytes: [UInt8](repeating: 1, count: 8), pts: Int64(i), dts: Int64(i),
                    duration: 1, key: true)
            }
            try remux.finish()
        } catch {
            thrown = error
        }
        #expect(thrown == Self.refused)
    }

    @Test("a writer that cannot be made, with no sample handed over: finish() throws its error")
    func writerNotMadeNoSample() throws {
        let remux = try BackgroundRemux { () throws(CropZoomError) -> Remux in throw Self.refused }
        #expect(remux.setTimecode("01:00:00:00"))
        #expect(throws: Self.refused) { try remux.finish() }
    }

    @Test("a picture check that cannot be made: its verdict is that error, as soon as asked and at finish()")
    func checkNotMade() throws {
        let check = BackgroundPictureCheck { () throws(CropZoomError) -> RecoveredPictureCheck in throw Self.refused }
        try check.add([0, 0, 0, 1], pts: 0, dts: 0, key: true)
        #expect(throws: Self.refused) { try check.finish() }
        #expect(throws: Self.refused) { try check.failedPictures() }
    }
}
