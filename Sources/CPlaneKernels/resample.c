// cropzoom's own separable resampler (see CPlaneKernels.h, "resampler"): one plane, any fractional
// window, per-frame coefficient tables in buffers allocated once, no allocation per frame.
// 8-bit planes: fixed point, vertical pass then horizontal pass one output row at a time, AVX2
// where the CPU has it (same bytes either way). 16-bit planes: float, on transposed bands.
#include "CPlaneKernels.h"
#include "cpu_features.h"

#include <limits.h>
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
    // 8-bit samples: fixed point (see "8-bit path" below).
    int max_taps_h2, max_taps_v2;   // taps rounded up to even (pmaddwd pairs)
    int16_t *h_coef;        // dst_w x max_taps_h2, 14-bit weights summing to 1 << 14
    int16_t *v_coef;        // dst_h x max_taps_v2
    int16_t *tmp;           // one vertically filtered row, pad + max_src_w + pad samples
    // The shuffle form of the horizontal pass (at most 4 taps, 4 outputs within 8 samples):
    // per block of 8 outputs (two groups of 4, one per 128-bit lane), each group's first sample
    // and, for taps 0-1 and 2-3, a pshufb control and the coefficient pairs.
    int *g_base;            // blocks x 2
    uint8_t *g_shuf;        // blocks x 64 bytes: [pair][lane][16]
    int16_t *g_coef;        // blocks x 32: [pair][lane][8]
    int simd;               // 0: the plain C forms only (tests compare the two)
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
        if (x < 2)
            return ((-b - 6 * c) * x * x * x + (6 * b + 30 * c) * x * x + (-12 * b - 48 * c) * x + (8 * b + 24 * c))
                / 6;
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

/// The kernel is widened with the downscale up to 2 * radius * s = 62 taps (bicubic: 15.5x);
/// beyond that (a 1080p picture into a 16-pixel frame, a blurred background's small frame into
/// a tiny one) it stays that wide: a little aliasing at a size where nobody can see it, instead
/// of a refusal.
static double widening(double radius, double scale) {
    const double s = scale > 1 ? scale : 1, cap = 31.0 / radius;
    return s < cap ? s : cap;
}

/// Taps for a scale of at most `max_scale` source samples per output sample.
static int taps_for(double radius, double max_scale) {
    return (int)ceil(2 * radius * widening(radius, max_scale)) + 2;
}

double cz_resampler_widest_scale(cz_zimg_filter filter) { return 31.0 / radius_of(filter); }

cz_resampler *cz_resampler_new(int max_src_w, int max_src_h, int dst_w, int dst_h,
                               cz_zimg_filter filter, double b, double c, double max_scale) {
    cz_resampler *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->max_src_w = max_src_w; r->max_src_h = max_src_h; r->dst_w = dst_w; r->dst_h = dst_h;
    r->filter = filter; r->b = b; r->c = c; r->radius = radius_of(filter);
    r->simd = 1;
    const double sh = (double)max_src_w / dst_w, sv = (double)max_src_h / dst_h;
    r->max_taps_h = taps_for(r->radius, sh > max_scale ? sh : max_scale);
    r->max_taps_v = taps_for(r->radius, sv > max_scale ? sv : max_scale);
    r->pad = r->max_taps_h + 16;   // also covers the 16-byte loads of the horizontal pass
    r->h_first = malloc(sizeof(int) * dst_w);
    r->h_weight = malloc(sizeof(float) * dst_w * r->max_taps_h);
    r->v_first = malloc(sizeof(int) * dst_h);
    r->v_weight = malloc(sizeof(float) * dst_h * r->max_taps_v);
    r->band = malloc(sizeof(float) * (max_src_w + 2 * r->pad) * BAND);
    r->hband = malloc(sizeof(float) * dst_w * BAND);
    r->rows = malloc(sizeof(float) * (size_t)max_src_h * dst_w);
    r->acc = malloc(sizeof(float) * dst_w);
    r->max_taps_v2 = (r->max_taps_v + 1) & ~1;
    r->max_taps_h2 = (r->max_taps_h + 7) & ~7;   // whole 8-tap chunks for the general horizontal form
    r->h_coef = malloc(sizeof(int16_t) * dst_w * r->max_taps_h2);
    r->v_coef = malloc(sizeof(int16_t) * dst_h * r->max_taps_v2);
    r->tmp = calloc((size_t)max_src_w + 2 * r->pad + 32, sizeof(int16_t));
    const int blocks = (dst_w + 7) / 8 + 1;
    r->g_base = malloc(sizeof(int) * 2 * blocks);
    r->g_shuf = malloc(64 * (size_t)blocks);
    r->g_coef = malloc(sizeof(int16_t) * 32 * blocks);
    if (!r->h_first || !r->h_weight || !r->v_first || !r->v_weight || !r->band || !r->hband || !r->rows || !r->acc
        || !r->h_coef || !r->v_coef || !r->tmp || !r->g_base || !r->g_shuf || !r->g_coef) {
        cz_resampler_free(r);
        return NULL;
    }
    return r;
}

