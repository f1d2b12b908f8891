// HDR (PQ, HLG) to SDR BT.709: one pass over a 4:4:4 16-bit picture, with every transfer function and the tone
// curve made once at set-up, then the chroma subsampled. Three row kinds give the same picture (within a code of
// the mapping worked in doubles; ToneMapKernelTests): plain C reads interpolated tables (seven a pixel); AVX2 + FMA
// rows read the same tables eight pixels at a time (a 64-bit gather a read); AVX-512 rows, sixteen at a time,
// evaluate the transfer functions as polynomials whose coefficients sit in registers (a permute a coefficient,
// no gather) and gather only the tone curve. Benchmarks/README.md "Tone mapping" has the cost of each.
#include "CPlaneKernels.h"
#include "cpu_features.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/// A chroma row holds one column before the picture and three after, copies of the edge (the filters read one
/// past each edge, the SIMD filter's last load one more).
enum { ROW_PAD = 4 };
/// Tables read at a signal (0…1) have EOTF_SIZE steps, evenly spaced. Tables read at linear light (0…1) are spaced
/// by octave, 2^(23 − LOG_SHIFT) steps to each of LOG_OCTAVES octaves below 1, so the steep powers near black are
/// as exact as the rest: the index is the float's own bits (exponent, then the top mantissa bits).
enum { EOTF_SIZE = 4096, LOG_OCTAVES = 32, LOG_SHIFT = 16, LOG_SIZE = LOG_OCTAVES << (23 - LOG_SHIFT) };
/// The bits of 2^-LOG_OCTAVES, the smallest light a log table tells apart from black.
static const int32_t LOG_BASE = (127 - LOG_OCTAVES) << 23;

/// One entry of a table: the value at a step and the difference to the next, read together (one 64-bit load).
typedef struct {
    float value, delta;
} tm_entry;

struct cz_tonemap {
    cz_tonemap_params p;
    /// Source signal (0…1) → linear light, 1.0 = the SDR white (PQ: display light; HLG: scene light, 0…1).
    tm_entry eotf[EOTF_SIZE + 1];
    /// HLG only: scene luminance (0…1, log-spaced) → display light / scene light (the OOTF, in SDR-white units).
    tm_entry ootf[LOG_SIZE + 1];
    /// The tone curve as a gain on the brightest component, at that component / domain (log-spaced).
    tm_entry gain[LOG_SIZE + 1];
    float domain;
    /// Linear BT.709 display light (0…1, log-spaced) → the BT.709 signal.
    tm_entry oetf[LOG_SIZE + 1];
    /// The same functions as polynomials for the AVX-512 rows, read by in-register permutes instead of gathers.
    /// EOTF: cubic in the position within each of 32 even steps of the signal, then (0…1/32, where PQ is steep)
    /// 32 steps of 1/1024: `eotf_poly[k][step]`, steps 32…63 the fine ones. OETF and HLG's OOTF: a quartic in the
    /// mantissa − 1 of each octave 2^-32…1 (index: exponent + 32).
    _Alignas(64) float eotf_poly[4][64];
    _Alignas(64) float oetf_poly[5][32];
    _Alignas(64) float ootf_poly[5][32];
    /// Two rows of full-resolution chroma (Cb, Cr), for subsampling.
    float *chroma;
    int width;
    /// The widest rows used (cz_tonemap_set_simd): 0 plain C, 1 AVX2, 2 AVX-512, for tests that compare them.
    int simd;
};

/// The light at step `i` of a log-spaced table.
static double log_step(int i) {
    union {
        int32_t i;
        float f;
    } u = {.i = LOG_BASE + (i << LOG_SHIFT)};
    return u.f;
}

/// Fills `deltas` of a table whose values are set.
static void finish(tm_entry *table, int size) {
    for (int i = 0; i < size; i++) table[i].delta = table[i + 1].value - table[i].value;
    table[size].delta = 0;
}

static double pq_eotf(double e) {  // signal → cd/m² (SMPTE ST 2084)
    const double m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32,
                 c3 = 2392.0 / 4096 * 32;
    double p = pow(e < 0 ? 0 : e, 1 / m2);
    double num = p - c1 < 0 ? 0 : p - c1;
    return 10000 * pow(num / (c2 - c3 * p), 1 / m1);
}

static double pq_oetf(double nits) {  // cd/m² → signal (the inverse EOTF)
    const double m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32,
                 c3 = 2392.0 / 4096 * 32;
    double y = pow((nits < 0 ? 0 : nits) / 10000, m1);
    return pow((c1 + c2 * y) / (1 + c3 * y), m2);
}

static double hlg_inverse_oetf(double e) {  // ARIB STD-B67 signal → scene light 0…1
    const double a = 0.17883277, b = 1 - 4 * a, c = 0.5 - a * log(4 * a);
    if (e <= 0.5) return e * e / 3;
    return (exp((e - c) / a) + b) / 12;
}

/// The BT.709 signal for display light (BT.1886's EOTF inverted, black at 0: a 2.4 power), as zimg writes it: the
/// mapped picture is display-referred, so a BT.1886 display shows the light the curve chose.
static double bt1886_inverse_eotf(double l) { return l <= 0 ? 0 : pow(l, 1 / 2.4); }

static double hable(double x) {
    const double a = 0.15, b = 0.50, c = 0.10, d = 0.20, e = 0.02, f = 0.30;
    return (x * (x * a + c * b) + d * e) / (x * (x * a + b) + d * f) - e / f;
}

