import CFFmpeg
import CropZoomCore

/// HDR10 static metadata (mastering display colour volume, content light level) of the input's
/// video, carried to the encoder (x265) and to the output stream's side data (Matroska colour
/// elements, MP4 `mdcv`/`clli`).
package struct HDRMetadata {
    var mastering: AVMasteringDisplayMetadata?
    var light: AVContentLightMetadata?

    /// From the input stream's side data (`av_stream_get_side_data`); where it has none and the
    /// video is PQ (SMPTE ST 2084), from the first decoded frame's (`cz_first_frame_hdr`, which
    /// opens `path` on its own; nil for standard input). Nil when there is none.
    package static func read(_ st: StreamRef, index: Int, path: String?) -> HDRMetadata? {
        var h = HDRMetadata()
        var size = 0
        if let p = av_stream_get_side_data(st.pointer, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size),
            size >= MemoryLayout<AVMasteringDisplayMetadata>.size
        {
            h.mastering = UnsafeRawPointer(p).loadUnaligned(as: AVMasteringDisplayMetadata.self)
        }
        if let p = av_stream_get_side_data(st.pointer, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &size),
            size >= MemoryLayout<AVContentLightMetadata>.size
        {
            h.light = UnsafeRawPointer(p).loadUnaligned(as: AVContentLightMetadata.self)
        }
        let pq = st.parameters.pointee.color_trc == AVCOL_TRC_SMPTE2084
        if h.mastering == nil && h.light == nil, let path, pq {
            var md = AVMasteringDisplayMetadata()
            var cll = AVContentLightMetadata()
            let found = cz_first_frame_hdr(path, Int32(index), 64, &md, &cll)
            if found > 0 && found & 1 != 0 { h.mastering = md }
            if found > 0 && found & 2 != 0 { h.light = cll }
        }
        return h.mastering == nil && h.light == nil ? nil : h
    }

    /// x265's `master-display` (chromaticities in 1/50000, luminance in 1/10000 cd/m², order
    /// G, B, R, white point, L(max,min)) and `max-cll` (MaxCLL,MaxFALL) parameters.
    package var x265Params: [String] {
        var params: [String] = []
        if let m = mastering, m.has_primaries != 0, m.has_luminance != 0 {
            func c(_ q: AVRational) -> Int { Int((av_q2d(q) * 50000).rounded()) }
            func l(_ q: AVRational) -> Int { Int((av_q2d(q) * 10000).rounded()) }
            let p = m.display_primaries
            let (r, g, b) = (p.0, p.1, p.2)
            let w = m.white_point
            params.append(
                "master-display=G(\(c(g.0)),\(c(g.1)))B(\(c(b.0)),\(c(b.1)))R(\(c(r.0)),\(c(r.1)))"
                    + "WP(\(c(w.0)),\(c(w.1)))L(\(l(m.max_luminance)),\(l(m.min_luminance)))")
        }
        if let light { params.append("max-cll=\(light.MaxCLL),\(light.MaxFALL)") }
        return params
    }

    /// Adds the metadata to an output stream as side data (`av_stream_new_side_data`).
    package func attach(to st: StreamRef) {
        if var m = mastering {
            let n = MemoryLayout<AVMasteringDisplayMetadata>.size
            if let dst = av_stream_new_side_data(st.pointer, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, n) {
                withUnsafeBytes(of: &m) { UnsafeMutableRawPointer(dst).copyMemory(from: $0.baseAddress!, byteCount: n) }
            }
        }
        if var l = light {
            let n = MemoryLayout<AVContentLightMetadata>.size
            if let dst = av_stream_new_side_data(st.pointer, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, n) {
                withUnsafeBytes(of: &l) { UnsafeMutableRawPointer(dst).copyMemory(from: $0.baseAddress!, byteCount: n) }
            }
        }
    }
}