void cz_resampler_set_simd(cz_resampler *r, int enabled) { r->simd = enabled != 0; }

void cz_resampler_free(cz_resampler *r) {
    if (!r) return;
    free(r->h_first); free(r->h_weight); free(r->v_first); free(r->v_weight);
    free(r->band); free(r->hband); free(r->rows); free(r->acc);
    free(r->h_coef); free(r->v_coef); free(r->tmp); free(r->g_base); free(r->g_shuf); free(r->g_coef);
    free(r);
}

/// Fills `first`/`weight` (n outputs x taps) for outputs whose centres map to source index
/// positions `origin + i * step` (already in sample-index units); returns the taps used.
static int fill(const cz_resampler *r, int n, double origin, double step, double scale,
                int max_taps, int *first, float *weight) {
    const double s = widening(r->radius, scale);
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
static void fill_outside(uint8_t *dst, ptrdiff_t stride, int bytes, int w, int h, int x0, int x1, int y0, int y1,
                         int background) {
    if (background == -2) return;   // painted already (the blurred background)
    if (x0 > x1 || y0 > y1) {   // nothing of the picture shows
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) put(dst + (ptrdiff_t)y * stride, bytes, x, background < 0 ? 0 : background);
        return;
    }
    for (int y = y0; y <= y1; y++) {
        uint8_t *row = dst + (ptrdiff_t)y * stride;
        const int left = background < 0 ? get(row, bytes, x0) : background;
        const int right = background < 0 ? get(row, bytes, x1) : background;
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


// MARK: 8-bit path
//
// 8-bit planes are resampled in fixed point, vertically first, one output row at a time: the
// taps' source rows are filtered into one row of 16-bit samples (6 fractional bits, in L1), and
// that row horizontally into the output row. Weights are 14-bit integers summing to exactly
// 1 << 14. All arithmetic is integer, so the AVX2 form and the plain C form give the same bytes
// on every machine, and the result does not depend on how the work is split.

#define COEF_BITS 14
#define MID_BITS 6   // fractional bits of the intermediate row

static void quantize(const float *w, int taps, int16_t *out, int out_taps) {
    int sum = 0, big = 0;
    for (int k = 0; k < taps; k++) {
        const int q = (int)lrintf(w[k] * (1 << COEF_BITS));
        out[k] = (int16_t)q;
        sum += q;
        if (fabsf(w[k]) > fabsf(w[big])) big = k;
    }
    out[big] = (int16_t)(out[big] + (1 << COEF_BITS) - sum);
    for (int k = taps; k < out_taps; k++) out[k] = 0;
}

static inline int16_t sat16(int v) { return (int16_t)(v < -32768 ? -32768 : (v > 32767 ? 32767 : v)); }
static inline uint8_t sat8(int v) { return (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v)); }

/// out[x] for x in [x0, x1]: the rows `rw` (taps2 of them, an even count) weighted by `c`.
static void vert_u8_c(const uint8_t *const *rw, const int16_t *c, int taps2, int x0, int x1, int16_t *out) {
    for (int x = x0; x <= x1; x++) {
        int s = 1 << (COEF_BITS - MID_BITS - 1);
        for (int k = 0; k < taps2; k++) s += c[k] * rw[k][x];
        out[x] = sat16(s >> (COEF_BITS - MID_BITS));
    }
}

/// The horizontal pass, any taps: out[x] for x in [x0, x1] from `tmp` (indexed by source sample).
static void horiz_u8_c(const cz_resampler *r, const int16_t *tmp, int th, int x0, int x1, uint8_t *out) {
    const int stride = r->max_taps_h2;
    for (int x = x0; x <= x1; x++) {
        const int16_t *c = r->h_coef + (size_t)x * stride;
        const int16_t *s = tmp + r->h_first[x];
        int acc = 1 << (COEF_BITS + MID_BITS - 1);
        for (int k = 0; k < th; k++) acc += c[k] * s[k];
        out[x] = sat8(acc >> (COEF_BITS + MID_BITS));
    }
}

/// Lays out the shuffle form for outputs [x0, x1]; 0 when some group of 4 outputs reaches more
/// than 8 samples (or more than 4 taps), and the general form must run.
static int build_blocks(cz_resampler *r, int x0, int x1, int th) {
    if (th > 4) return 0;
    const int n = x1 - x0 + 1, blocks = (n + 7) / 8;
    for (int b = 0; b < blocks; b++) {
        for (int lane = 0; lane < 2; lane++) {
            const int g0 = x0 + b * 8 + lane * 4;
            const int base = r->h_first[g0 <= x1 ? g0 : x1];
            r->g_base[b * 2 + lane] = base;
            for (int i = 0; i < 4; i++) {
                int x = g0 + i;
                if (x > x1) x = x1;          // past the end: computed, not stored
                const int o = r->h_first[x] - base;
                if (o < 0 || o + th - 1 > 7) return 0;
                const int16_t *c = r->h_coef + (size_t)x * r->max_taps_h2;
                for (int p = 0; p < 2; p++) {
                    uint8_t *shuf = r->g_shuf + (size_t)b * 64 + p * 32 + lane * 16 + i * 4;
                    int16_t *coef = r->g_coef + (size_t)b * 32 + p * 16 + lane * 8 + i * 2;
                    for (int j = 0; j < 2; j++) {
                        const int k = p * 2 + j;
                        int idx = o + k;
                        if (idx > 7) idx = 7;    // a tap past `th`: weight 0
                        shuf[j * 2] = (uint8_t)(idx * 2);
                        shuf[j * 2 + 1] = (uint8_t)(idx * 2 + 1);
                        coef[j] = k < th ? c[k] : 0;
                    }
                }
            }
        }
    }
    return 1;
}

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2")))
static void vert_u8_avx2(const uint8_t *const *rw, const int16_t *c, int taps2, int x0, int x1, int16_t *out) {
    const __m256i round = _mm256_set1_epi32(1 << (COEF_BITS - MID_BITS - 1));
    int x = x0;
    for (; x + 15 <= x1; x += 16) {
        __m256i lo = round, hi = round;
        for (int k = 0; k < taps2; k += 2) {
            const __m256i a = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(rw[k] + x)));
            const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(rw[k + 1] + x)));
            const __m256i cc = _mm256_set1_epi32((int)(((uint32_t)(uint16_t)c[k + 1] << 16) | (uint16_t)c[k]));
            lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), cc));
            hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), cc));
        }
        lo = _mm256_srai_epi32(lo, COEF_BITS - MID_BITS);
        hi = _mm256_srai_epi32(hi, COEF_BITS - MID_BITS);
        _mm256_storeu_si256((__m256i *)(out + x), _mm256_packs_epi32(lo, hi));
    }
    if (x <= x1) vert_u8_c(rw, c, taps2, x, x1, out);
}