/// The tone curve: `x` linear light in SDR-white units, `peak` the source's brightest in the same units; the
/// result is at most 1. BT.2390's EETF works on PQ signals in cd/m² (Report ITU-R BT.2390, 5.4.1).
static double curve(int kind, double x, double peak, double white_nits) {
    if (x <= 0) return 0;
    if (peak <= 1) return x < 1 ? x : 1;
    double y;
    switch (kind) {
    case CZ_TONEMAP_HABLE: y = hable(x) / hable(peak); break;
    case CZ_TONEMAP_REINHARD: y = x / (x + 1) * (peak + 1) / peak; break;  // L / (1 + L), scaled to reach 1
    default: {
        double source_max = pq_oetf(peak * white_nits);
        double e1 = pq_oetf(x * white_nits) / source_max;
        double max_lum = pq_oetf(white_nits) / source_max;
        double ks = 1.5 * max_lum - 0.5;
        double e2 = e1;
        if (e1 >= 1) {
            e2 = max_lum;
        } else if (e1 > ks) {
            double t = (e1 - ks) / (1 - ks), t2 = t * t, t3 = t2 * t;
            e2 = (2 * t3 - 3 * t2 + 1) * ks + (t3 - 2 * t2 + t) * (1 - ks) + (-2 * t3 + 3 * t2) * max_lum;
        }
        y = pq_eotf(e2 * source_max) / white_nits;
    }
    }
    return y < 1 ? y : 1;
}

/// What a polynomial is fitted to: a transfer function with its parameters.
typedef struct {
    int kind;  ///< 0: the source EOTF (PQ or HLG), 1: the BT.709 OETF, 2: HLG's OOTF gain
    int hlg;
    double white, lw, gamma;
} tm_function;

static double tm_eval(const tm_function *f, double x) {
    switch (f->kind) {
    case 0: return f->hlg ? hlg_inverse_oetf(x) : pq_eotf(x) / f->white;
    case 1: return bt1886_inverse_eotf(x);
    default: return f->lw / f->white * pow(x, f->gamma - 1);
    }
}

/// The polynomial of `degree` (≤ 4) in t ∈ [0, 1] through `f` at a + (b − a)·t at Chebyshev nodes (close to the
/// best fit), into coef[0…degree] (coef[k] at `stride` apart).
static void fit(const tm_function *f, double a, double b, int degree, float *coef, int stride) {
    enum { N = 5 };
    double m[N][N + 1];
    int n = degree + 1;
    for (int j = 0; j < n; j++) {
        double t = 0.5 + 0.5 * cos(M_PI * (j + 0.5) / n);
        double p = 1;
        for (int k = 0; k < n; k++, p *= t) m[j][k] = p;
        m[j][n] = tm_eval(f, a + (b - a) * t);
    }
    for (int c = 0; c < n; c++) {  // Gaussian elimination with partial pivoting
        int best = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(m[r][c]) > fabs(m[best][c])) best = r;
        for (int k = 0; k <= n; k++) {
            double x = m[c][k];
            m[c][k] = m[best][k];
            m[best][k] = x;
        }
        for (int r = 0; r < n; r++) {
            if (r == c) continue;
            double q = m[r][c] / m[c][c];
            for (int k = c; k <= n; k++) m[r][k] -= q * m[c][k];
        }
    }
    for (int k = 0; k < n; k++) coef[k * stride] = (float)(m[k][n] / m[k][k]);
}

cz_tonemap *cz_tonemap_new(const cz_tonemap_params *p, int width) {
    if (width <= 0 || p->white_nits <= 0) return NULL;
    size_t size = (sizeof(cz_tonemap) + 63) / 64 * 64;
    cz_tonemap *t = aligned_alloc(64, size);  // the polynomial tables are read as aligned 64-byte vectors
    if (!t) return NULL;
    memset(t, 0, size);
    t->chroma = malloc(sizeof(float) * 4 * (size_t)(width + ROW_PAD));
    if (!t->chroma) {
        free(t);
        return NULL;
    }
    t->p = *p;
    t->width = width;
    const double white = p->white_nits;
    for (int i = 0; i <= EOTF_SIZE; i++) {
        double e = (double)i / (double)EOTF_SIZE;
        t->eotf[i].value = (float)(p->transfer == CZ_TONEMAP_HLG ? hlg_inverse_oetf(e) : pq_eotf(e) / white);
    }
    finish(t->eotf, EOTF_SIZE);
    // HLG's OOTF (BT.2100): display = Lw · Ys^(γ−1) · scene, γ = 1.2 + 0.42 log10(Lw / 1000).
    double lw = p->transfer == CZ_TONEMAP_HLG ? p->source_peak_nits : 0;
    double gamma = 1.2 + 0.42 * log10(lw > 0 ? lw / 1000 : 1);
    for (int i = 0; i <= LOG_SIZE; i++) t->ootf[i].value = (float)(lw / white * pow(log_step(i), gamma - 1));
    finish(t->ootf, LOG_SIZE);
    double peak = p->source_peak_nits / white;
    // The brightest a component can be after the gamut matrix: the brightest light times the largest sum of a
    // row's positive terms (BT.2020 → BT.709: 1.66, a saturated red), so the gain table reaches every component.
    double reach = 1;
    for (int row = 0; row < 3; row++) {
        double sum = 0;
        for (int col = 0; col < 3; col++) sum += p->gamut[3 * row + col] > 0 ? p->gamut[3 * row + col] : 0;
        reach = sum > reach ? sum : reach;
    }
    t->domain = (float)((p->transfer == CZ_TONEMAP_HLG ? peak : 10000 / white) * reach);
    if (t->domain < peak) t->domain = (float)peak;
    for (int i = 0; i <= LOG_SIZE; i++) {
        double x = log_step(i) * t->domain;
        t->gain[i].value = (float)(peak <= 1 && x <= 1 ? 1 : curve(p->curve, x, peak, white) / x);
    }
    finish(t->gain, LOG_SIZE);
    t->oetf[0].value = 0;  // black stays black
    for (int i = 1; i <= LOG_SIZE; i++) t->oetf[i].value = (float)bt1886_inverse_eotf(log_step(i));
    finish(t->oetf, LOG_SIZE);
    tm_function eotf = {0, p->transfer == CZ_TONEMAP_HLG, white, lw, gamma};
    tm_function oetf = {1, 0, white, lw, gamma};
    tm_function ootf = {2, 0, white, lw, gamma};
    for (int i = 0; i < 32; i++) {
        fit(&eotf, i / 32.0, (i + 1) / 32.0, 3, &t->eotf_poly[0][i], 64);
        fit(&eotf, i / 1024.0, (i + 1) / 1024.0, 3, &t->eotf_poly[0][32 + i], 64);
        double lo = ldexp(1, i - 32);
        fit(&oetf, lo, 2 * lo, 4, &t->oetf_poly[0][i], 32);
        fit(&ootf, lo, 2 * lo, 4, &t->ootf_poly[0][i], 32);
    }
    t->simd = 2;
    return t;
}

