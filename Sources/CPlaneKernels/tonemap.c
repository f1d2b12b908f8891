// HDR (PQ, HLG) to SDR BT.709: one pass over a 4:4:4 16-bit picture, with every transfer function and the tone
// curve in tables made once: seven table reads and two square roots a pixel, scalar (about 250 instructions by
// callgrind; Benchmarks/README.md "Tone mapping" has its cost and what would make it faster).
#include "CPlaneKernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EOTF_SIZE = 4096, GAIN_SIZE = 4096, OOTF_SIZE = 4096, OETF_SIZE = 4096 };

struct cz_tonemap {
    cz_tonemap_params p;
    /// Source signal (0…1) → linear light, 1.0 = the SDR white (PQ: display light; HLG: scene light, 0…1).
    float eotf[EOTF_SIZE + 1];
    /// HLG only: scene luminance (0…1) → display light / scene light (the OOTF, in SDR-white units).
    float ootf[OOTF_SIZE + 1];
    /// The tone curve as a gain on the brightest component, indexed by sqrt(sig / domain).
    float gain[GAIN_SIZE + 1];
    float domain;
    /// Linear BT.709 display light (0…1) → the BT.709 signal, indexed by the light's square root (the power is
    /// steep near black).
    float oetf[OETF_SIZE + 1];
    /// Two rows of full-resolution chroma (Cb, Cr), for subsampling.
    float *chroma;
    int width;
};

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

cz_tonemap *cz_tonemap_new(const cz_tonemap_params *p, int width) {
    if (width <= 0 || p->white_nits <= 0) return NULL;
    cz_tonemap *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->chroma = malloc(sizeof(float) * 4 * (size_t)(width + 2));
    if (!t->chroma) {
        free(t);
        return NULL;
    }
    t->p = *p;
    t->width = width;
    const double white = p->white_nits;
    for (int i = 0; i <= EOTF_SIZE; i++) {
        double e = (double)i / EOTF_SIZE;
        t->eotf[i] = (float)(p->transfer == CZ_TONEMAP_HLG ? hlg_inverse_oetf(e) : pq_eotf(e) / white);
    }
    // HLG's OOTF (BT.2100): display = Lw · Ys^(γ−1) · scene, γ = 1.2 + 0.42 log10(Lw / 1000).
    double lw = p->transfer == CZ_TONEMAP_HLG ? p->source_peak_nits : 0;
    double gamma = 1.2 + 0.42 * log10(lw > 0 ? lw / 1000 : 1);
    for (int i = 0; i <= OOTF_SIZE; i++) {
        double ys = (double)i / OOTF_SIZE;
        t->ootf[i] = (float)(i == 0 ? 0 : lw / white * pow(ys, gamma - 1));
    }
    double peak = p->source_peak_nits / white;
    t->domain = (float)(p->transfer == CZ_TONEMAP_HLG ? peak : 10000 / white);
    if (t->domain < peak) t->domain = (float)peak;
    for (int i = 0; i <= GAIN_SIZE; i++) {
        double s = (double)i / GAIN_SIZE;
        double x = s * s * t->domain;
        t->gain[i] = (float)(i == 0 ? (peak <= 1 ? 1 : curve(p->curve, 1e-6, peak, white) / 1e-6)
                                    : curve(p->curve, x, peak, white) / x);
    }
    for (int i = 0; i <= OETF_SIZE; i++) {
        double s = (double)i / OETF_SIZE;
        t->oetf[i] = (float)bt1886_inverse_eotf(s * s);
    }
    return t;
}

void cz_tonemap_free(cz_tonemap *t) {
    if (!t) return;
    free(t->chroma);
    free(t);
}