/// The shuffle form: 8 outputs per step (a group of 4 per 128-bit lane), taps 0-1 and 2-3
/// gathered in-register by pshufb, weighted by pmaddwd.
__attribute__((target("avx2")))
static inline __m256i shuf_block(const cz_resampler *r, const int16_t *tmp, int b) {
    const __m256i v = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(tmp + r->g_base[b * 2]))),
        _mm_loadu_si128((const __m128i *)(tmp + r->g_base[b * 2 + 1])), 1);
    const uint8_t *shuf = r->g_shuf + (size_t)b * 64;
    const int16_t *coef = r->g_coef + (size_t)b * 32;
    const __m256i s01 = _mm256_shuffle_epi8(v, _mm256_loadu_si256((const __m256i *)shuf));
    const __m256i s23 = _mm256_shuffle_epi8(v, _mm256_loadu_si256((const __m256i *)(shuf + 32)));
    __m256i a = _mm256_set1_epi32(1 << (COEF_BITS + MID_BITS - 1));
    a = _mm256_add_epi32(a, _mm256_madd_epi16(s01, _mm256_loadu_si256((const __m256i *)coef)));
    a = _mm256_add_epi32(a, _mm256_madd_epi16(s23, _mm256_loadu_si256((const __m256i *)(coef + 16))));
    return _mm256_srai_epi32(a, COEF_BITS + MID_BITS);
}

__attribute__((target("avx2")))
static void horiz_u8_shuf_avx2(const cz_resampler *r, const int16_t *tmp, int x0, int x1, uint8_t *out) {
    const int n = x1 - x0 + 1, blocks = (n + 7) / 8;
    uint8_t *o = out + x0;
    for (int b = 0; b < blocks; b += 2) {
        const __m256i a0 = shuf_block(r, tmp, b);
        const __m256i a1 = b + 1 < blocks ? shuf_block(r, tmp, b + 1) : _mm256_setzero_si256();
        // 16 outputs: int32 -> int16 (packs interleaves the lanes; permute back) -> uint8.
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(a0, a1), 0xD8);
        const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
        const int at = b * 8;
        if (at + 16 <= n) {
            _mm_storeu_si128((__m128i *)(o + at), bytes);
        } else {
            uint8_t t[16];
            _mm_storeu_si128((__m128i *)t, bytes);
            memcpy(o + at, t, (size_t)(n - at));
        }
    }
}