void cz_tonemap_set_simd(cz_tonemap *t, int level) { t->simd = level; }

void cz_tonemap_free(cz_tonemap *t) {
    if (!t) return;
    free(t->chroma);
    free(t);
}

/// `table` (size+1 entries, evenly over 0…1) at `x`, linearly interpolated; `x` clamped to 0…1, NaN reads 0.
static inline float lookup(const tm_entry *table, int size, float x) {
    x = x > 0 ? x : 0;
    x = x < 1 ? x : 1;
    float f = x * (float)size;
    int i = (int)f;
    return table[i].value + table[i].delta * (f - (float)i);
}

/// A log-spaced table at `x` (0…1), linearly interpolated within its step; 0 and below (and NaN) read entry 0.
static inline float lookup_log(const tm_entry *table, float x) {
    x = x > 0 ? x : 0;  // a negative float's bits would wrap below
    int32_t bits;
    memcpy(&bits, &x, sizeof bits);
    int32_t k = bits - LOG_BASE;
    k = k > 0 ? k : 0;
    k = k < (LOG_SIZE << LOG_SHIFT) ? k : (LOG_SIZE << LOG_SHIFT);
    int i = k >> LOG_SHIFT;
    return table[i].value + table[i].delta * ((float)(k & ((1 << LOG_SHIFT) - 1)) * (1.0f / (1 << LOG_SHIFT)));
}

static inline void store(uint8_t *row, int x, int depth, float code) {
    float max = (float)((1 << depth) - 1);
    code = code < 0 ? 0 : (code > max ? max : code);
    if (depth == 8) {
        row[x] = (uint8_t)(code + 0.5f);
    } else {
        ((uint16_t *)row)[x] = (uint16_t)(code + 0.5f);
    }
}

/// What every row of one picture shares: the matrices, the output's code ranges.
typedef struct {
    float kr, kg, kb, cr_r, cb_b, cb_g, cr_g;
    float okr, okg, okb, cb_scale, cr_scale;
    float m[9];
    float inv_domain, y_off, y_gain, y_max;
    int hlg, depth;
} row_consts;

/// Luma of columns [x0, x1) of one row into `dy`, and full-resolution Cb, Cr (-0.5…0.5) into `cbr`, `crr`.
static void row_c(const cz_tonemap *t, const row_consts *k, const uint16_t *sy, const uint16_t *su,
                  const uint16_t *sv, uint8_t *dy, float *cbr, float *crr, int x0, int x1) {
    const float *m = k->m;
    for (int x = x0; x < x1; x++) {
        float Y = ((float)sy[x] - 4096.0f) * (1.0f / 56064);
        float U = ((float)su[x] - 32768.0f) * (1.0f / 57344);
        float V = ((float)sv[x] - 32768.0f) * (1.0f / 57344);
        float R = lookup(t->eotf, EOTF_SIZE, Y + k->cr_r * V);
        float G = lookup(t->eotf, EOTF_SIZE, Y - k->cb_g * U - k->cr_g * V);
        float B = lookup(t->eotf, EOTF_SIZE, Y + k->cb_b * U);
        if (k->hlg) {
            float o = lookup_log(t->ootf, k->kr * R + k->kg * G + k->kb * B);
            R *= o;
            G *= o;
            B *= o;
        }
        // Into BT.709's primaries first, then the curve on the brightest component (as FFmpeg's tonemap after
        // zscale): the result's brightest is at most 1, so nothing clips and the hue stays.
        float r = m[0] * R + m[1] * G + m[2] * B;
        float gg = m[3] * R + m[4] * G + m[5] * B;
        float b = m[6] * R + m[7] * G + m[8] * B;
        float sig = r > gg ? r : gg;
        sig = sig > b ? sig : b;
        if (sig > 0) {
            float g = lookup_log(t->gain, sig * k->inv_domain);
            r *= g;
            gg *= g;
            b *= g;
        }
        // Outside BT.709's gamut (a negative component): towards the grey of the same luminance, hue kept.
        float l = k->okr * r + k->okg * gg + k->okb * b;
        float lo = r < gg ? r : gg;
        lo = lo < b ? lo : b;
        if (l <= 0) {
            r = gg = b = 0;
        } else if (lo < 0) {
            float f = l / (l - lo);
            r = l + (r - l) * f;
            gg = l + (gg - l) * f;
            b = l + (b - l) * f;
        }
        r = lookup_log(t->oetf, r);
        gg = lookup_log(t->oetf, gg);
        b = lookup_log(t->oetf, b);
        float oy = k->okr * r + k->okg * gg + k->okb * b;
        store(dy, x, k->depth, k->y_off + k->y_gain * oy);
        cbr[x] = (b - oy) * k->cb_scale;
        crr[x] = (r - oy) * k->cr_scale;
    }
}

