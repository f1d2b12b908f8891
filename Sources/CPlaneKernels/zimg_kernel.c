// The zimg crop+scale kernel (see CPlaneKernels.h, "zimg"). Follows the set-up measured in
// Benchmarks/Sources/CKernels/kernels.c: the graph and its temporary buffer are built once, the
// window is read by pointer offset into an aligned sub-picture, and the exact (possibly
// sub-pixel) window goes to zimg as `active_region`.
#include "CPlaneKernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zimg.h>

void cz_zimg_version(unsigned *major, unsigned *minor, unsigned *micro) {
    zimg_get_version_info(major, minor, micro);
}

/// Bytes every plane pointer and stride must be a multiple of: zimg's AVX-512 paths
/// (ZIMG_CPU_AUTO_64B) load 64-byte vectors.
#define CZ_ZIMG_ALIGN 64
/// The sub-picture's left edge is a multiple of this many luma pixels, so that its chroma
/// planes start on CZ_ZIMG_ALIGN bytes too (256 / 4 for 4:1:1 = 64 samples).
#define CZ_ZIMG_X_ALIGN 256
/// Extra source rows and columns around the window: more than any filter's support reaches
/// (Lanczos-3 upscaling reads 3 taps a side; downscaling by k reads 3k, capped by the picture).
#define CZ_ZIMG_MARGIN 16

struct cz_zimg {
    zimg_filter_graph *graph;
    void *tmp;
    int planes;
    int x0, y0;                 // sub-picture origin, luma pixels
    int src_cw, src_ch;         // source log2 chroma subsampling
    int src_bytes, dst_bytes;   // bytes per sample
};

static void set_error(char *error, size_t size, const char *what) {
    if (!error || !size) return;
    char detail[400] = "";
    zimg_get_last_error(detail, sizeof detail);
    snprintf(error, size, "%s%s%s", what, detail[0] ? ": " : "", detail);
}

static zimg_chroma_location_e chroma_location(int location) {
    switch (location) {
    case CZ_CHROMA_CENTER: return ZIMG_CHROMA_CENTER;
    case CZ_CHROMA_TOPLEFT: return ZIMG_CHROMA_TOP_LEFT;
    case CZ_CHROMA_TOP: return ZIMG_CHROMA_TOP;
    case CZ_CHROMA_BOTTOMLEFT: return ZIMG_CHROMA_BOTTOM_LEFT;
    case CZ_CHROMA_BOTTOM: return ZIMG_CHROMA_BOTTOM;
    // Unspecified: MPEG-2 / H.264 / HEVC's default, co-sited with the left luma sample.
    default: return ZIMG_CHROMA_LEFT;
    }
}

static zimg_resample_filter_e resample_filter(cz_zimg_filter f) {
    switch (f) {
    case CZ_ZIMG_POINT: return ZIMG_RESIZE_POINT;
    case CZ_ZIMG_BILINEAR: return ZIMG_RESIZE_BILINEAR;
    case CZ_ZIMG_LANCZOS: return ZIMG_RESIZE_LANCZOS;
    default: return ZIMG_RESIZE_BICUBIC;
    }
}

static int ceil_to(int v, int m) { return (v + m - 1) / m * m; }