/// The general form: per output, 8 taps at a time with one 16-byte load and pmaddwd.
__attribute__((target("avx2")))
static void horiz_u8_avx2(const cz_resampler *r, const int16_t *tmp, int th, int x0, int x1, uint8_t *out) {
    const int stride = r->max_taps_h2, chunks = (th + 7) / 8;
    int x = x0;
    for (; x + 3 <= x1; x += 4) {
        __m128i m[4];
        for (int i = 0; i < 4; i++) {
            const int16_t *c = r->h_coef + (size_t)(x + i) * stride;
            const int16_t *s = tmp + r->h_first[x + i];
            __m128i a = _mm_madd_epi16(_mm_loadu_si128((const __m128i *)s), _mm_loadu_si128((const __m128i *)c));
            for (int j = 1; j < chunks; j++)
                a = _mm_add_epi32(a, _mm_madd_epi16(_mm_loadu_si128((const __m128i *)(s + 8 * j)),
                                                    _mm_loadu_si128((const __m128i *)(c + 8 * j))));
            m[i] = a;
        }
        __m128i sum = _mm_hadd_epi32(_mm_hadd_epi32(m[0], m[1]), _mm_hadd_epi32(m[2], m[3]));
        sum = _mm_srai_epi32(_mm_add_epi32(sum, _mm_set1_epi32(1 << (COEF_BITS + MID_BITS - 1))), COEF_BITS + MID_BITS);
        const __m128i w = _mm_packs_epi32(sum, sum);
        const int v = _mm_cvtsi128_si32(_mm_packus_epi16(w, w));
        memcpy(out + x, &v, 4);
    }
    if (x <= x1) horiz_u8_c(r, tmp, th, x, x1, out);
}

static int have_avx2(void) { return (cz_cpu_features() & CZ_CPU_AVX2) != 0; }
#else
static int have_avx2(void) { return 0; }
#endif

/// 8-bit planes: outputs [ox0, ox1] x [oy0, oy1]; source columns [x_lo, x_hi] (edges repeated).
static void resample_u8(cz_resampler *r, const uint8_t *src, ptrdiff_t src_stride, int src_w, int src_h,
                        int th, int tv, int ox0, int ox1, int oy0, int oy1, int x_lo, int x_hi,
                        uint8_t *dst, ptrdiff_t dst_stride) {
    const int mth = r->max_taps_h, mtv = r->max_taps_v;
    const int tv2 = (tv + 1) & ~1;
    for (int x = ox0; x <= ox1; x++)
        quantize(r->h_weight + (size_t)x * mth, th, r->h_coef + (size_t)x * r->max_taps_h2, r->max_taps_h2);
    for (int y = oy0; y <= oy1; y++)
        quantize(r->v_weight + (size_t)y * mtv, tv, r->v_coef + (size_t)y * r->max_taps_v2, tv2);
    const int avx2 = r->simd && have_avx2();
    const int shuffled = avx2 && build_blocks(r, ox0, ox1, th);
    int16_t *tmp = r->tmp + r->pad;   // indexed by source column
    const int in_lo = x_lo < 0 ? 0 : x_lo, in_hi = x_hi > src_w - 1 ? src_w - 1 : x_hi;
    const uint8_t *rw[64];
    for (int y = oy0; y <= oy1; y++) {
        const int16_t *c = r->v_coef + (size_t)y * r->max_taps_v2;
        const int n = tv2 < 64 ? tv2 : 64;
        for (int k = 0; k < n; k++)
            rw[k] = src + (ptrdiff_t)clampi(r->v_first[y] + (k < tv ? k : 0), 0, src_h - 1) * src_stride;
#if defined(__x86_64__)
        if (avx2) vert_u8_avx2(rw, c, n, in_lo, in_hi, tmp); else
#endif
        vert_u8_c(rw, c, n, in_lo, in_hi, tmp);
        for (int x = x_lo; x < in_lo; x++) tmp[x] = tmp[in_lo];
        for (int x = in_hi + 1; x <= x_hi; x++) tmp[x] = tmp[in_hi];
        uint8_t *out = dst + (ptrdiff_t)y * dst_stride;
#if defined(__x86_64__)
        if (shuffled) horiz_u8_shuf_avx2(r, tmp, ox0, ox1, out);
        else if (avx2) horiz_u8_avx2(r, tmp, th, ox0, ox1, out);
        else
#endif
        horiz_u8_c(r, tmp, th, ox0, ox1, out);
    }
}

// 16-bit samples: in float. Horizontal filtering runs on bands of 8 rows transposed to columns,
// so that every tap is one contiguous 8-float vector (the same idea zimg uses); the vertical pass
// reads whole rows. On x86-64 built for AVX2 + FMA (x86-64-v3) and for the baseline; the loader
// picks what the CPU has (ifunc).
// Not under a sanitizer: the clones' resolver runs while the loader relocates, before the sanitizer's runtime is
// up, and its instrumented entry crashes there (scripts/sanitize.sh).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define CZ_NO_CLONES 1
#endif
#endif
#if defined(__x86_64__) && defined(__linux__) && !defined(CZ_NO_CLONES)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
static void resample_float(cz_resampler *r, const uint8_t *src, ptrdiff_t src_stride, int src_w, int src_h, int bytes,
                           int th, int tv, int ox0, int ox1, int oy0, int oy1, int x_lo, int x_hi, int y_lo, int y_hi,
                           uint8_t *dst, ptrdiff_t dst_stride, int dst_w, int max_value) {
    const int mth = r->max_taps_h, mtv = r->max_taps_v, pad = r->pad;
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
                col[(size_t)(x + pad) * BAND] =
                    bytes == 1 ? (float)line[src_w - 1] : (float)((const uint16_t *)line)[src_w - 1];
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
}