/// One row of Cb or Cr codes, output samples [cx, cw), from full-resolution `c` (padded: ROW_PAD): as is, or
/// halved horizontally, [1 2 1] / 4 about each even column (`cosited`) or the mean of each pair.
static void chroma_c(const float *c, int log2w, int cosited, int cx, int cw, uint8_t *d, int depth, float off,
                     float gain) {
    for (; cx < cw; cx++) {
        float v;
        if (!log2w) {
            v = c[cx];
        } else if (cosited) {
            v = 0.5f * c[2 * cx] + 0.25f * (c[2 * cx - 1] + c[2 * cx + 1]);
        } else {
            v = 0.5f * (c[2 * cx] + c[2 * cx + 1]);
        }
        store(d, cx, depth, off + gain * v);
    }
}

#if defined(__x86_64__)
#include <immintrin.h>

#define TM_AVX2 __attribute__((target("avx2,fma")))

/// Eight entries of `table` at `i`, interpolated by `w`: two gathers of four 64-bit entries (value and delta),
/// split into values and deltas. The indices go in as pixels 0 1 4 5 and 2 3 6 7 so the split lands in order.
TM_AVX2 static inline __m256 read8(const tm_entry *table, __m256i i, __m256 w) {
    __m256i order = _mm256_permutevar8x32_epi32(i, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
    __m256 lo = _mm256_castpd_ps(_mm256_i32gather_pd((const double *)table, _mm256_castsi256_si128(order), 8));
    __m256 hi = _mm256_castpd_ps(_mm256_i32gather_pd((const double *)table, _mm256_extracti128_si256(order, 1), 8));
    __m256 value = _mm256_shuffle_ps(lo, hi, 0x88);
    __m256 delta = _mm256_shuffle_ps(lo, hi, 0xDD);
    return _mm256_fmadd_ps(delta, w, value);
}

/// `lookup` of eight: `x` clamped to 0…1 (NaN reads entry 0).
TM_AVX2 static inline __m256 lookup8(const tm_entry *table, int size, __m256 x) {
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_setzero_ps()), _mm256_set1_ps(1));
    __m256 f = _mm256_mul_ps(x, _mm256_set1_ps((float)size));
    __m256i i = _mm256_cvttps_epi32(f);
    return read8(table, i, _mm256_sub_ps(f, _mm256_cvtepi32_ps(i)));
}

/// `lookup_log` of eight.
TM_AVX2 static inline __m256 lookup_log8(const tm_entry *table, __m256 x) {
    x = _mm256_max_ps(x, _mm256_setzero_ps());  // NaN and -0 too: the second operand is returned
    __m256i k = _mm256_sub_epi32(_mm256_castps_si256(x), _mm256_set1_epi32(LOG_BASE));
    k = _mm256_min_epi32(_mm256_max_epi32(k, _mm256_setzero_si256()), _mm256_set1_epi32(LOG_SIZE << LOG_SHIFT));
    __m256 w = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_and_si256(k, _mm256_set1_epi32((1 << LOG_SHIFT) - 1))),
                             _mm256_set1_ps(1.0f / (1 << LOG_SHIFT)));
    return read8(table, _mm256_srli_epi32(k, LOG_SHIFT), w);
}

/// `store` of eight codes at columns x…x+7.
TM_AVX2 static inline void store8(uint8_t *row, int x, int depth, __m256 code, __m256 max) {
    code = _mm256_add_ps(_mm256_min_ps(_mm256_max_ps(code, _mm256_setzero_ps()), max), _mm256_set1_ps(0.5f));
    __m256i c = _mm256_cvttps_epi32(code);
    __m128i c16 = _mm_packus_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1));
    if (depth == 8) {
        _mm_storel_epi64((__m128i *)(row + x), _mm_packus_epi16(c16, c16));
    } else {
        _mm_storeu_si128((__m128i *)((uint16_t *)row + x), c16);
    }
}

/// Elements 0, 2, … 14 of a:b (sixteen floats), in order.
TM_AVX2 static inline __m256 evens(__m256 a, __m256 b) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
}

/// Elements 1, 3, … 15 of a:b, in order.
TM_AVX2 static inline __m256 odds(__m256 a, __m256 b) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}

/// `chroma_c` eight output samples at a time; returns where it stopped.
TM_AVX2 static int chroma_avx2(const float *c, int log2w, int cosited, int cw, uint8_t *d, int depth, float off,
                               float gain) {
    const __m256 max = _mm256_set1_ps((float)((1 << depth) - 1)), o = _mm256_set1_ps(off), g = _mm256_set1_ps(gain);
    const __m256 quarter = _mm256_set1_ps(0.25f), half = _mm256_set1_ps(0.5f);
    int cx = 0;
    for (; cx + 8 <= cw; cx += 8) {
        __m256 v;
        if (!log2w) {
            v = _mm256_loadu_ps(c + cx);
        } else {
            const float *s = c + 2 * cx;
            __m256 a = _mm256_loadu_ps(s), b = _mm256_loadu_ps(s + 8);
            __m256 even = evens(a, b), odd = odds(a, b);
            if (cosited) {
                __m256 before = evens(_mm256_loadu_ps(s - 1), _mm256_loadu_ps(s + 7));
                v = _mm256_fmadd_ps(half, even, _mm256_mul_ps(quarter, _mm256_add_ps(before, odd)));
            } else {
                v = _mm256_mul_ps(half, _mm256_add_ps(even, odd));
            }
        }
        store8(d, cx, depth, _mm256_fmadd_ps(g, v, o), max);
    }
    return cx;
}