cz_zimg *cz_zimg_new(const cz_zimg_params *p, char *error, size_t error_size) {
    cz_zimg *z = calloc(1, sizeof *z);
    if (!z) { set_error(error, error_size, "out of memory"); return NULL; }
    z->planes = p->gray ? 1 : 3;
    z->src_cw = p->src_log2_chroma_w; z->src_ch = p->src_log2_chroma_h;
    z->src_bytes = p->src_depth > 8 ? 2 : 1;
    z->dst_bytes = p->dst_depth > 8 ? 2 : 1;

    // The sub-picture: origin aligned down (x: CZ_ZIMG_X_ALIGN luma pixels; y: whole chroma
    // rows), far edge up to whole chroma samples, a margin around the window, inside the picture.
    const int sub_w = 1 << p->src_log2_chroma_w, sub_h = 1 << p->src_log2_chroma_h;
    int x0 = (int)floor((p->left - CZ_ZIMG_MARGIN) / CZ_ZIMG_X_ALIGN) * CZ_ZIMG_X_ALIGN;
    int y0 = (int)floor((p->top - CZ_ZIMG_MARGIN) / sub_h) * sub_h;
    int x1 = ceil_to((int)ceil(p->left + p->width + CZ_ZIMG_MARGIN), sub_w);
    int y1 = ceil_to((int)ceil(p->top + p->height + CZ_ZIMG_MARGIN), sub_h);
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > p->src_width) x1 = p->src_width / sub_w * sub_w;
    if (y1 > p->src_height) y1 = p->src_height / sub_h * sub_h;
    if (x1 <= x0 || y1 <= y0 || p->left < x0 || p->top < y0
        || p->left + p->width > x1 + 1e-9 || p->top + p->height > y1 + 1e-9) {
        set_error(error, error_size, "the window does not fit in whole chroma samples of the picture");
        free(z);
        return NULL;
    }
    z->x0 = x0; z->y0 = y0;

    zimg_image_format src, dst;
    zimg_image_format_default(&src, ZIMG_API_VERSION);
    zimg_image_format_default(&dst, ZIMG_API_VERSION);
    src.width = (unsigned)(x1 - x0); src.height = (unsigned)(y1 - y0);
    dst.width = (unsigned)p->dst_width; dst.height = (unsigned)p->dst_height;
    zimg_image_format *both[2] = {&src, &dst};
    const int depth[2] = {p->src_depth, p->dst_depth};
    const int cw[2] = {p->src_log2_chroma_w, p->dst_log2_chroma_w};
    const int ch[2] = {p->src_log2_chroma_h, p->dst_log2_chroma_h};
    for (int i = 0; i < 2; i++) {
        both[i]->pixel_type = depth[i] > 8 ? ZIMG_PIXEL_WORD : ZIMG_PIXEL_BYTE;
        both[i]->depth = (unsigned)depth[i];
        both[i]->subsample_w = p->gray ? 0 : (unsigned)cw[i];
        both[i]->subsample_h = p->gray ? 0 : (unsigned)ch[i];
        both[i]->color_family = p->gray ? ZIMG_COLOR_GREY : ZIMG_COLOR_YUV;
        // The same matrix on both sides: zimg converts no colours, it needs one only to accept
        // YUV. Transfer and primaries likewise stay as they are.
        both[i]->matrix_coefficients = ZIMG_MATRIX_BT709;
        both[i]->transfer_characteristics = ZIMG_TRANSFER_UNSPECIFIED;
        both[i]->color_primaries = ZIMG_PRIMARIES_UNSPECIFIED;
        both[i]->pixel_range = p->full_range ? ZIMG_RANGE_FULL : ZIMG_RANGE_LIMITED;
        both[i]->chroma_location = chroma_location(p->chroma_location);
        both[i]->field_parity = ZIMG_FIELD_PROGRESSIVE;
    }
    src.active_region.left = p->left - x0;
    src.active_region.top = p->top - y0;
    src.active_region.width = p->width;
    src.active_region.height = p->height;

    zimg_graph_builder_params params;
    zimg_graph_builder_params_default(&params, ZIMG_API_VERSION);
    params.resample_filter = resample_filter(p->filter);
    params.filter_param_a = p->param_a;
    params.filter_param_b = p->param_b;
    // zimg's default chroma filter is bilinear; use the luma filter for both (as zscale does).
    params.resample_filter_uv = resample_filter(p->filter);
    params.filter_param_a_uv = p->param_a;
    params.filter_param_b_uv = p->param_b;
    params.dither_type = ZIMG_DITHER_NONE;
    params.cpu_type = ZIMG_CPU_AUTO_64B;

    z->graph = zimg_filter_graph_build(&src, &dst, &params);
    size_t tmp_size = 0;
    if (!z->graph) { set_error(error, error_size, "zimg cannot build the graph"); cz_zimg_free(z); return NULL; }
    if (zimg_filter_graph_get_tmp_size(z->graph, &tmp_size) != ZIMG_ERROR_SUCCESS
        || posix_memalign(&z->tmp, CZ_ZIMG_ALIGN, tmp_size ? tmp_size : CZ_ZIMG_ALIGN) != 0) {
        set_error(error, error_size, "zimg's temporary buffer");
        cz_zimg_free(z);
        return NULL;
    }
    return z;
}

static int aligned(const void *ptr, ptrdiff_t stride) {
    return ((uintptr_t)ptr % CZ_ZIMG_ALIGN) == 0 && (stride % CZ_ZIMG_ALIGN) == 0;
}

int cz_zimg_aligned(const cz_zimg *z, uint8_t *const src[4], const int src_stride[4],
                    uint8_t *const dst[4], const int dst_stride[4]) {
    for (int i = 0; i < z->planes; i++) {
        if (!src[i] || !dst[i] || !aligned(src[i], src_stride[i]) || !aligned(dst[i], dst_stride[i])) return 0;
        // The sub-picture's origin inside the plane (see CZ_ZIMG_X_ALIGN).
        int x = i ? z->x0 >> z->src_cw : z->x0;
        if ((x * z->src_bytes) % CZ_ZIMG_ALIGN) return 0;
    }
    return 1;
}

int cz_zimg_process(cz_zimg *z, uint8_t *const src[4], const int src_stride[4],
                    uint8_t *const dst[4], const int dst_stride[4]) {
    zimg_image_buffer_const in;
    zimg_image_buffer out;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    in.version = ZIMG_API_VERSION;
    out.version = ZIMG_API_VERSION;
    for (int i = 0; i < z->planes; i++) {
        int x = i ? z->x0 >> z->src_cw : z->x0, y = i ? z->y0 >> z->src_ch : z->y0;
        in.plane[i].data = src[i] + (ptrdiff_t)y * src_stride[i] + (ptrdiff_t)x * z->src_bytes;
        in.plane[i].stride = src_stride[i];
        in.plane[i].mask = ZIMG_BUFFER_MAX;
        out.plane[i].data = dst[i];
        out.plane[i].stride = dst_stride[i];
        out.plane[i].mask = ZIMG_BUFFER_MAX;
    }
    const zimg_error_code_e e = zimg_filter_graph_process(z->graph, &in, &out, z->tmp, NULL, NULL, NULL, NULL);
    return e == ZIMG_ERROR_SUCCESS ? 0 : -1;
}

void cz_zimg_free(cz_zimg *z) {
    if (!z) return;
    if (z->graph) zimg_filter_graph_free(z->graph);
    free(z->tmp);
    free(z);
}