int cz_resample_plane(cz_resampler *r, const uint8_t *src, ptrdiff_t src_stride, int src_w, int src_h,
                      int bytes, double origin_x, double origin_y, double step_x, double step_y,
                      uint8_t *dst, ptrdiff_t dst_stride, int dst_w, int dst_h, int max_value, int background) {
    if (src_w > r->max_src_w || src_h > r->max_src_h || dst_w > r->dst_w || dst_h > r->dst_h) return -1;
    const int th = fill(r, dst_w, origin_x, step_x, step_x, r->max_taps_h, r->h_first, r->h_weight);
    const int tv = fill(r, dst_h, origin_y, step_y, step_y, r->max_taps_v, r->v_first, r->v_weight);
    // Outputs that show the picture; the rest is background.
    int ox0, ox1, oy0, oy1;
    inside(origin_x, step_x, src_w, dst_w, &ox0, &ox1);
    inside(origin_y, step_y, src_h, dst_h, &oy0, &oy1);
    if (ox0 > ox1 || oy0 > oy1) {
        fill_outside(dst, dst_stride, bytes, dst_w, dst_h, ox0, ox1, oy0, oy1, background);
        return 0;
    }

    // Source rows the vertical pass reads (clamped to the picture).
    int y_lo = clampi(r->v_first[oy0], 0, src_h - 1);
    int y_hi = clampi(r->v_first[oy1] + tv - 1, 0, src_h - 1);
    // Source columns the horizontal pass reads: [x_lo, x_hi], edges replicated into the pad.
    const int x_lo = r->h_first[ox0], x_hi = r->h_first[ox1] + th - 1;
    const int pad = r->pad;
    if (x_lo < -pad + 1 || x_hi > src_w + pad - 2) return -2;   // a window far outside the picture
    if (tv > 64) return -3;

    if (bytes == 1) {
        resample_u8(r, src, src_stride, src_w, src_h, th, tv, ox0, ox1, oy0, oy1, x_lo, x_hi, dst, dst_stride);
        fill_outside(dst, dst_stride, bytes, dst_w, dst_h, ox0, ox1, oy0, oy1, background);
        return 0;
    }

    resample_float(r, src, src_stride, src_w, src_h, bytes, th, tv, ox0, ox1, oy0, oy1, x_lo, x_hi, y_lo, y_hi,
                   dst, dst_stride, dst_w, max_value);
    fill_outside(dst, dst_stride, bytes, dst_w, dst_h, ox0, ox1, oy0, oy1, background);
    return 0;
}

// MARK: - 2-D warp (rotation, shear, any affine map)
//
// Output sample (x, y) reads the source around (u, v) = (a x + c y + tx, b x + d y + ty) (sample
// index units) with a 4x4 kernel: the cubic at unit scale (or 2x2 bilinear, or nearest). Weights
// come from a table of 1024 phases (1/1024 sample of position), 14-bit like the separable path.
// Taps that fall outside the picture read the background (or, for edge fill, the nearest edge
// sample), so the picture's border is filtered like any other edge.

#define WARP_PHASES 1024

struct cz_warp {
    int filter;
    int simd;
    int16_t weight[WARP_PHASES + 1][4];   // taps at offsets -1, 0, 1, 2 from floor(u)
};

cz_warp *cz_warp_new(cz_zimg_filter filter, double b, double c) {
    cz_warp *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    cz_resampler k = { .filter = filter, .b = b, .c = c };
    w->filter = filter;
    w->simd = 1;
    for (int p = 0; p <= WARP_PHASES; p++) {
        const double f = (double)p / WARP_PHASES;
        float wf[4];
        double sum = 0, raw[4];
        for (int t = 0; t < 4; t++) {
            double x = (t - 1) - f;
            if (filter == CZ_ZIMG_POINT) raw[t] = (t == 1 && f < 0.5) || (t == 2 && f >= 0.5) ? 1 : 0;
            else raw[t] = kernel(&k, x);
            sum += raw[t];
        }
        for (int t = 0; t < 4; t++) wf[t] = (float)(raw[t] / (sum == 0 ? 1 : sum));
        quantize(wf, 4, w->weight[p], 4);
    }
    return w;
}

void cz_warp_free(cz_warp *w) { free(w); }

static inline int warp_get(const uint8_t *src, ptrdiff_t stride, int bytes, int x, int y) {
    return get(src + (ptrdiff_t)y * stride, bytes, x);
}