/// `row_c` eight columns at a time (AVX2 and FMA); the last few columns are left to `row_c`.
TM_AVX2 static int row_avx2(const cz_tonemap *t, const row_consts *k, const uint16_t *sy, const uint16_t *su,
                            const uint16_t *sv, uint8_t *dy, float *cbr, float *crr, int x0, int x1) {
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1);
    const __m256 m0 = _mm256_set1_ps(k->m[0]), m1 = _mm256_set1_ps(k->m[1]), m2 = _mm256_set1_ps(k->m[2]);
    const __m256 m3 = _mm256_set1_ps(k->m[3]), m4 = _mm256_set1_ps(k->m[4]), m5 = _mm256_set1_ps(k->m[5]);
    const __m256 m6 = _mm256_set1_ps(k->m[6]), m7 = _mm256_set1_ps(k->m[7]), m8 = _mm256_set1_ps(k->m[8]);
    const __m256 okr = _mm256_set1_ps(k->okr), okg = _mm256_set1_ps(k->okg), okb = _mm256_set1_ps(k->okb);
    const __m256 y_max = _mm256_set1_ps(k->y_max);
    int x = x0;
    for (; x + 8 <= x1; x += 8) {
        __m256 Y = _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(sy + x))));
        __m256 U = _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(su + x))));
        __m256 V = _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(sv + x))));
        Y = _mm256_mul_ps(_mm256_sub_ps(Y, _mm256_set1_ps(4096.0f)), _mm256_set1_ps(1.0f / 56064));
        U = _mm256_mul_ps(_mm256_sub_ps(U, _mm256_set1_ps(32768.0f)), _mm256_set1_ps(1.0f / 57344));
        V = _mm256_mul_ps(_mm256_sub_ps(V, _mm256_set1_ps(32768.0f)), _mm256_set1_ps(1.0f / 57344));
        __m256 R = lookup8(t->eotf, EOTF_SIZE, _mm256_fmadd_ps(_mm256_set1_ps(k->cr_r), V, Y));
        __m256 G = lookup8(t->eotf, EOTF_SIZE,
                           _mm256_fnmadd_ps(_mm256_set1_ps(k->cr_g), V,
                                            _mm256_fnmadd_ps(_mm256_set1_ps(k->cb_g), U, Y)));
        __m256 B = lookup8(t->eotf, EOTF_SIZE, _mm256_fmadd_ps(_mm256_set1_ps(k->cb_b), U, Y));
        if (k->hlg) {
            __m256 ys = _mm256_fmadd_ps(_mm256_set1_ps(k->kb), B,
                                        _mm256_fmadd_ps(_mm256_set1_ps(k->kg), G,
                                                        _mm256_mul_ps(_mm256_set1_ps(k->kr), R)));
            __m256 o = lookup_log8(t->ootf, ys);
            R = _mm256_mul_ps(R, o);
            G = _mm256_mul_ps(G, o);
            B = _mm256_mul_ps(B, o);
        }
        __m256 r = _mm256_fmadd_ps(m2, B, _mm256_fmadd_ps(m1, G, _mm256_mul_ps(m0, R)));
        __m256 gg = _mm256_fmadd_ps(m5, B, _mm256_fmadd_ps(m4, G, _mm256_mul_ps(m3, R)));
        __m256 b = _mm256_fmadd_ps(m8, B, _mm256_fmadd_ps(m7, G, _mm256_mul_ps(m6, R)));
        __m256 sig = _mm256_max_ps(_mm256_max_ps(r, gg), b);
        __m256 g = lookup_log8(t->gain, _mm256_mul_ps(sig, _mm256_set1_ps(k->inv_domain)));
        g = _mm256_blendv_ps(one, g, _mm256_cmp_ps(sig, zero, _CMP_GT_OQ));
        r = _mm256_mul_ps(r, g);
        gg = _mm256_mul_ps(gg, g);
        b = _mm256_mul_ps(b, g);
        __m256 lo = _mm256_min_ps(_mm256_min_ps(r, gg), b);
        if (_mm256_movemask_ps(_mm256_cmp_ps(lo, zero, _CMP_LT_OQ))) {  // some outside BT.709 (rare): as row_c
            __m256 l = _mm256_fmadd_ps(okb, b, _mm256_fmadd_ps(okg, gg, _mm256_mul_ps(okr, r)));
            __m256 lit = _mm256_cmp_ps(l, zero, _CMP_GT_OQ);
            __m256 outside = _mm256_and_ps(lit, _mm256_cmp_ps(lo, zero, _CMP_LT_OQ));
            __m256 f = _mm256_blendv_ps(one, _mm256_div_ps(l, _mm256_sub_ps(l, lo)), outside);
            r = _mm256_and_ps(lit, _mm256_fmadd_ps(_mm256_sub_ps(r, l), f, l));
            gg = _mm256_and_ps(lit, _mm256_fmadd_ps(_mm256_sub_ps(gg, l), f, l));
            b = _mm256_and_ps(lit, _mm256_fmadd_ps(_mm256_sub_ps(b, l), f, l));
        }
        r = lookup_log8(t->oetf, r);
        gg = lookup_log8(t->oetf, gg);
        b = lookup_log8(t->oetf, b);
        __m256 oy = _mm256_fmadd_ps(okb, b, _mm256_fmadd_ps(okg, gg, _mm256_mul_ps(okr, r)));
        _mm256_storeu_ps(cbr + x, _mm256_mul_ps(_mm256_sub_ps(b, oy), _mm256_set1_ps(k->cb_scale)));
        _mm256_storeu_ps(crr + x, _mm256_mul_ps(_mm256_sub_ps(r, oy), _mm256_set1_ps(k->cr_scale)));
        store8(dy, x, k->depth, _mm256_fmadd_ps(_mm256_set1_ps(k->y_gain), oy, _mm256_set1_ps(k->y_off)), y_max);
    }
    return x;
}

