// The crop+scale kernels: swscale (FFmpeg 5.1), zimg (3.0), libyuv. See CKernels.h.
#include "CKernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/avutil.h>
#include <libavutil/pixfmt.h>
#include <libswscale/swscale.h>
#include <libyuv.h>
#include <zimg.h>

// MARK: - Pictures

static int align_up(int v, int a) { return (v + a - 1) / a * a; }

int ck_image_alloc(ck_image *image, int width, int height) {
    memset(image, 0, sizeof *image);
    image->width = width;
    image->height = height;
    for (int p = 0; p < 3; p++) {
        int w = p ? (width + 1) / 2 : width, h = p ? (height + 1) / 2 : height;
        int stride = align_up(w, 64);
        // One spare row: some SIMD paths read a little past the last row.
        void *mem = NULL;
        if (posix_memalign(&mem, 64, (size_t)stride * (h + 1)) != 0) { ck_image_free(image); return -1; }
        memset(mem, 0, (size_t)stride * (h + 1));
        image->data[p] = mem;
        image->stride[p] = stride;
    }
    return 0;
}

void ck_image_free(ck_image *image) {
    for (int p = 0; p < 3; p++) { free(image->data[p]); image->data[p] = NULL; }
}

// MARK: - Kernels

struct ck_kernel {
    ck_kernel_spec spec;
    int src_width, src_height, dst_width, dst_height;
    // The window read: for swscale/libyuv the (even) integer window; for zimg the sub-picture
    // handed to zimg (x0, y0, w, h), inside which active_region holds the exact window.
    int x0, y0, w, h;
    double left, top, width, height;
    struct SwsContext *sws;
    zimg_filter_graph *graph;
    void *tmp;
};

static void set_error(char *error, size_t size, const char *what) {
    if (error && size) snprintf(error, size, "%s", what);
}

