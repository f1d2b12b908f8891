// cropzoom's own separable resampler (see CFFmpeg.h, "resampler"): one plane, any fractional
// window, per-frame coefficient tables in buffers allocated once. Horizontal filtering runs on
// bands of 8 rows transposed to columns, so that every tap is one contiguous 8-float vector
// (the same idea zimg uses); the vertical pass reads whole rows. Plain C that compilers
// vectorise; no allocation per frame.
#include "CFFmpeg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BAND 8

struct cz_resampler {
    int max_src_w, max_src_h, dst_w, dst_h;
    int filter;
    double b, c;            // cubic parameters
    double radius;          // filter support at scale 1
    int max_taps_h, max_taps_v;
    int pad;                // replicated columns each side of a band
    // Tables: per output column / row, the first source index and max_taps weights.
    int *h_first; float *h_weight;
    int *v_first; float *v_weight;
    float *band;            // (max_src_w + 2 pad) x BAND, column-major
    float *hband;           // dst_w x BAND
    float *rows;            // (max_src_h) x dst_w: horizontally filtered source rows
    float *acc;             // dst_w: one output row being summed
};

static double kernel(const cz_resampler *r, double x) {
    x = fabs(x);
    switch (r->filter) {
    case CZ_ZIMG_POINT: return x < 0.5 ? 1 : (x == 0.5 ? 0.5 : 0);
    case CZ_ZIMG_BILINEAR: return x < 1 ? 1 - x : 0;
    case CZ_ZIMG_LANCZOS: {
        if (x < 1e-9) return 1;
        if (x >= 3) return 0;
        double px = M_PI * x;
        return 3 * sin(px) * sin(px / 3) / (px * px);
    }
    default: {
        const double b = r->b, c = r->c;
        if (x < 1) return ((12 - 9 * b - 6 * c) * x * x * x + (-18 + 12 * b + 6 * c) * x * x + (6 - 2 * b)) / 6;
        if (x < 2) return ((-b - 6 * c) * x * x * x + (6 * b + 30 * c) * x * x + (-12 * b - 48 * c) * x + (8 * b + 24 * c)) / 6;
        return 0;
    }
    }
}

static double radius_of(int filter) {
    switch (filter) {
    case CZ_ZIMG_POINT: return 0.5;
    case CZ_ZIMG_BILINEAR: return 1;
    case CZ_ZIMG_LANCZOS: return 3;
    default: return 2;
    }
}

/// Taps for a scale of at most `max_scale` source samples per output sample.
static int taps_for(double radius, double max_scale) {
    double s = max_scale > 1 ? max_scale : 1;
    return (int)ceil(2 * radius * s) + 2;
}

cz_resampler *cz_resampler_new(int max_src_w, int max_src_h, int dst_w, int dst_h,
                               cz_zimg_filter filter, double b, double c) {
    cz_resampler *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->max_src_w = max_src_w; r->max_src_h = max_src_h; r->dst_w = dst_w; r->dst_h = dst_h;
    r->filter = filter; r->b = b; r->c = c; r->radius = radius_of(filter);
    r->max_taps_h = taps_for(r->radius, (double)max_src_w / dst_w);
    r->max_taps_v = taps_for(r->radius, (double)max_src_h / dst_h);
    r->pad = r->max_taps_h + 2;
    r->h_first = malloc(sizeof(int) * dst_w);
    r->h_weight = malloc(sizeof(float) * dst_w * r->max_taps_h);
    r->v_first = malloc(sizeof(int) * dst_h);
    r->v_weight = malloc(sizeof(float) * dst_h * r->max_taps_v);
    r->band = malloc(sizeof(float) * (max_src_w + 2 * r->pad) * BAND);
    r->hband = malloc(sizeof(float) * dst_w * BAND);
    r->rows = malloc(sizeof(float) * (size_t)max_src_h * dst_w);
    r->acc = malloc(sizeof(float) * dst_w);
    if (!r->h_first || !r->h_weight || !r->v_first || !r->v_weight || !r->band || !r->hband || !r->rows || !r->acc) {
        cz_resampler_free(r);
        return NULL;
    }
    return r;
}

void cz_resampler_free(cz_resampler *r) {
    if (!r) return;
    free(r->h_first); free(r->h_weight); free(r->v_first); free(r->v_weight);
    free(r->band); free(r->hband); free(r->rows); free(r->acc);
    free(r);
}