#define TM_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,avx2,fma")))

/// Coefficient `k` of 32 steps (two registers) at `step`: one permute across both.
#define TM_COEF(table, k, base, step) \
    _mm512_permutex2var_ps(_mm512_load_ps(&(table)[k][base]), step, _mm512_load_ps(&(table)[k][(base) + 16]))

/// The EOTF at sixteen signals: the cubic of their step, the fine steps only where some signal is below 1/32.
TM_AVX512 static inline __m512 eotf16(const cz_tonemap *t, __m512 x) {
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_setzero_ps()), _mm512_set1_ps(1));
    __m512 f = _mm512_mul_ps(x, _mm512_set1_ps(32));
    __m512i step = _mm512_min_epi32(_mm512_cvttps_epi32(f), _mm512_set1_epi32(31));
    __m512 u = _mm512_sub_ps(f, _mm512_cvtepi32_ps(step));
    __m512 y = _mm512_fmadd_ps(TM_COEF(t->eotf_poly, 3, 0, step), u, TM_COEF(t->eotf_poly, 2, 0, step));
    y = _mm512_fmadd_ps(y, u, TM_COEF(t->eotf_poly, 1, 0, step));
    y = _mm512_fmadd_ps(y, u, TM_COEF(t->eotf_poly, 0, 0, step));
    __mmask16 fine = _mm512_cmp_ps_mask(x, _mm512_set1_ps(1.0f / 32), _CMP_LT_OQ);
    if (fine) {
        f = _mm512_mul_ps(x, _mm512_set1_ps(1024));
        step = _mm512_min_epi32(_mm512_cvttps_epi32(f), _mm512_set1_epi32(31));
        u = _mm512_sub_ps(f, _mm512_cvtepi32_ps(step));
        __m512 z = _mm512_fmadd_ps(TM_COEF(t->eotf_poly, 3, 32, step), u, TM_COEF(t->eotf_poly, 2, 32, step));
        z = _mm512_fmadd_ps(z, u, TM_COEF(t->eotf_poly, 1, 32, step));
        z = _mm512_fmadd_ps(z, u, TM_COEF(t->eotf_poly, 0, 32, step));
        y = _mm512_mask_blend_ps(fine, y, z);
    }
    return y;
}

/// A per-octave quartic (`oetf_poly`, `ootf_poly`) at sixteen lights 0…1; 2^-32 and below (and NaN) give 0.
TM_AVX512 static inline __m512 octaves16(const float (*poly)[32], __m512 x) {
    __mmask16 lit = _mm512_cmp_ps_mask(x, _mm512_set1_ps(0x1p-32f), _CMP_GT_OQ);
    x = _mm512_min_ps(x, _mm512_set1_ps(0x1.fffffep-1f));
    __m512i step = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_getexp_ps(x)), _mm512_set1_epi32(32));
    step = _mm512_max_epi32(step, _mm512_setzero_si512());
    __m512 u = _mm512_sub_ps(_mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero), _mm512_set1_ps(1));
    __m512 y = _mm512_fmadd_ps(TM_COEF(poly, 4, 0, step), u, TM_COEF(poly, 3, 0, step));
    y = _mm512_fmadd_ps(y, u, TM_COEF(poly, 2, 0, step));
    y = _mm512_fmadd_ps(y, u, TM_COEF(poly, 1, 0, step));
    y = _mm512_fmadd_ps(y, u, TM_COEF(poly, 0, 0, step));
    return _mm512_maskz_mov_ps(lit, y);
}

/// `lookup_log` of sixteen (the tone curve's gain stays a table: its kink at the peak fits no polynomial).
TM_AVX512 static inline __m512 lookup_log16(const tm_entry *table, __m512 x) {
    x = _mm512_max_ps(x, _mm512_setzero_ps());
    __m512i k = _mm512_sub_epi32(_mm512_castps_si512(x), _mm512_set1_epi32(LOG_BASE));
    k = _mm512_min_epi32(_mm512_max_epi32(k, _mm512_setzero_si512()), _mm512_set1_epi32(LOG_SIZE << LOG_SHIFT));
    __m512 w = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_and_si512(k, _mm512_set1_epi32((1 << LOG_SHIFT) - 1))),
                             _mm512_set1_ps(1.0f / (1 << LOG_SHIFT)));
    __m512i i = _mm512_srli_epi32(k, LOG_SHIFT);
    __m512 lo = _mm512_castpd_ps(_mm512_i32gather_pd(_mm512_castsi512_si256(i), (const double *)table, 8));
    __m512 hi = _mm512_castpd_ps(_mm512_i32gather_pd(_mm512_extracti64x4_epi64(i, 1), (const double *)table, 8));
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    __m512 value = _mm512_permutex2var_ps(lo, even, hi);
    __m512 delta = _mm512_permutex2var_ps(lo, _mm512_add_epi32(even, _mm512_set1_epi32(1)), hi);
    return _mm512_fmadd_ps(delta, w, value);
}