/// `table` (size+1 entries over 0…1) at `x`, linearly interpolated; `x` clamped to 0…1.
static inline float lookup(const float *table, int size, float x) {
    if (!(x > 0)) return table[0];
    if (x >= 1) return table[size];
    float f = x * size;
    int i = (int)f;
    float w = f - (float)i;
    return table[i] + (table[i + 1] - table[i]) * w;
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

void cz_tonemap_picture(cz_tonemap *t, const uint8_t *const src[3], const ptrdiff_t src_stride[3], int width,
                        int height, uint8_t *const dst[3], const ptrdiff_t dst_stride[3], int depth, int log2w,
                        int log2h, int full_range, int cosited) {
    if (width > t->width) width = t->width;
    const cz_tonemap_params *p = &t->p;
    const float kr = p->source_kr, kb = p->source_kb, kg = 1 - kr - kb;
    const float cr_r = 2 * (1 - kr), cb_b = 2 * (1 - kb), cb_g = cb_b * kb / kg, cr_g = cr_r * kr / kg;
    const float okr = p->output_kr, okb = p->output_kb, okg = 1 - okr - okb;
    const float *m = p->gamut;
    const float inv_domain = 1 / t->domain;
    const int hlg = p->transfer == CZ_TONEMAP_HLG;
    const float scale = (float)(1 << (depth - 8));
    const float y_off = full_range ? 0 : 16 * scale, y_gain = full_range ? (float)((1 << depth) - 1) : 219 * scale;
    const float c_off = 128 * scale, c_gain = full_range ? (float)((1 << depth) - 1) : 224 * scale;
    float *cb_rows[2] = {t->chroma, t->chroma + (width + 2)};
    float *cr_rows[2] = {t->chroma + 2 * (width + 2), t->chroma + 3 * (width + 2)};
    const int rows_per = 1 << log2h;
    for (int y0 = 0; y0 < height; y0 += rows_per) {
        int rows = y0 + rows_per <= height ? rows_per : height - y0;
        for (int r = 0; r < rows; r++) {
            int yy = y0 + r;
            const uint16_t *sy = (const uint16_t *)(src[0] + yy * src_stride[0]);
            const uint16_t *su = (const uint16_t *)(src[1] + yy * src_stride[1]);
            const uint16_t *sv = (const uint16_t *)(src[2] + yy * src_stride[2]);
            uint8_t *dy = dst[0] + yy * dst_stride[0];
            float *cbr = cb_rows[r], *crr = cr_rows[r];
            for (int x = 0; x < width; x++) {
                float Y = ((float)sy[x] - 4096.0f) * (1.0f / 56064);
                float U = ((float)su[x] - 32768.0f) * (1.0f / 57344);
                float V = ((float)sv[x] - 32768.0f) * (1.0f / 57344);
                float R = lookup(t->eotf, EOTF_SIZE, Y + cr_r * V);
                float G = lookup(t->eotf, EOTF_SIZE, Y - cb_g * U - cr_g * V);
                float B = lookup(t->eotf, EOTF_SIZE, Y + cb_b * U);
                if (hlg) {
                    float o = lookup(t->ootf, OOTF_SIZE, kr * R + kg * G + kb * B);
                    R *= o;
                    G *= o;
                    B *= o;
                }
                // Into BT.709's primaries first, then the curve on the brightest component (as FFmpeg's tonemap
                // after zscale): the result's brightest is at most 1, so nothing clips and the hue stays.
                float r = m[0] * R + m[1] * G + m[2] * B;
                float gg = m[3] * R + m[4] * G + m[5] * B;
                float b = m[6] * R + m[7] * G + m[8] * B;
                float sig = r > gg ? r : gg;
                sig = sig > b ? sig : b;
                if (sig > 0) {
                    float g = lookup(t->gain, GAIN_SIZE, sqrtf(sig * inv_domain));
                    r *= g;
                    gg *= g;
                    b *= g;
                }
                // Outside BT.709's gamut (a negative component): towards the grey of the same luminance, hue kept.
                float l = okr * r + okg * gg + okb * b;
                float lo = r < gg ? r : gg;
                lo = lo < b ? lo : b;
                if (l <= 0) {
                    r = gg = b = 0;
                } else if (lo < 0) {
                    float k = l / (l - lo);
                    r = l + (r - l) * k;
                    gg = l + (gg - l) * k;
                    b = l + (b - l) * k;
                }
                r = lookup(t->oetf, OETF_SIZE, sqrtf(r));
                gg = lookup(t->oetf, OETF_SIZE, sqrtf(gg));
                b = lookup(t->oetf, OETF_SIZE, sqrtf(b));
                float oy = okr * r + okg * gg + okb * b;
                store(dy, x, depth, y_off + y_gain * oy);
                cbr[x] = (b - oy) / (2 * (1 - okb));
                crr[x] = (r - oy) / (2 * (1 - okr));
            }
        }
        if (rows < rows_per) {  // an odd last row: its chroma stands for the missing one
            memcpy(cb_rows[1], cb_rows[0], sizeof(float) * (size_t)width);
            memcpy(cr_rows[1], cr_rows[0], sizeof(float) * (size_t)width);
        }
        int cy = y0 >> log2h;
        uint8_t *du = dst[1] + cy * dst_stride[1];
        uint8_t *dv = dst[2] + cy * dst_stride[2];
        int cw = (width + (1 << log2w) - 1) >> log2w;
        for (int cx = 0; cx < cw; cx++) {
            float u = 0, v = 0;
            for (int r = 0; r < rows_per; r++) {
                const float *cbr = cb_rows[r], *crr = cr_rows[r];
                if (!log2w) {
                    u += cbr[cx];
                    v += crr[cx];
                } else {
                    int x = 2 * cx;
                    int xl = x > 0 ? x - 1 : 0, xr = x + 1 < width ? x + 1 : x;
                    if (cosited) {  // [1 2 1] / 4 about the sample's own column
                        u += 0.25f * cbr[xl] + 0.5f * cbr[x] + 0.25f * cbr[xr];
                        v += 0.25f * crr[xl] + 0.5f * crr[x] + 0.25f * crr[xr];
                    } else {  // between the two columns
                        u += 0.5f * (cbr[x] + cbr[xr]);
                        v += 0.5f * (crr[x] + crr[xr]);
                    }
                }
            }
            u /= (float)rows_per;
            v /= (float)rows_per;
            store(du, cx, depth, c_off + c_gain * u);
            store(dv, cx, depth, c_off + c_gain * v);
        }
    }
}

float cz_tonemap_curve(int kind, double x, double peak, double white_nits) {
    return (float)curve(kind, x, peak, white_nits);
}