ck_kernel *ck_kernel_create(const ck_kernel_spec *spec, int src_width, int src_height,
                            double left, double top, double width, double height,
                            int dst_width, int dst_height, char *error, size_t error_size) {
    ck_kernel *k = calloc(1, sizeof *k);
    if (!k) { set_error(error, error_size, "out of memory"); return NULL; }
    k->spec = *spec;
    k->src_width = src_width; k->src_height = src_height;
    k->dst_width = dst_width; k->dst_height = dst_height;

    if (spec->backend != CK_BACKEND_ZIMG) {
        // Whole pixels: the origin rounded to even (4:2:0 chroma), the size to the nearest
        // whole pixel, kept inside the picture -- what cropzoom's GeometryPlan does.
        int w = (int)lround(width), h = (int)lround(height);
        if (w > src_width) w = src_width;
        if (h > src_height) h = src_height;
        int x = (int)lround(left / 2) * 2, y = (int)lround(top / 2) * 2;
        if (x > (src_width - w) / 2 * 2) x = (src_width - w) / 2 * 2;
        if (y > (src_height - h) / 2 * 2) y = (src_height - h) / 2 * 2;
        if (x < 0) x = 0;
        if (y < 0) y = 0;
        k->x0 = x; k->y0 = y; k->w = w; k->h = h;
        k->left = x; k->top = y; k->width = w; k->height = h;
    }

    switch (spec->backend) {
    case CK_BACKEND_SWSCALE: {
        double params[2] = {spec->param_a, spec->param_b};
        const double *p = (isnan(spec->param_a) && isnan(spec->param_b)) ? NULL : params;
        k->sws = sws_getContext(k->w, k->h, AV_PIX_FMT_YUV420P, dst_width, dst_height, AV_PIX_FMT_YUV420P,
                                spec->option, NULL, NULL, p);
        if (!k->sws) { set_error(error, error_size, "sws_getContext failed"); free(k); return NULL; }
        break;
    }
    case CK_BACKEND_LIBYUV:
        break;
    case CK_BACKEND_ZIMG: {
        // zimg wants aligned plane pointers (32 bytes; 64 with AVX-512) and sizes divisible
        // by the subsampling. Hand it a sub-picture by pointer offset -- origin aligned down to
        // 128 luma pixels (64 bytes in the chroma planes), a margin for the filter's support,
        // even size -- and put the exact (sub-pixel) window in active_region. Pixels outside
        // the window but inside the picture are real picture, as the reference assumes.
        const int margin = 8;
        int x0 = (int)floor((left - margin) / 128) * 128;
        int y0 = (int)floor((top - margin) / 2) * 2;
        int x1 = (int)ceil((left + width + margin) / 2) * 2;
        int y1 = (int)ceil((top + height + margin) / 2) * 2;
        if (x0 < 0) x0 = 0;
        if (y0 < 0) y0 = 0;
        if (x1 > src_width) x1 = src_width & ~1;
        if (y1 > src_height) y1 = src_height & ~1;
        k->x0 = x0; k->y0 = y0; k->w = x1 - x0; k->h = y1 - y0;
        k->left = left; k->top = top; k->width = width; k->height = height;

        zimg_image_format src, dst;
        zimg_image_format_default(&src, ZIMG_API_VERSION);
        zimg_image_format_default(&dst, ZIMG_API_VERSION);
        src.width = (unsigned)k->w; src.height = (unsigned)k->h;
        dst.width = (unsigned)dst_width; dst.height = (unsigned)dst_height;
        zimg_image_format *both[2] = {&src, &dst};
        for (int i = 0; i < 2; i++) {
            both[i]->pixel_type = ZIMG_PIXEL_BYTE;
            both[i]->subsample_w = 1; both[i]->subsample_h = 1;
            both[i]->color_family = ZIMG_COLOR_YUV;
            both[i]->matrix_coefficients = ZIMG_MATRIX_BT709;
            both[i]->transfer_characteristics = ZIMG_TRANSFER_BT709;
            both[i]->color_primaries = ZIMG_PRIMARIES_BT709;
            both[i]->depth = 8;
            both[i]->pixel_range = ZIMG_RANGE_LIMITED;
            // swscale and libyuv scale each chroma plane as a picture of its own, i.e. chroma
            // sited at the centre of its 2x2 luma block; say the same to zimg (and the reference).
            both[i]->chroma_location = ZIMG_CHROMA_CENTER;
        }
        src.active_region.left = left - x0;
        src.active_region.top = top - y0;
        src.active_region.width = width;
        src.active_region.height = height;

        zimg_graph_builder_params params;
        zimg_graph_builder_params_default(&params, ZIMG_API_VERSION);
        params.resample_filter = (zimg_resample_filter_e)spec->option;
        params.filter_param_a = spec->param_a;
        params.filter_param_b = spec->param_b;
        // zimg's default chroma filter is bilinear; use the luma filter for both, as zscale does.
        params.resample_filter_uv = (zimg_resample_filter_e)spec->option;
        params.filter_param_a_uv = spec->param_a;
        params.filter_param_b_uv = spec->param_b;
        params.dither_type = ZIMG_DITHER_NONE;
        params.cpu_type = spec->wide_simd ? ZIMG_CPU_AUTO_64B : ZIMG_CPU_AUTO;

        k->graph = zimg_filter_graph_build(&src, &dst, &params);
        size_t tmp_size = 0;
        if (!k->graph || zimg_filter_graph_get_tmp_size(k->graph, &tmp_size) != ZIMG_ERROR_SUCCESS
            || posix_memalign(&k->tmp, 64, tmp_size ? tmp_size : 64) != 0) {
            char message[512];
            zimg_get_last_error(message, sizeof message);
            set_error(error, error_size, message);
            ck_kernel_free(k);
            return NULL;
        }
        break;
    }
    default:
        set_error(error, error_size, "unknown backend");
        free(k);
        return NULL;
    }
    return k;
}