TM_AVX512 static inline __m512 load16(const uint16_t *p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)));
}

/// `row_c` sixteen columns at a time (AVX-512); the last few columns are left to the narrower rows.
TM_AVX512 static int row_avx512(const cz_tonemap *t, const row_consts *k, const uint16_t *sy, const uint16_t *su,
                                const uint16_t *sv, uint8_t *dy, float *cbr, float *crr, int x0, int x1) {
    const __m512 zero = _mm512_setzero_ps();
    const __m512 m0 = _mm512_set1_ps(k->m[0]), m1 = _mm512_set1_ps(k->m[1]), m2 = _mm512_set1_ps(k->m[2]);
    const __m512 m3 = _mm512_set1_ps(k->m[3]), m4 = _mm512_set1_ps(k->m[4]), m5 = _mm512_set1_ps(k->m[5]);
    const __m512 m6 = _mm512_set1_ps(k->m[6]), m7 = _mm512_set1_ps(k->m[7]), m8 = _mm512_set1_ps(k->m[8]);
    const __m512 okr = _mm512_set1_ps(k->okr), okg = _mm512_set1_ps(k->okg), okb = _mm512_set1_ps(k->okb);
    const __m512 y_max = _mm512_set1_ps(k->y_max), half = _mm512_set1_ps(0.5f);
    int x = x0;
    for (; x + 16 <= x1; x += 16) {
        __m512 Y = _mm512_mul_ps(_mm512_sub_ps(load16(sy + x), _mm512_set1_ps(4096.0f)), _mm512_set1_ps(1.0f / 56064));
        __m512 U = _mm512_mul_ps(_mm512_sub_ps(load16(su + x), _mm512_set1_ps(32768.0f)), _mm512_set1_ps(1.0f / 57344));
        __m512 V = _mm512_mul_ps(_mm512_sub_ps(load16(sv + x), _mm512_set1_ps(32768.0f)), _mm512_set1_ps(1.0f / 57344));
        __m512 R = eotf16(t, _mm512_fmadd_ps(_mm512_set1_ps(k->cr_r), V, Y));
        __m512 G = eotf16(t, _mm512_fnmadd_ps(_mm512_set1_ps(k->cr_g), V,
                                              _mm512_fnmadd_ps(_mm512_set1_ps(k->cb_g), U, Y)));
        __m512 B = eotf16(t, _mm512_fmadd_ps(_mm512_set1_ps(k->cb_b), U, Y));
        if (k->hlg) {
            __m512 ys = _mm512_fmadd_ps(_mm512_set1_ps(k->kb), B,
                                        _mm512_fmadd_ps(_mm512_set1_ps(k->kg), G,
                                                        _mm512_mul_ps(_mm512_set1_ps(k->kr), R)));
            __m512 o = octaves16(t->ootf_poly, ys);
            R = _mm512_mul_ps(R, o);
            G = _mm512_mul_ps(G, o);
            B = _mm512_mul_ps(B, o);
        }
        __m512 r = _mm512_fmadd_ps(m2, B, _mm512_fmadd_ps(m1, G, _mm512_mul_ps(m0, R)));
        __m512 gg = _mm512_fmadd_ps(m5, B, _mm512_fmadd_ps(m4, G, _mm512_mul_ps(m3, R)));
        __m512 b = _mm512_fmadd_ps(m8, B, _mm512_fmadd_ps(m7, G, _mm512_mul_ps(m6, R)));
        __m512 sig = _mm512_max_ps(_mm512_max_ps(r, gg), b);
        __mmask16 bright = _mm512_cmp_ps_mask(sig, zero, _CMP_GT_OQ);
        __m512 g = lookup_log16(t->gain, _mm512_mul_ps(sig, _mm512_set1_ps(k->inv_domain)));
        r = _mm512_mask_mul_ps(r, bright, r, g);
        gg = _mm512_mask_mul_ps(gg, bright, gg, g);
        b = _mm512_mask_mul_ps(b, bright, b, g);
        __m512 lo = _mm512_min_ps(_mm512_min_ps(r, gg), b);
        __mmask16 negative = _mm512_cmp_ps_mask(lo, zero, _CMP_LT_OQ);
        if (negative) {  // some outside BT.709 (rare): as row_c
            __m512 l = _mm512_fmadd_ps(okb, b, _mm512_fmadd_ps(okg, gg, _mm512_mul_ps(okr, r)));
            __mmask16 lit = _mm512_cmp_ps_mask(l, zero, _CMP_GT_OQ);
            __m512 f = _mm512_mask_div_ps(_mm512_set1_ps(1), lit & negative, l, _mm512_sub_ps(l, lo));
            r = _mm512_maskz_mov_ps(lit, _mm512_fmadd_ps(_mm512_sub_ps(r, l), f, l));
            gg = _mm512_maskz_mov_ps(lit, _mm512_fmadd_ps(_mm512_sub_ps(gg, l), f, l));
            b = _mm512_maskz_mov_ps(lit, _mm512_fmadd_ps(_mm512_sub_ps(b, l), f, l));
        }
        r = octaves16(t->oetf_poly, r);
        gg = octaves16(t->oetf_poly, gg);
        b = octaves16(t->oetf_poly, b);
        __m512 oy = _mm512_fmadd_ps(okb, b, _mm512_fmadd_ps(okg, gg, _mm512_mul_ps(okr, r)));
        _mm512_storeu_ps(cbr + x, _mm512_mul_ps(_mm512_sub_ps(b, oy), _mm512_set1_ps(k->cb_scale)));
        _mm512_storeu_ps(crr + x, _mm512_mul_ps(_mm512_sub_ps(r, oy), _mm512_set1_ps(k->cr_scale)));
        __m512 code = _mm512_fmadd_ps(_mm512_set1_ps(k->y_gain), oy, _mm512_set1_ps(k->y_off));
        code = _mm512_add_ps(_mm512_min_ps(_mm512_max_ps(code, zero), y_max), half);
        __m512i c = _mm512_cvttps_epi32(code);
        if (k->depth == 8) {
            _mm_storeu_si128((__m128i *)(dy + x), _mm512_cvtusepi32_epi8(c));
        } else {
            _mm256_storeu_si256((__m256i *)((uint16_t *)dy + x), _mm512_cvtusepi32_epi16(c));
        }
    }
    return x;
}