/// One output sample around source sample (ui + fraction pu/1024, vi + pv/1024).
static inline int warp_sample(const cz_warp *w, const uint8_t *src, ptrdiff_t src_stride, int src_w, int src_h,
                              int bytes, int ui, int vi, int pu, int pv, int bg, int keep) {
    const int16_t *wx = w->weight[pu], *wy = w->weight[pv];
    const int shift1 = COEF_BITS - MID_BITS, shift2 = COEF_BITS + MID_BITS;
    if (ui >= 1 && vi >= 1 && ui + 2 < src_w && vi + 2 < src_h) {
        if (bytes == 1) {
            int acc = 1 << (shift2 - 1);
            const uint8_t *p = src + (ptrdiff_t)(vi - 1) * src_stride + (ui - 1);
            for (int r = 0; r < 4; r++, p += src_stride) {
                const int h = wx[0] * p[0] + wx[1] * p[1] + wx[2] * p[2] + wx[3] * p[3];
                acc += wy[r] * ((h + (1 << (shift1 - 1))) >> shift1);
            }
            return acc >> shift2;
        }
        // 16-bit samples: 64-bit sums, one rounding.
        int64_t a2 = (int64_t)1 << (2 * COEF_BITS - 1);
        const uint8_t *p = src + (ptrdiff_t)(vi - 1) * src_stride;
        for (int r = 0; r < 4; r++, p += src_stride) {
            const uint16_t *q = (const uint16_t *)p + (ui - 1);
            const int64_t h =
                (int64_t)wx[0] * q[0] + (int64_t)wx[1] * q[1] + (int64_t)wx[2] * q[2] + (int64_t)wx[3] * q[3];
            a2 += (int64_t)wy[r] * h;
        }
        return (int)(a2 >> (2 * COEF_BITS));
    }
    if (ui + 2 < 0 || vi + 2 < 0 || ui - 1 >= src_w || vi - 1 >= src_h) {
        // Every tap outside.
        if (keep) return INT_MIN;   // leave the painted background
        return bg >= 0 ? bg : warp_get(src, src_stride, bytes, clampi(ui, 0, src_w - 1), clampi(vi, 0, src_h - 1));
    }
    int64_t a2 = (int64_t)1 << (2 * COEF_BITS - 1);
    for (int r = 0; r < 4; r++) {
        const int sy = vi - 1 + r;
        int64_t h = 0;
        for (int t = 0; t < 4; t++) {
            const int sx = ui - 1 + t;
            int v;
            if (sx >= 0 && sy >= 0 && sx < src_w && sy < src_h) v = warp_get(src, src_stride, bytes, sx, sy);
            else if (bg >= 0) v = bg;
            else v = warp_get(src, src_stride, bytes, clampi(sx, 0, src_w - 1), clampi(sy, 0, src_h - 1));
            h += (int64_t)wx[t] * v;
        }
        a2 += (int64_t)wy[r] * h;
    }
    return (int)(a2 >> (2 * COEF_BITS));
}