/// Fills `first`/`weight` (n outputs x taps) for outputs whose centres map to source index
/// positions `origin + i * step` (already in sample-index units); returns the taps used.
static int fill(const cz_resampler *r, int n, double origin, double step, double scale,
                int max_taps, int *first, float *weight) {
    const double s = scale > 1 ? scale : 1;
    const double support = r->radius * s;
    // (pos - support, pos + support] holds at most ceil(2 support) whole sample positions.
    int taps = (int)ceil(2 * support - 1e-9);
    if (taps < 1) taps = 1;
    if (taps > max_taps) taps = max_taps;
    for (int i = 0; i < n; i++) {
        const double pos = origin + i * step;
        const int f = (int)floor(pos - support) + 1;
        double sum = 0;
        double w[64];
        int t = taps < 64 ? taps : 64;
        for (int k = 0; k < t; k++) { w[k] = kernel(r, (f + k - pos) / s); sum += w[k]; }
        if (sum == 0) sum = 1;
        first[i] = f;
        for (int k = 0; k < max_taps; k++) weight[i * max_taps + k] = k < t ? (float)(w[k] / sum) : 0;
    }
    return taps;
}

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// On x86-64, built for AVX2 + FMA (x86-64-v3) and for the baseline; the loader picks what the
// CPU has (ifunc).
#if defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
/// The outputs [lo, hi] whose centres fall on the picture (source positions in [-0.5, n - 0.5]).
static void inside(double origin, double step, int n, int count, int *lo, int *hi) {
    double a = ceil((-0.5 - origin) / step - 1e-9), b = floor((n - 0.5 - origin) / step + 1e-9);
    *lo = a < 0 ? 0 : (a > count ? count : (int)a);
    *hi = b > count - 1 ? count - 1 : (b < -1 ? -1 : (int)b);
}

static void put(uint8_t *row, int bytes, int x, int v) {
    if (bytes == 1) row[x] = (uint8_t)v; else ((uint16_t *)row)[x] = (uint16_t)v;
}

static int get(const uint8_t *row, int bytes, int x) {
    return bytes == 1 ? row[x] : ((const uint16_t *)row)[x];
}

/// Outside the picture (a window larger than it: zooming out): `background` >= 0 paints that
/// value, -1 repeats the nearest resampled sample (edge fill).
static void fill_outside(uint8_t *dst, ptrdiff_t stride, int bytes, int w, int h, int x0, int x1, int y0, int y1, int background) {
    if (x0 > x1 || y0 > y1) {   // nothing of the picture shows
        for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) put(dst + (ptrdiff_t)y * stride, bytes, x, background < 0 ? 0 : background);
        return;
    }
    for (int y = y0; y <= y1; y++) {
        uint8_t *row = dst + (ptrdiff_t)y * stride;
        const int left = background < 0 ? get(row, bytes, x0) : background, right = background < 0 ? get(row, bytes, x1) : background;
        for (int x = 0; x < x0; x++) put(row, bytes, x, left);
        for (int x = x1 + 1; x < w; x++) put(row, bytes, x, right);
    }
    for (int y = 0; y < h; y++) {
        if (y >= y0 && y <= y1) continue;
        uint8_t *row = dst + (ptrdiff_t)y * stride;
        if (background < 0) {
            const uint8_t *from = dst + (ptrdiff_t)(y < y0 ? y0 : y1) * stride;
            memcpy(row, from, (size_t)w * bytes);
        } else {
            for (int x = 0; x < w; x++) put(row, bytes, x, background);
        }
    }
}