#endif

/// 0: plain C, 1: AVX2 and FMA, 2: AVX-512 (F, VL, BW) as well.
int cz_tonemap_cpu_level(void) {
    int f = cz_cpu_features();
    if ((f & (CZ_CPU_AVX2 | CZ_CPU_FMA)) != (CZ_CPU_AVX2 | CZ_CPU_FMA)) return 0;
    return f & CZ_CPU_AVX512 ? 2 : 1;
}

void cz_tonemap_picture(cz_tonemap *t, const uint8_t *const src[3], const ptrdiff_t src_stride[3], int width,
                        int height, uint8_t *const dst[3], const ptrdiff_t dst_stride[3], int depth, int log2w,
                        int log2h, int full_range, int cosited) {
    if (width > t->width) width = t->width;
    const cz_tonemap_params *p = &t->p;
    row_consts k;
    k.kr = p->source_kr;
    k.kb = p->source_kb;
    k.kg = 1 - k.kr - k.kb;
    k.cr_r = 2 * (1 - k.kr);
    k.cb_b = 2 * (1 - k.kb);
    k.cb_g = k.cb_b * k.kb / k.kg;
    k.cr_g = k.cr_r * k.kr / k.kg;
    k.okr = p->output_kr;
    k.okb = p->output_kb;
    k.okg = 1 - k.okr - k.okb;
    k.cb_scale = 1 / (2 * (1 - k.okb));
    k.cr_scale = 1 / (2 * (1 - k.okr));
    memcpy(k.m, p->gamut, sizeof k.m);
    k.inv_domain = 1 / t->domain;
    k.hlg = p->transfer == CZ_TONEMAP_HLG;
    k.depth = depth;
    const float scale = (float)(1 << (depth - 8));
    k.y_off = full_range ? 0 : 16 * scale;
    k.y_gain = full_range ? (float)((1 << depth) - 1) : 219 * scale;
    k.y_max = (float)((1 << depth) - 1);
    const float c_off = 128 * scale, c_gain = full_range ? (float)((1 << depth) - 1) : 224 * scale;
    const int level = cz_tonemap_cpu_level();  // 0 off x86-64
    const int simd = t->simd < level ? t->simd : level;
    const int row = width + ROW_PAD;
    float *cb_rows[2] = {t->chroma + 1, t->chroma + 1 + row};
    float *cr_rows[2] = {t->chroma + 1 + 2 * row, t->chroma + 1 + 3 * row};
    const int rows_per = 1 << log2h;
    const int cw = (width + (1 << log2w) - 1) >> log2w;
    for (int y0 = 0; y0 < height; y0 += rows_per) {
        int rows = y0 + rows_per <= height ? rows_per : height - y0;
        for (int r = 0; r < rows; r++) {
            int yy = y0 + r;
            const uint16_t *sy = (const uint16_t *)(src[0] + yy * src_stride[0]);
            const uint16_t *su = (const uint16_t *)(src[1] + yy * src_stride[1]);
            const uint16_t *sv = (const uint16_t *)(src[2] + yy * src_stride[2]);
            uint8_t *dy = dst[0] + yy * dst_stride[0];
            int x = 0;
#if defined(__x86_64__)
            if (simd >= 2) x = row_avx512(t, &k, sy, su, sv, dy, cb_rows[r], cr_rows[r], 0, width);
            if (simd >= 1) x = row_avx2(t, &k, sy, su, sv, dy, cb_rows[r], cr_rows[r], x, width);
#endif
            row_c(t, &k, sy, su, sv, dy, cb_rows[r], cr_rows[r], x, width);
        }
        float *planes[2] = {cb_rows[0], cr_rows[0]};
        for (int c = 0; c < 2; c++) {
            float *c0 = planes[c];
            if (rows == 2) {  // two rows into one (an odd last row stands alone)
                const float *c1 = c == 0 ? cb_rows[1] : cr_rows[1];
                for (int x = 0; x < width; x++) c0[x] = 0.5f * (c0[x] + c1[x]);
            }
            c0[-1] = c0[0];
            for (int x = width; x < width + ROW_PAD - 1; x++) c0[x] = c0[width - 1];
            uint8_t *d = dst[1 + c] + (y0 >> log2h) * dst_stride[1 + c];
            int cx = 0;
#if defined(__x86_64__)
            if (simd) cx = chroma_avx2(c0, log2w, cosited, cw, d, depth, c_off, c_gain);
#endif
            chroma_c(c0, log2w, cosited, cx, cw, d, depth, c_off, c_gain);
        }
    }
}

float cz_tonemap_curve(int kind, double x, double peak, double white_nits) {
    return (float)curve(kind, x, peak, white_nits);
}