#if defined(__x86_64__)
/// 8 output samples along a row, the first at U, V (32 fractional bits; the others at + i dU,
/// + i dV: `du8`/`dv8` hold i dU for i = 0…3 and 4…7). When all their 4x4 taps lie inside the
/// 8-bit picture, computes them with the same integers as `warp_sample` and returns 1; else 0
/// (the caller takes them one by one). Taps come from pshufb on 16-byte row loads when each
/// group of 4 outputs (one per 128-bit lane) reads within 16 columns and 5 rows — a turn by
/// less than ~26° without a strong shrink — a blend taking the lower row for outputs one row
/// further down; otherwise from gathers. Weights are gathered from the phase table.
__attribute__((target("avx2")))
static int warp_block_u8_avx2(const cz_warp *w, const uint8_t *src, ptrdiff_t stride, int src_w, int src_h,
                              int64_t U, int64_t V, const __m256i du8[2], const __m256i dv8[2], uint8_t *out) {
    const int shift1 = COEF_BITS - MID_BITS, shift2 = COEF_BITS + MID_BITS;
    const __m256i odd = _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7), even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256i U0 = _mm256_add_epi64(_mm256_set1_epi64x(U), du8[0]);
    const __m256i U1 = _mm256_add_epi64(_mm256_set1_epi64x(U), du8[1]);
    const __m256i V0 = _mm256_add_epi64(_mm256_set1_epi64x(V), dv8[0]);
    const __m256i V1 = _mm256_add_epi64(_mm256_set1_epi64x(V), dv8[1]);
    // Whole sample (high dword) and phase (top 10 bits of the low dword), pixels in order.
    const __m256i vu =
        _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(U0, odd), _mm256_permutevar8x32_epi32(U1, odd), 0x20);
    const __m256i vv =
        _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(V0, odd), _mm256_permutevar8x32_epi32(V1, odd), 0x20);
    const __m256i phu = _mm256_srli_epi32(_mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(U0, even),
                                                                    _mm256_permutevar8x32_epi32(U1, even), 0x20), 22);
    const __m256i phv = _mm256_srli_epi32(_mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(V0, even),
                                                                    _mm256_permutevar8x32_epi32(V1, even), 0x20), 22);
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
    const __m256i in = _mm256_and_si256(
        _mm256_and_si256(_mm256_cmpgt_epi32(vu, zero), _mm256_cmpgt_epi32(_mm256_set1_epi32(src_w - 2), vu)),
        _mm256_and_si256(_mm256_cmpgt_epi32(vv, zero), _mm256_cmpgt_epi32(_mm256_set1_epi32(src_h - 2), vv)));
    if (_mm256_movemask_epi8(in) != -1) return 0;

    // The shuffle form's conditions, per lane.
    const __m256i first = _mm256_shuffle_epi32(vu, 0x00);                     // each lane's first u
    const __m256i o = _mm256_sub_epi32(vu, first);
    __m256i vmin = _mm256_min_epi32(vv, _mm256_shuffle_epi32(vv, 0xB1));
    vmin = _mm256_min_epi32(vmin, _mm256_shuffle_epi32(vmin, 0x4E));         // each lane's smallest v
    const __m256i d = _mm256_sub_epi32(vv, vmin);
    const __m256i ok = _mm256_and_si256(
        _mm256_and_si256(_mm256_cmpgt_epi32(o, _mm256_set1_epi32(-1)), _mm256_cmpgt_epi32(_mm256_set1_epi32(13), o)),
        _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(2), d),
                         _mm256_cmpgt_epi32(_mm256_set1_epi32(src_w - 14), first)));   // first - 1 + 16 <= src_w
    const int fast = _mm256_movemask_epi8(ok) == -1;

    const long long *w64 = (const long long *)w->weight;
    const int *w32 = (const int *)w->weight;
    const __m256i wx_lo = _mm256_i32gather_epi64(w64, _mm256_castsi256_si128(phu), 8);
    const __m256i wx_hi = _mm256_i32gather_epi64(w64, _mm256_extracti128_si256(phu, 1), 8);
    const __m256i ph2 = _mm256_slli_epi32(phv, 1);
    const __m256i wyA = _mm256_i32gather_epi32(w32, ph2, 4);       // (wy0, wy1)
    const __m256i wyB = _mm256_i32gather_epi32(w32 + 1, ph2, 4);   // (wy2, wy3)
    const __m256i r1 = _mm256_set1_epi32(1 << (shift1 - 1));
    __m256i rows[5], shuf = zero, pick = zero, off = zero;
    if (fast) {
        const int left0 = _mm256_extract_epi32(vu, 0) - 1, left1 = _mm256_extract_epi32(vu, 4) - 1;
        const int top0 = _mm256_extract_epi32(vmin, 0) - 1, top1 = _mm256_extract_epi32(vmin, 4) - 1;
        for (int k = 0; k < 5; k++) {
            const int ra = top0 + k < src_h ? top0 + k : src_h - 1, rb = top1 + k < src_h ? top1 + k : src_h - 1;
            rows[k] = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(src + (ptrdiff_t)ra * stride + left0))),
                _mm_loadu_si128((const __m128i *)(src + (ptrdiff_t)rb * stride + left1)), 1);
        }
        shuf = _mm256_add_epi32(_mm256_mullo_epi32(o, _mm256_set1_epi32(0x01010101)), _mm256_set1_epi32(0x03020100));
        pick = _mm256_cmpgt_epi32(d, zero);
    } else {
        off = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_sub_epi32(vv, one), _mm256_set1_epi32((int)stride)),
                               _mm256_sub_epi32(vu, one));
    }
    __m256i h[4];
    for (int r = 0; r < 4; r++) {
        const __m256i g = fast
            ? _mm256_blendv_epi8(_mm256_shuffle_epi8(rows[r], shuf), _mm256_shuffle_epi8(rows[r + 1], shuf), pick)
            : _mm256_i32gather_epi32((const int *)(src + r * stride), off, 1);
        const __m256i lo = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm256_castsi256_si128(g)), wx_lo);
        const __m256i hi = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm256_extracti128_si256(g, 1)), wx_hi);
        const __m256i sum = _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), 0xD8);   // pixels in order
        h[r] = _mm256_srai_epi32(_mm256_add_epi32(sum, r1), shift1);
    }
    __m256i acc = _mm256_set1_epi32(1 << (shift2 - 1));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_blend_epi16(h[0], _mm256_slli_epi32(h[1], 16), 0xAA), wyA));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_blend_epi16(h[2], _mm256_slli_epi32(h[3], 16), 0xAA), wyB));
    acc = _mm256_srai_epi32(acc, shift2);
    const __m256i p16 = _mm256_packs_epi32(acc, acc);
    const __m256i p8 = _mm256_packus_epi16(p16, p16);
    const int lo4 = _mm256_cvtsi256_si32(p8), hi4 = _mm256_extract_epi32(p8, 4);
    memcpy(out, &lo4, 4);
    memcpy(out + 4, &hi4, 4);
    return 1;
}
#endif