int cz_resample_plane(cz_resampler *r, const uint8_t *src, ptrdiff_t src_stride, int src_w, int src_h,
                      int bytes, double origin_x, double origin_y, double step_x, double step_y,
                      uint8_t *dst, ptrdiff_t dst_stride, int dst_w, int dst_h, int max_value, int background) {
    if (src_w > r->max_src_w || src_h > r->max_src_h || dst_w > r->dst_w || dst_h > r->dst_h) return -1;
    const int th = fill(r, dst_w, origin_x, step_x, step_x, r->max_taps_h, r->h_first, r->h_weight);
    const int tv = fill(r, dst_h, origin_y, step_y, step_y, r->max_taps_v, r->v_first, r->v_weight);
    const int mth = r->max_taps_h, mtv = r->max_taps_v;
    // Outputs that show the picture; the rest is background.
    int ox0, ox1, oy0, oy1;
    inside(origin_x, step_x, src_w, dst_w, &ox0, &ox1);
    inside(origin_y, step_y, src_h, dst_h, &oy0, &oy1);
    if (ox0 > ox1 || oy0 > oy1) { fill_outside(dst, dst_stride, bytes, dst_w, dst_h, ox0, ox1, oy0, oy1, background); return 0; }

    // Source rows the vertical pass reads (clamped to the picture).
    int y_lo = clampi(r->v_first[oy0], 0, src_h - 1);
    int y_hi = clampi(r->v_first[oy1] + tv - 1, 0, src_h - 1);
    // Source columns the horizontal pass reads: [x_lo, x_hi], edges replicated into the pad.
    const int x_lo = r->h_first[ox0], x_hi = r->h_first[ox1] + th - 1;
    const int pad = r->pad;
    if (x_lo < -pad + 1 || x_hi > src_w + pad - 2) return -2;   // a window far outside the picture

    // 1. Horizontal: bands of 8 rows, transposed so each tap is a contiguous 8-vector.
    for (int y0 = y_lo; y0 <= y_hi; y0 += BAND) {
        const int nrows = y_hi - y0 + 1 < BAND ? y_hi - y0 + 1 : BAND;
        for (int rr = 0; rr < BAND; rr++) {
            const int yy = y0 + (rr < nrows ? rr : nrows - 1);
            const uint8_t *line = src + (ptrdiff_t)yy * src_stride;
            float *col = r->band + rr;
            // Only the columns the taps reach; edge samples repeat outside the picture.
            const int lo = x_lo, hi = x_hi, in_lo = lo < 0 ? 0 : lo, in_hi = hi > src_w - 1 ? src_w - 1 : hi;
            for (int x = lo; x < in_lo; x++)
                col[(size_t)(x + pad) * BAND] = bytes == 1 ? (float)line[0] : (float)((const uint16_t *)line)[0];
            if (bytes == 1) {
                for (int x = in_lo; x <= in_hi; x++) col[(size_t)(x + pad) * BAND] = (float)line[x];
            } else {
                const uint16_t *l16 = (const uint16_t *)line;
                for (int x = in_lo; x <= in_hi; x++) col[(size_t)(x + pad) * BAND] = (float)l16[x];
            }
            for (int x = in_hi + 1; x <= hi; x++)
                col[(size_t)(x + pad) * BAND] = bytes == 1 ? (float)line[src_w - 1] : (float)((const uint16_t *)line)[src_w - 1];
        }
        for (int x = ox0; x <= ox1; x++) {
            float acc[BAND] = {0, 0, 0, 0, 0, 0, 0, 0};
            const float *base = r->band + (size_t)(r->h_first[x] + pad) * BAND;
            const float *w = r->h_weight + (size_t)x * mth;
            for (int k = 0; k < th; k++) {
                const float c = w[k];
                const float *v = base + (size_t)k * BAND;
                for (int rr = 0; rr < BAND; rr++) acc[rr] += c * v[rr];
            }
            float *o = r->hband + (size_t)x * BAND;
            for (int rr = 0; rr < BAND; rr++) o[rr] = acc[rr];
        }
        for (int rr = 0; rr < nrows; rr++) {
            float *row = r->rows + (size_t)(y0 + rr - y_lo) * dst_w;
            for (int x = ox0; x <= ox1; x++) row[x] = r->hband[(size_t)x * BAND + rr];
        }
    }

    // 2. Vertical: whole rows (each tap one pass over the row), rounded and clamped.
    const float maxf = (float)max_value;
    float *restrict acc = r->acc;
    for (int y = oy0; y <= oy1; y++) {
        const float *w = r->v_weight + (size_t)y * mtv;
        const float *rw[8];
        float c[8];
        int n = tv < 8 ? tv : 8;
        for (int k = 0; k < 8; k++) {
            const int sy = clampi(r->v_first[y] + (k < n ? k : 0), 0, src_h - 1);
            rw[k] = r->rows + (size_t)(sy - y_lo) * dst_w;
            c[k] = k < n ? w[k] : 0;
        }
        // Up to 8 taps in one pass over the row (unused taps weigh 0); more taps (downscaling
        // by more than 2) add passes.
        {
            const float *restrict r0 = rw[0], *restrict r1 = rw[1], *restrict r2 = rw[2], *restrict r3 = rw[3];
            const float *restrict r4 = rw[4], *restrict r5 = rw[5], *restrict r6 = rw[6], *restrict r7 = rw[7];
            if (n <= 4) {
                for (int x = ox0; x <= ox1; x++)
                    acc[x] = 0.5f + c[0] * r0[x] + c[1] * r1[x] + c[2] * r2[x] + c[3] * r3[x];
            } else {
                for (int x = ox0; x <= ox1; x++)
                    acc[x] = 0.5f + c[0] * r0[x] + c[1] * r1[x] + c[2] * r2[x] + c[3] * r3[x]
                           + c[4] * r4[x] + c[5] * r5[x] + c[6] * r6[x] + c[7] * r7[x];
            }
        }
        for (int k = 8; k < tv; k++) {
            const int sy = clampi(r->v_first[y] + k, 0, src_h - 1);
            const float *restrict row = r->rows + (size_t)(sy - y_lo) * dst_w;
            const float ck = w[k];
            for (int x = ox0; x <= ox1; x++) acc[x] += ck * row[x];
        }
        uint8_t *out = dst + (ptrdiff_t)y * dst_stride;
        if (bytes == 1) {
            for (int x = ox0; x <= ox1; x++) {
                float v = acc[x];
                v = v < 0 ? 0 : (v > maxf ? maxf : v);
                out[x] = (uint8_t)v;
            }
        } else {
            uint16_t *o16 = (uint16_t *)out;
            for (int x = ox0; x <= ox1; x++) {
                float v = acc[x];
                v = v < 0 ? 0 : (v > maxf ? maxf : v);
                o16[x] = (uint16_t)v;
            }
        }
    }
    fill_outside(dst, dst_stride, bytes, dst_w, dst_h, ox0, ox1, oy0, oy1, background);
    return 0;
}