int ck_kernel_run(ck_kernel *k, const ck_image *src, ck_image *dst) {
    // Plane pointers at the window's origin (4:2:0: chroma at half the offsets).
    const uint8_t *planes[3];
    int strides[3];
    for (int p = 0; p < 3; p++) {
        int x = p ? k->x0 / 2 : k->x0, y = p ? k->y0 / 2 : k->y0;
        planes[p] = src->data[p] + (ptrdiff_t)y * src->stride[p] + x;
        strides[p] = src->stride[p];
    }
    switch (k->spec.backend) {
    case CK_BACKEND_SWSCALE: {
        int r = sws_scale(k->sws, planes, strides, 0, k->h, dst->data, dst->stride);
        return r == k->dst_height ? 0 : -1;
    }
    case CK_BACKEND_LIBYUV:
        return I420Scale(planes[0], strides[0], planes[1], strides[1], planes[2], strides[2], k->w, k->h,
                         dst->data[0], dst->stride[0], dst->data[1], dst->stride[1], dst->data[2], dst->stride[2],
                         k->dst_width, k->dst_height, (enum FilterMode)k->spec.option);
    case CK_BACKEND_ZIMG: {
        zimg_image_buffer_const in;
        zimg_image_buffer out;
        memset(&in, 0, sizeof in);
        memset(&out, 0, sizeof out);
        in.version = ZIMG_API_VERSION;
        out.version = ZIMG_API_VERSION;
        for (int p = 0; p < 3; p++) {
            in.plane[p].data = planes[p];
            in.plane[p].stride = strides[p];
            in.plane[p].mask = ZIMG_BUFFER_MAX;
            out.plane[p].data = dst->data[p];
            out.plane[p].stride = dst->stride[p];
            out.plane[p].mask = ZIMG_BUFFER_MAX;
        }
        return zimg_filter_graph_process(k->graph, &in, &out, k->tmp, NULL, NULL, NULL, NULL) == ZIMG_ERROR_SUCCESS ? 0 : -1;
    }
    }
    return -1;
}

void ck_kernel_window(const ck_kernel *k, double *left, double *top, double *width, double *height) {
    *left = k->left; *top = k->top; *width = k->width; *height = k->height;
}

void ck_kernel_free(ck_kernel *k) {
    if (!k) return;
    if (k->sws) sws_freeContext(k->sws);
    if (k->graph) zimg_filter_graph_free(k->graph);
    free(k->tmp);
    free(k);
}

int ck_sws_flag(const char *name) {
    static const struct { const char *name; int value; } table[] = {
        {"fast_bilinear", SWS_FAST_BILINEAR}, {"bilinear", SWS_BILINEAR}, {"bicubic", SWS_BICUBIC},
        {"point", SWS_POINT}, {"area", SWS_AREA}, {"lanczos", SWS_LANCZOS}, {"spline", SWS_SPLINE},
        {"accurate_rnd", SWS_ACCURATE_RND}, {"full_chroma_int", SWS_FULL_CHR_H_INT},
        {"full_chroma_inp", SWS_FULL_CHR_H_INP}, {"bitexact", SWS_BITEXACT},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0) return table[i].value;
    return 0;
}

void ck_versions(char *buffer, size_t size) {
    unsigned major = 0, minor = 0, micro = 0;
    zimg_get_version_info(&major, &minor, &micro);
    unsigned sws = swscale_version();
    snprintf(buffer, size, "libswscale %u.%u.%u (FFmpeg %s), zimg %u.%u.%u (API %u.%u), libyuv %d",
             sws >> 16, (sws >> 8) & 0xff, sws & 0xff, av_version_info(), major, minor, micro,
             ZIMG_API_VERSION_MAJOR, ZIMG_API_VERSION_MINOR, LIBYUV_VERSION);
}

// MARK: - Synthetic picture and reference

void ck_synth_eval(double *out, ptrdiff_t out_stride, int width, int height,
                   const double *xs, const double *ys, int count,
                   const double *fx, const double *fy, const double *amp, const double *phase,
                   double mean) {
    // cos(a + b) = cos a cos b - sin a sin b, with a = 2 pi fx u + phase, b = 2 pi fy v:
    // per-column and per-row tables make it two multiply-adds per component and pixel.
    const double tau = 6.283185307179586476925286766559;
    double *ca = malloc(sizeof(double) * (size_t)width * count);
    double *sa = malloc(sizeof(double) * (size_t)width * count);
    for (int k = 0; k < count; k++)
        for (int i = 0; i < width; i++) {
            double a = tau * fx[k] * xs[i] + phase[k];
            ca[(size_t)k * width + i] = cos(a);
            sa[(size_t)k * width + i] = sin(a);
        }
    for (int j = 0; j < height; j++) {
        double *row = out + (ptrdiff_t)j * out_stride;
        for (int i = 0; i < width; i++) row[i] = mean;
        for (int k = 0; k < count; k++) {
            if (amp[k] == 0) continue;
            double b = tau * fy[k] * ys[j];
            double c = amp[k] * cos(b), s = amp[k] * sin(b);
            const double *cak = ca + (size_t)k * width, *sak = sa + (size_t)k * width;
            for (int i = 0; i < width; i++) row[i] += c * cak[i] - s * sak[i];
        }
    }
    free(ca);
    free(sa);
}