#if defined(__x86_64__)
/// i dU and i dV for i = 0…3 and 4…7, as 64-bit lanes.
__attribute__((target("avx2")))
static void warp_steps_avx2(int64_t du, int64_t dv, __m256i du8[2], __m256i dv8[2]) {
    du8[0] = _mm256_setr_epi64x(0, du, 2 * du, 3 * du); du8[1] = _mm256_setr_epi64x(4 * du, 5 * du, 6 * du, 7 * du);
    dv8[0] = _mm256_setr_epi64x(0, dv, 2 * dv, 3 * dv); dv8[1] = _mm256_setr_epi64x(4 * dv, 5 * dv, 6 * dv, 7 * dv);
}
#endif

int cz_warp_plane(const cz_warp *w, const uint8_t *src, ptrdiff_t src_stride, int src_w, int src_h, int bytes,
                  const double m[6], uint8_t *dst, ptrdiff_t dst_stride, int dst_w, int dst_h,
                  int max_value, int background) {
    if (src_w < 1 || src_h < 1) return -1;
    // Fixed point with 32 fractional bits: output sample x of a row sits at U_row + x * dU exactly.
    const double one = 4294967296.0;
    const int64_t du = llround(m[0] * one), dv = llround(m[1] * one);
    const int bg = background < 0 ? -1 : background;
    const int keep = background == -2;
#if defined(__x86_64__)
    const int simd = bytes == 1 && w->simd && have_avx2();
#else
    const int simd = 0;
#endif
#if defined(__x86_64__)
    __m256i du8[2], dv8[2];
    if (simd) warp_steps_avx2(du, dv, du8, dv8);
#endif
    int ui[8], vi[8], pu[8], pv[8];
    for (int y = 0; y < dst_h; y++) {
        int64_t U = llround((m[2] * y + m[4]) * one), V = llround((m[3] * y + m[5]) * one);
        uint8_t *orow = dst + (ptrdiff_t)y * dst_stride;
        int x = 0;
        while (x < dst_w) {
            const int n = dst_w - x < 8 ? dst_w - x : 8;
#if defined(__x86_64__)
            if (simd && n == 8 && warp_block_u8_avx2(w, src, src_stride, src_w, src_h, U, V, du8, dv8, orow + x)) {
                U += 8 * du; V += 8 * dv;
                x += 8;
                continue;
            }
#endif
            for (int i = 0; i < n; i++, U += du, V += dv) {
                ui[i] = (int)(U >> 32); vi[i] = (int)(V >> 32);
                pu[i] = (int)((U >> 22) & (WARP_PHASES - 1)); pv[i] = (int)((V >> 22) & (WARP_PHASES - 1));
            }
            for (int i = 0; i < n; i++) {
                int out = warp_sample(w, src, src_stride, src_w, src_h, bytes, ui[i], vi[i], pu[i], pv[i], bg, keep);
                if (out == INT_MIN) continue;   // wholly outside: the painted background stays
                out = out < 0 ? 0 : (out > max_value ? max_value : out);
                if (bytes == 1) orow[x + i] = (uint8_t)out; else ((uint16_t *)orow)[x + i] = (uint16_t)out;
            }
            x += n;
        }
    }
    return 0;
}

void cz_warp_set_simd(cz_warp *w, int enabled) { w->simd = enabled != 0; }

// MARK: - Box blur (the blurred background)

/// One box pass of radius r along a line of n samples (stride `step` elements), edges repeated;
/// `line` is read into `tmp` (n ints) first.
static void box_line(uint8_t *base, ptrdiff_t step, int n, int bytes, int r, int *tmp) {
    for (int i = 0; i < n; i++) tmp[i] = bytes == 1 ? base[i * step] : ((uint16_t *)base)[i * step];
    const int win = 2 * r + 1;
    int sum = 0;
    for (int k = -r; k <= r; k++) sum += tmp[clampi(k, 0, n - 1)];
    for (int i = 0; i < n; i++) {
        const int v = (sum + win / 2) / win;
        if (bytes == 1) base[i * step] = (uint8_t)v; else ((uint16_t *)base)[i * step] = (uint16_t)v;
        sum += tmp[clampi(i + r + 1, 0, n - 1)] - tmp[clampi(i - r, 0, n - 1)];
    }
}

void cz_box_blur(uint8_t *plane, ptrdiff_t stride, int w, int h, int bytes, int radius, int passes, int *tmp) {
    if (radius < 1 || w < 1 || h < 1) return;
    for (int p = 0; p < passes; p++) {
        for (int y = 0; y < h; y++) box_line(plane + (ptrdiff_t)y * stride, 1, w, bytes, radius, tmp);
        for (int x = 0; x < w; x++)
            box_line(plane + (ptrdiff_t)x * bytes, bytes == 1 ? stride : stride / 2, h, bytes, radius, tmp);
    }
}
