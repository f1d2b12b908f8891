import CFFmpeg
import CPlaneKernels
import Testing

/// CPlaneKernels includes no FFmpeg header, so its chroma sitings are its own enum; the zimg
/// bridge is handed an AVChromaLocation's value as it is, which is right only while the two agree.
@Suite("Chroma location numbering")
struct ChromaLocationTests {
    @Test func kernelNumberingIsFFmpegs() {
        let pairs: [(cz_chroma_location, AVChromaLocation)] = [
            (CZ_CHROMA_UNSPECIFIED, AVCHROMA_LOC_UNSPECIFIED),
            (CZ_CHROMA_LEFT, AVCHROMA_LOC_LEFT),
            (CZ_CHROMA_CENTER, AVCHROMA_LOC_CENTER),
            (CZ_CHROMA_TOPLEFT, AVCHROMA_LOC_TOPLEFT),
            (CZ_CHROMA_TOP, AVCHROMA_LOC_TOP),
            (CZ_CHROMA_BOTTOMLEFT, AVCHROMA_LOC_BOTTOMLEFT),
            (CZ_CHROMA_BOTTOM, AVCHROMA_LOC_BOTTOM),
        ]
        for (kernel, ffmpeg) in pairs {
            #expect(Int(kernel.rawValue) == Int(ffmpeg.rawValue))
        }
        #expect(Int(AVCHROMA_LOC_NB.rawValue) == pairs.count)
    }
}
