// Global motion between consecutive frames (issue 29, `--stabilize`): a similarity F_t (frame t -> frame t-1) from a
// robust direct (dense) registration. See CPlaneKernels.h, "Motion estimation".
//
// Method. Each frame is downscaled once to an 8-bit analysis plane (a power-of-two area average), then prepared
// once: a pyramid of 2x2 area averages (float, each level blurred twice by [1 2 1]^2), 4x-scaled int16 copies of the
// two coarsest levels, and per level the strongest-gradient pixels of each 8x8 cell (2 per cell, above a floor: they
// spread over the frame, so a textured moving object gets no more than its area's share) with value and gradient.
// A pair estimate (frame t-1 = prev, frame t = cur):
//  1. the best whole-pixel translation at the coarsest level (truncated absolute differences, +-search px);
//  2. one level finer, whole-pixel + parabola translations of 12 x 8 blocks around it, and two similarity
//     hypotheses: the consensus of the blocks (every pair of blocks gives a candidate; most blocks within 0.3 px
//     wins), and the consensus of the rest (a moving object's motion, or the background's when the object's blocks
//     are the more consistent ones);
//  3. each hypothesis refined by the dense step below down to the next level, where the lower Tukey cost at a
//     common scale picks one (the background's points outnumber a foreground object's);
//  4. inverse-compositional Gauss-Newton on the current frame's points (template) against the previous frame's
//     level (bilinear samples), coarse to fine, for the similarity plus a brightness gain and offset (at the two
//     finest levels), with Tukey weights at 1.4826 x the median |residual| (within [0.5, sigma_max]).
//
// Determinism: every sum runs in one fixed order in double precision, no state survives between calls but the
// context's scratch buffers, and frames are only read by estimates: the result depends on the two frames alone.
#include "CPlaneKernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>   // SSE2 is x86-64's baseline: no dispatch; every SSE2 loop has a plain C twin doing the same
                         // operations in the same order (the same bytes)
#endif
#ifdef CZ_MOTION_DEBUG
#include <stdio.h>
#endif

#define MAX_LEVELS CZ_MOTION_MAX_LEVELS

struct cz_motion_frame {
    cz_motion_geometry g;
    uint8_t *plane;                 // the analysis plane when the frame downscales it itself (aw x ah)
    float *img[MAX_LEVELS];         // level images, w_l x h_l, stride w_l
    float *pts[MAX_LEVELS];         // per point: u, v (centred level px), value, gx, gy
    int npts[MAX_LEVELS];
    int textured;                   // pixels of the finest level above the gradient floor
    double mean, sdev;              // mean and standard deviation of the coarsest level
    int16_t *q[MAX_LEVELS];         // the two coarsest levels x 4, rounded (whole-pixel searches; NULL for others)
    float *rows;                    // max(3, cell) rows of the finest level (the blur, the points' selection)
};

struct cz_motion {
    cz_motion_geometry g;
    int16_t *adj;                   // gain x cur + offset, x 4, at a search level (the second coarsest's size)
    float *res;                     // one residual per point (finest level's count is the largest)
    int max_pts;
};

// MARK: geometry

int cz_motion_factor(int width, int max_width) {
    int k = 1;
    if (max_width < 16) max_width = 16;
    while (width / k > max_width) k *= 2;
    return k;
}

int cz_motion_geometry_init(cz_motion_geometry *g, int width, int height, int factor) {
    if (width < 16 || height < 16 || factor < 1 || (factor & (factor - 1))) return -1;
    memset(g, 0, sizeof *g);
    g->width = width;
    g->height = height;
    g->factor = factor;
    g->analysis_width = width / factor;
    g->analysis_height = height / factor;
    if (g->analysis_width < 16 || g->analysis_height < 16) return -1;
    g->cx = 0.5 * width / factor;
    g->cy = 0.5 * height / factor;
    int w = g->analysis_width, h = g->analysis_height, levels = 1;
    // Coarsest level about 40-80 px wide (and at least 16 px high).
    while (levels < MAX_LEVELS && w / 2 >= 64 && h / 2 >= 24) {
        w /= 2; h /= 2; levels++;
    }
    g->levels = levels;
    g->cell = 8;
    g->per_cell = 2;
    g->gradient_floor = 1.5f;
    g->search = 5;
    g->smooth = 2;
    g->sigma_max = 4.0f;
    g->photometric_levels = 2;
    g->similarity_levels = 3;
    return 0;
}

static void level_size(const cz_motion_geometry *g, int l, int *w, int *h) {
    int ww = g->analysis_width, hh = g->analysis_height;
    for (int i = 0; i < l; i++) { ww /= 2; hh /= 2; }
    *w = ww; *h = hh;
}

static int cells_of(const cz_motion_geometry *g, int l) {
    int w, h;
    level_size(g, l, &w, &h);
    return ((w + g->cell - 1) / g->cell) * ((h + g->cell - 1) / g->cell);
}

// MARK: downscale

void cz_motion_downscale(const cz_motion_geometry *g, const uint8_t *src, ptrdiff_t src_stride, int bytes, int depth,
                         uint8_t *dst, ptrdiff_t dst_stride) {
    const int k = g->factor, aw = g->analysis_width, ah = g->analysis_height;
    const int shift = bytes == 2 ? depth - 8 : 0;
    // sum of k*k samples of `depth` bits, divided by k*k * 2^shift, rounded to nearest
    int log2k = 0;
    while ((1 << log2k) < k) log2k++;
    const int total_shift = 2 * log2k + shift;
    const uint32_t round = total_shift > 0 ? (1u << (total_shift - 1)) : 0;
    if (k == 1 && bytes == 1) {
        for (int y = 0; y < ah; y++) memcpy(dst + (ptrdiff_t)y * dst_stride, src + (ptrdiff_t)y * src_stride, aw);
        return;
    }
    if (k == 2 && bytes == 1) {
        for (int y = 0; y < ah; y++) {
            const uint8_t *a = src + (ptrdiff_t)(2 * y) * src_stride, *b = a + src_stride;
            uint8_t *d = dst + (ptrdiff_t)y * dst_stride;
            for (int x = 0; x < aw; x++) d[x] = (uint8_t)((a[2 * x] + a[2 * x + 1] + b[2 * x] + b[2 * x + 1] + 2) >> 2);
        }
        return;
    }
    // any k, any depth: the k rows summed column by column into a chunk of source columns (on the stack: a
    // multiple of k), then each k columns of the chunk
    enum { CHUNK = 1024 };
    uint32_t col[CHUNK];
    const int per = (CHUNK / k) * k;   // source columns a chunk
    for (int y = 0; y < ah; y++) {
        uint8_t *d = dst + (ptrdiff_t)y * dst_stride;
        for (int c0 = 0; c0 < aw * k; c0 += per) {
            const int nc = aw * k - c0 < per ? aw * k - c0 : per;
            memset(col, 0, sizeof(uint32_t) * nc);
            for (int j = 0; j < k; j++) {
                const uint8_t *row = src + (ptrdiff_t)(y * k + j) * src_stride;
                if (bytes == 1) {
                    const uint8_t *p = row + c0;
                    for (int i = 0; i < nc; i++) col[i] += p[i];
                } else {
                    const uint8_t *p = row + (ptrdiff_t)c0 * 2;
                    for (int i = 0; i < nc; i++) col[i] += (uint32_t)p[2 * i] | ((uint32_t)p[2 * i + 1] << 8);
                }
            }
            for (int x = 0; x < nc / k; x++) {
                uint32_t s = 0;
                for (int i = 0; i < k; i++) s += col[x * k + i];
                const uint32_t v = (s + round) >> total_shift;
                d[c0 / k + x] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
    }
}

// MARK: frames

void cz_motion_frame_free(cz_motion_frame *f) {
    if (!f) return;
    free(f->plane);
    for (int l = 0; l < MAX_LEVELS; l++) { free(f->img[l]); free(f->pts[l]); free(f->q[l]); }
    free(f->rows);
    free(f);
}

cz_motion_frame *cz_motion_frame_new(const cz_motion_geometry *g) {
    cz_motion_frame *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->g = *g;
    int ok = 1;
    f->plane = malloc((size_t)g->analysis_width * g->analysis_height);
    ok &= f->plane != NULL;
    for (int l = 0; l < g->levels; l++) {
        int w, h;
        level_size(g, l, &w, &h);
        f->img[l] = malloc(sizeof(float) * (size_t)w * h);
        f->pts[l] = malloc(sizeof(float) * 5 * (size_t)cells_of(g, l) * g->per_cell);
        ok &= f->img[l] && f->pts[l];
        if (l >= g->levels - 2) {
            f->q[l] = malloc(sizeof(int16_t) * (size_t)w * h);
            ok &= f->q[l] != NULL;
        }
    }
    f->rows = malloc(sizeof(float) * (size_t)(g->cell > 3 ? g->cell : 3) * g->analysis_width);
    ok &= f->rows != NULL;
    if (!ok) { cz_motion_frame_free(f); return NULL; }
    return f;
}

/// Up to per_cell pixels of each cell with the largest gradient (at least the floor), in cell order, then by
/// descending gradient (ties: the earlier pixel in raster order). Returns the number of textured pixels seen.
static int select_points(cz_motion_frame *f, int l) {
    const cz_motion_geometry *g = &f->g;
    int w, h;
    level_size(g, l, &w, &h);
    const float *im = f->img[l];
    const float floor2 = g->gradient_floor * g->gradient_floor;
    const double scale = 1.0 / (double)(1 << l);
    const double cx = g->cx * scale, cy = g->cy * scale;
    const int cell = g->cell, K = g->per_cell;
    const int margin = 2;
    float *out = f->pts[l];
    float *g2 = f->rows;   // one band of `cell` rows of squared gradients (w x cell)
    int n = 0, textured = 0;
    for (int y0 = 0; y0 < h; y0 += cell) {
        const int ys = y0 > margin ? y0 : margin;
        const int ye = y0 + cell < h - margin ? y0 + cell : h - margin;
        // the band's squared gradients (0 outside the margin), and the textured count
        for (int y = y0; y < y0 + cell && y < h; y++) {
            float *gr = g2 + (size_t)(y - y0) * w;
            if (y < ys || y >= ye) { memset(gr, 0, sizeof(float) * w); continue; }
            const float *r = im + (size_t)y * w;
            gr[0] = gr[1] = gr[w - 2] = gr[w - 1] = 0;
            int x = margin;
#if defined(__SSE2__)
            const __m128 half = _mm_set1_ps(0.5f), fl = _mm_set1_ps(floor2);
            for (; x + 4 <= w - margin; x += 4) {
                const __m128 gx = _mm_mul_ps(half, _mm_sub_ps(_mm_loadu_ps(r + x + 1), _mm_loadu_ps(r + x - 1)));
                const __m128 gy = _mm_mul_ps(half, _mm_sub_ps(_mm_loadu_ps(r + x + w), _mm_loadu_ps(r + x - w)));
                const __m128 v = _mm_add_ps(_mm_mul_ps(gx, gx), _mm_mul_ps(gy, gy));
                _mm_storeu_ps(gr + x, _mm_and_ps(v, _mm_cmpge_ps(v, fl)));
            }
#endif
            for (; x < w - margin; x++) {
                const float gx = 0.5f * (r[x + 1] - r[x - 1]);
                const float gy = 0.5f * (r[x + w] - r[x - w]);
                const float v = gx * gx + gy * gy;
                gr[x] = v >= floor2 ? v : 0;
            }
            for (int xx = margin; xx < w - margin; xx++) textured += gr[xx] > 0;
        }
        const int rows = y0 + cell < h ? cell : h - y0;
        for (int x0 = 0; x0 < w; x0 += cell) {
            const int cols = x0 + cell < w ? cell : w - x0;
            for (int k = 0; k < K; k++) {
                float best = 0;
                int bi = -1;
                for (int yy = 0; yy < rows; yy++) {
                    const float *gr = g2 + (size_t)yy * w + x0;
                    for (int xx = 0; xx < cols; xx++)
                        if (gr[xx] > best) { best = gr[xx]; bi = yy * w + x0 + xx; }
                }
                if (bi < 0) break;
                g2[bi] = 0;
                const int x = bi % w, y = y0 + bi / w, i = y * w + x;
                float *p = out + 5 * (size_t)n++;
                p[0] = (float)(x + 0.5 - cx);
                p[1] = (float)(y + 0.5 - cy);
                p[2] = im[i];
                p[3] = 0.5f * (im[i + 1] - im[i - 1]);
                p[4] = 0.5f * (im[i + w] - im[i - w]);
            }
        }
    }
    f->npts[l] = n;
    return textured;
}

/// A [1 2 1] x [1 2 1] / 16 blur of a level image in place (edges replicated), through the frame's row scratch.
static void blur_level(cz_motion_frame *f, int l) {
    int w, h;
    level_size(&f->g, l, &w, &h);
    float *im = f->img[l];
    float *a = f->rows, *b = f->rows + w, *c = f->rows + 2 * w;   // the previous source row, this one, a result
    for (int y = 0; y < h; y++) {
        float *r = im + (size_t)y * w;
        const float *up = y > 0 ? a : r, *down = y + 1 < h ? r + w : r;
        int x = 0;
#if defined(__SSE2__)
        const __m128 two = _mm_set1_ps(2), k16 = _mm_set1_ps(1.0f / 16);
        for (; x + 4 <= w; x += 4)
            _mm_storeu_ps(c + x, _mm_add_ps(_mm_add_ps(_mm_loadu_ps(up + x), _mm_mul_ps(two, _mm_loadu_ps(r + x))),
                                            _mm_loadu_ps(down + x)));
#endif
        for (; x < w; x++) c[x] = up[x] + 2 * r[x] + down[x];
        memcpy(a, r, sizeof(float) * w);
        (void)b;
        r[0] = (c[0] + 2 * c[0] + c[1 < w ? 1 : 0]) * (1.0f / 16);
        x = 1;
#if defined(__SSE2__)
        for (; x + 5 <= w; x += 4)
            _mm_storeu_ps(r + x, _mm_mul_ps(_mm_add_ps(_mm_add_ps(_mm_loadu_ps(c + x - 1),
                                                                  _mm_mul_ps(two, _mm_loadu_ps(c + x))),
                                                       _mm_loadu_ps(c + x + 1)), k16));
#endif
        for (; x < w; x++) {
            const float lft = c[x - 1], rgt = c[x + 1 < w ? x + 1 : w - 1];
            r[x] = (lft + 2 * c[x] + rgt) * (1.0f / 16);
        }
    }
}

int cz_motion_frame_prepare(cz_motion_frame *f, const uint8_t *plane, ptrdiff_t stride) {
    const cz_motion_geometry *g = &f->g;
    const int aw = g->analysis_width, ah = g->analysis_height;
    float *im0 = f->img[0];
    for (int y = 0; y < ah; y++) {
        const uint8_t *s = plane + (ptrdiff_t)y * stride;
        for (int x = 0; x < aw; x++) im0[(size_t)y * aw + x] = s[x];
    }
    for (int l = 1; l < g->levels; l++) {
        int pw, ph, w, h;
        level_size(g, l - 1, &pw, &ph);
        level_size(g, l, &w, &h);
        const float *p = f->img[l - 1];
        float *d = f->img[l];
        for (int y = 0; y < h; y++) {
            const float *a = p + (size_t)(2 * y) * pw, *b = a + pw;
            for (int x = 0; x < w; x++)
                d[(size_t)y * w + x] = 0.25f * ((a[2 * x] + a[2 * x + 1]) + (b[2 * x] + b[2 * x + 1]));
        }
    }
    for (int pass = 0; pass < g->smooth; pass++)
        for (int l = 0; l < g->levels; l++) blur_level(f, l);
    for (int l = 0; l < g->levels; l++) {
        if (!f->q[l]) continue;
        int w, h;
        level_size(g, l, &w, &h);
        for (size_t i = 0; i < (size_t)w * h; i++) f->q[l][i] = (int16_t)lrintf(4 * f->img[l][i]);
    }
    int textured = 0;
    for (int l = 0; l < g->levels; l++) {
        if (l == g->levels - 1 && l > 0) { f->npts[l] = 0; continue; }   // the coarsest level is only searched
        int t = select_points(f, l);
        if (l == 0) textured = t;
    }
    f->textured = textured;
    int w, h;
    level_size(g, g->levels - 1, &w, &h);
    double s = 0, s2 = 0;
    for (size_t i = 0; i < (size_t)w * h; i++) {
        const double v = f->img[g->levels - 1][i];
        s += v; s2 += v * v;
    }
    f->mean = s / ((double)w * h);
    const double var = s2 / ((double)w * h) - f->mean * f->mean;
    f->sdev = var > 0 ? sqrt(var) : 0;
    return f->npts[0];
}

int cz_motion_frame_prepare_luma(cz_motion_frame *f, const uint8_t *src, ptrdiff_t src_stride, int bytes,
                                 int depth) {
    cz_motion_downscale(&f->g, src, src_stride, bytes, depth, f->plane, f->g.analysis_width);
    return cz_motion_frame_prepare(f, f->plane, f->g.analysis_width);
}

const uint8_t *cz_motion_frame_plane(const cz_motion_frame *f) { return f->plane; }

// MARK: estimation

cz_motion *cz_motion_new(const cz_motion_geometry *g) {
    cz_motion *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->g = *g;
    int mx = 0;
    for (int l = 0; l < g->levels; l++) {
        int c = cells_of(g, l) * g->per_cell;
        if (c > mx) mx = c;
    }
    m->max_pts = mx;
    m->res = malloc(sizeof(float) * (size_t)mx);
    int w, h;
    level_size(g, g->levels >= 2 ? g->levels - 2 : 0, &w, &h);
    m->adj = malloc(sizeof(int16_t) * (size_t)w * h);
    if (!m->res || !m->adj) { free(m->res); free(m->adj); free(m); return NULL; }
    return m;
}

void cz_motion_free(cz_motion *m) {
    if (!m) return;
    free(m->res);
    free(m->adj);
    free(m);
}

/// Bilinear sample at pixel-index position (x, y); 0 when the 2x2 footprint leaves the image.
static inline int sample(const float *im, int w, int h, double x, double y, float *out) {
    if (!(x >= 0 && y >= 0 && x < w - 1 && y < h - 1)) return 0;
    const int xi = (int)x, yi = (int)y;
    const float fx = (float)(x - xi), fy = (float)(y - yi);
    const float *p = im + (size_t)yi * w + xi;
    const float top = p[0] + fx * (p[1] - p[0]);
    const float bot = p[w] + fx * (p[w + 1] - p[w]);
    *out = top + fy * (bot - top);
    return 1;
}

/// Solves the n x n symmetric system A x = b (Cholesky, A row-major, overwritten). 0 when not positive definite
/// or when a pivot is below `rel` times its diagonal entry (a direction the data does not constrain).
static int solve_spd(double *A, double *b, int n, double rel) {
    for (int j = 0; j < n; j++) {
        double d = A[j * n + j];
        const double diag = d;
        for (int k = 0; k < j; k++) d -= A[j * n + k] * A[j * n + k];
        if (!(d > rel * diag) || !(diag > 0)) return 0;
        d = sqrt(d);
        A[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double s = A[i * n + j];
            for (int k = 0; k < j; k++) s -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = s / d;
        }
    }
    for (int i = 0; i < n; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++) s -= A[i * n + k] * b[k];
        b[i] = s / A[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < n; k++) s -= A[k * n + i] * b[k];
        b[i] = s / A[i * n + i];
    }
    return 1;
}

/// Median of |r| over the valid residuals, from a histogram of 1/64-level bins up to 64 levels.
#define HIST_BINS 4096
static double median_abs(const float *res, int n, int valid, int every) {
    unsigned hist[HIST_BINS];
    memset(hist, 0, sizeof hist);
    for (int i = 0; i < n; i += every) {
        const float r = res[i];
        if (r != r) continue;
        int b = (int)(fabsf(r) * 64.0f);
        hist[b < HIST_BINS ? b : HIST_BINS - 1]++;
    }
    const unsigned half = (unsigned)(valid + 1) / 2;
    unsigned acc = 0;
    for (int b = 0; b < HIST_BINS; b++) {
        if (acc + hist[b] >= half) {
            const double frac = hist[b] ? (double)(half - acc) / hist[b] : 0.5;
            return (b + frac) / 64.0;
        }
        acc += hist[b];
    }
    return HIST_BINS / 64.0;
}

/// The state of one estimate: F(z) = A z + t (complex, z = u + i v, centred coordinates of level `level`) and the
/// brightness prev ~ gain * cur + offset.
typedef struct {
    double ar, ai, tr, ti, gain, offset;
    int level;
    double sigma, inlier_share, cost;
    int inliers, iterations, failed;
} state;

static void to_level(state *s, int l) {
    while (s->level > l) { s->tr *= 2; s->ti *= 2; s->level--; }
    while (s->level < l) { s->tr *= 0.5; s->ti *= 0.5; s->level++; }
}

/// Residuals r = prev(F(x)) - (gain cur(x) + offset) of the current frame's points at level l into ctx->res
/// (NaN outside); the number inside.
static int residuals_every(cz_motion *ctx, const cz_motion_frame *prev, const cz_motion_frame *cur, int l,
                           const state *s, int every) {
    int w, h;
    level_size(&ctx->g, l, &w, &h);
    const double scale = 1.0 / (double)(1 << l);
    const double ox = ctx->g.cx * scale - 0.5, oy = ctx->g.cy * scale - 0.5;
    const float *im = prev->img[l];
    const float *pts = cur->pts[l];
    const int n = cur->npts[l];
    int valid = 0;
    for (int i = 0; i < n; i += every) {
        const float *p = pts + 5 * (size_t)i;
        const double u = p[0], v = p[1];
        const double x = s->ar * u - s->ai * v + s->tr + ox, y = s->ai * u + s->ar * v + s->ti + oy;
        float sv;
        if (sample(im, w, h, x, y, &sv)) {
            ctx->res[i] = (float)(sv - (s->gain * p[2] + s->offset));
            valid++;
        } else {
            ctx->res[i] = NAN;
        }
    }
    return valid;
}


/// Tukey's cost at scale `sigma` of the residuals in ctx->res, per point inside (points outside count as outliers).
static double tukey_cost(const cz_motion *ctx, int n, double sigma, int every) {
    const double c2 = 4.685 * 4.685 * sigma * sigma, top = c2 / 6;
    double sum = 0;
    for (int i = 0; i < n; i += every) {
        const float r = ctx->res[i];
        if (r != r) { sum += top; continue; }
        const double q = (double)r * r / c2;
        sum += q >= 1 ? top : top * (1 - (1 - q) * (1 - q) * (1 - q));
    }
    return n ? sum * every / n : top;
}

/// Gauss-Newton iterations at level l from s (inverse compositional, Tukey weights at 1.4826 x the median |r|,
/// within [0.5, sigma_max]). Sets s->failed when the points do not constrain the motion.
static void refine_level(cz_motion *ctx, const cz_motion_frame *prev, const cz_motion_frame *cur, int l, state *s,
                         int max_iter, int every) {
    const cz_motion_geometry *g = &ctx->g;
    to_level(s, l);
    const double scale = 1.0 / (double)(1 << l);
    const double cx = g->cx * scale, cy = g->cy * scale;
    const double rmax = cx > cy ? cx : cy;
    const float *pts = cur->pts[l];
    const int n = cur->npts[l];
    for (int it = 0; it < max_iter; it++) {
        s->iterations++;
        const int valid = residuals_every(ctx, prev, cur, l, s, every);
        if (valid < 16) { s->failed = 1; return; }
        double sg = 1.4826 * median_abs(ctx->res, n, valid, every);
        if (sg < 0.5) sg = 0.5;
        if (sg > g->sigma_max) sg = g->sigma_max;
        s->sigma = sg;
        const double c = 4.685 * sg, ic2 = 1.0 / (c * c);
        double A[36], b[6];
        memset(A, 0, sizeof A);
        memset(b, 0, sizeof b);
        int in = 0;
        for (int i = 0; i < n; i += every) {
            const float r = ctx->res[i];
            if (r != r) continue;
            const double q = 1.0 - (double)r * r * ic2;
            if (q <= 0) continue;
            const double wt = q * q;
            in++;
            const float *p = pts + 5 * (size_t)i;
            const double u = p[0], v = p[1], gx = s->gain * p[3], gy = s->gain * p[4];
            const double K[6] = { gx * u + gy * v, -gx * v + gy * u, gx, gy, p[2], 1.0 };
            for (int j = 0; j < 6; j++) {
                const double wk = wt * K[j];
                b[j] += wk * r;
                for (int k = 0; k <= j; k++) A[j * 6 + k] += wk * K[k];
            }
        }
        for (int j = 0; j < 6; j++)
            for (int k = j + 1; k < 6; k++) A[j * 6 + k] = A[k * 6 + j];
        s->inlier_share = (double)in / valid;
        s->inliers = in;
        // the rotation/scale columns scaled by the frame's half size (conditioning)
        const double Ds[6] = { rmax, rmax, 1, 1, 1, 1 };
        double As[36], bs[6];
        for (int j = 0; j < 6; j++) {
            bs[j] = b[j] / Ds[j];
            for (int k = 0; k < 6; k++) As[j * 6 + k] = A[j * 6 + k] / (Ds[j] * Ds[k]);
        }
        // brightness estimated at the finest levels only (at the coarse ones it trades against misalignment);
        // translation only at the coarse levels (rotation and scale are small between frames, and a few hundred
        // blurred points would trade them against a moving object)
        const int photometric = l < g->photometric_levels, similarity = l < g->similarity_levels;
        for (int j = 0; j < 6; j++) {
            const int off = (j >= 4 && !photometric) || (j < 2 && !similarity);
            if (!off) continue;
            for (int k = 0; k < 6; k++) As[j * 6 + k] = As[k * 6 + j] = 0;
            As[j * 6 + j] = 1;
            bs[j] = 0;
        }
        if (in < 16 || !solve_spd(As, bs, 6, 1e-9)) { s->failed = 1; return; }
        double d[6];
        for (int j = 0; j < 6; j++) d[j] = bs[j] / Ds[j];
        s->gain += d[4];
        s->offset += d[5];
        // F <- F o D^-1 with D(z) = (1 + da + i db) z + (dtx + i dty): A <- A / D, t <- t - (A / D) dt
        const double dr = 1 + d[0], di = d[1];
        const double dn = dr * dr + di * di;
        const double qr = (s->ar * dr + s->ai * di) / dn, qi = (s->ai * dr - s->ar * di) / dn;
        s->ar = qr; s->ai = qi;
        s->tr -= qr * d[2] - qi * d[3];
        s->ti -= qr * d[3] + qi * d[2];
        const double step = (fabs(d[0]) + fabs(d[1])) * rmax + fabs(d[2]) + fabs(d[3]);
#ifdef CZ_MOTION_DEBUG
        fprintf(stderr, "l%d it%d n%d sg %.2f in %.2f step %.5f  F %.5f %.5f %.3f %.3f g %.3f o %.2f\n", l, it, n, sg,
                s->inlier_share, step, s->ar, s->ai, s->tr, s->ti, s->gain, s->offset);
#endif
        if (step < 1e-3) break;
    }
}

#define STARTS 3

/// sum over x < n of min(|a[x] - b[x]|, 64) (quarter grey levels: 16 levels). SSE2 where there is (the same sum).
static int64_t sad_row(const int16_t *a, const int16_t *b, int n) {
    int64_t sum = 0;
    int x = 0;
#if defined(__SSE2__)
    const __m128i cap = _mm_set1_epi16(64), one = _mm_set1_epi16(1), zero = _mm_setzero_si128();
    __m128i acc = zero;
    for (; x + 8 <= n; x += 8) {
        const __m128i d = _mm_sub_epi16(_mm_loadu_si128((const __m128i *)(a + x)),
                                        _mm_loadu_si128((const __m128i *)(b + x)));
        const __m128i ad = _mm_min_epi16(_mm_max_epi16(d, _mm_sub_epi16(zero, d)), cap);
        acc = _mm_add_epi32(acc, _mm_madd_epi16(ad, one));
    }
    int32_t lanes[4];
    _mm_storeu_si128((__m128i *)lanes, acc);
    sum = (int64_t)lanes[0] + lanes[1] + lanes[2] + lanes[3];
#endif
    for (; x < n; x++) {
        int d = a[x] - b[x];
        d = d < 0 ? -d : d;
        sum += d < 64 ? d : 64;
    }
    return sum;
}

/// ctx->adj = gain x cur + offset (x 4, rounded, clamped to int16) at level l.
static void adjust_level(cz_motion *ctx, const cz_motion_frame *cur, int l, const state *s0) {
    int w, h;
    level_size(&ctx->g, l, &w, &h);
    const float gain = (float)s0->gain, off = (float)(4 * s0->offset);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        float v = gain * cur->q[l][i] + off;
        v = v < -32000 ? -32000 : v > 32000 ? 32000 : v;
        ctx->adj[i] = (int16_t)lrintf(v);
    }
}

/// Whole-pixel translations at the coarsest level: the mean of min(|cur(x) + offset - prev(x + d)|, 16) over the
/// pixels whose both samples are inside, for every shift d within +-R (a small preference for small shifts); the
/// STARTS lowest local minima (over the 8 neighbours), best first (ties: raster order from (-R, -R)). Returns how
/// many.
static int coarse_search(cz_motion *ctx, const cz_motion_frame *prev, const cz_motion_frame *cur, const state *s0,
                         int R, int sx[STARTS], int sy[STARTS]) {
    const int l = ctx->g.levels - 1, side = 2 * R + 1;
    int w, h;
    level_size(&ctx->g, l, &w, &h);
    adjust_level(ctx, cur, l, s0);
    const int16_t *a = ctx->adj, *b = prev->q[l];
    double cost[(2 * 16 + 1) * (2 * 16 + 1)];
    for (int dy = -R; dy <= R; dy++) {
        for (int dx = -R; dx <= R; dx++) {
            const int x0 = dx < 0 ? -dx : 0, x1 = dx > 0 ? w - dx : w;
            const int y0 = dy < 0 ? -dy : 0, y1 = dy > 0 ? h - dy : h;
            int64_t sum = 0;
            for (int y = y0; y < y1; y++)
                sum += sad_row(a + (size_t)y * w + x0, b + (size_t)(y + dy) * w + dx + x0, x1 - x0);
            const double cnt = (double)(x1 - x0) * (y1 - y0);
            cost[(dy + R) * side + dx + R] = (cnt > 0 ? 0.25 * (double)sum / cnt : 16.0) + 1e-3 * (abs(dx) + abs(dy));
        }
    }
    double best[STARTS];
    int m = 0;
    for (int y = 0; y < side; y++) {
        for (int x = 0; x < side; x++) {
            const double c = cost[y * side + x];
            int minimum = 1;
            for (int j = -1; j <= 1 && minimum; j++)
                for (int i = -1; i <= 1; i++) {
                    if (!i && !j) continue;
                    const int xx = x + i, yy = y + j;
                    if (xx < 0 || yy < 0 || xx >= side || yy >= side) continue;
                    const double o = cost[yy * side + xx];
                    if (o < c || (o == c && yy * side + xx < y * side + x)) { minimum = 0; break; }
                }
            if (!minimum) continue;
            if (m == STARTS && c >= best[STARTS - 1]) continue;
            int k = m < STARTS ? m++ : STARTS - 1;
            while (k > 0 && best[k - 1] > c) { best[k] = best[k - 1]; sx[k] = sx[k - 1]; sy[k] = sy[k - 1]; k--; }
            best[k] = c; sx[k] = x - R; sy[k] = y - R;
        }
    }
    return m;
}

#define BLOCKS_X 12
#define BLOCKS_Y 8
#define NBLOCKS (BLOCKS_X * BLOCKS_Y)
#define BLOCK_R 5

typedef struct { double zr, zi, wr, wi; } match;   // a block's centre in the current frame and in the previous one

/// Local translations of a BLOCKS_X x BLOCKS_Y grid of blocks at level l: for each block of the current frame the
/// whole-pixel shift d within +-BLOCK_R of (cx0, cy0) minimising the mean of min(|gain cur(x) + offset - prev(x + d)|,
/// 16) (ties: raster order), then a parabola through the neighbours for the fraction. Blocks whose cost hardly
/// rises away from the minimum (no texture, or texture along one direction only) are left out. Returns how many
/// matches were written.
static int block_matches(cz_motion *ctx, const cz_motion_frame *prev, const cz_motion_frame *cur, int l,
                         const state *s0, int cx0, int cy0, match *out) {
    const cz_motion_geometry *g = &cur->g;
    int w, h;
    level_size(g, l, &w, &h);
    adjust_level(ctx, cur, l, s0);
    const int16_t *a = ctx->adj, *b = prev->q[l];
    const double scale = 1.0 / (double)(1 << l);
    const double ccx = g->cx * scale, ccy = g->cy * scale;
    const int bw = w / BLOCKS_X, bh = h / BLOCKS_Y, side = 2 * BLOCK_R + 1;
    int m = 0;
    double cost[(2 * BLOCK_R + 1) * (2 * BLOCK_R + 1)];
    for (int by = 0; by < BLOCKS_Y; by++) {
        for (int bx = 0; bx < BLOCKS_X; bx++) {
            const int x0 = bx * bw, y0 = by * bh;
            for (int j = -BLOCK_R; j <= BLOCK_R; j++) {
                for (int i = -BLOCK_R; i <= BLOCK_R; i++) {
                    const int dx = cx0 + i, dy = cy0 + j;
                    int xs = x0, xe = x0 + bw, ys = y0, ye = y0 + bh;
                    if (xs + dx < 0) xs = -dx;
                    if (xe + dx > w) xe = w - dx;
                    if (ys + dy < 0) ys = -dy;
                    if (ye + dy > h) ye = h - dy;
                    int64_t sum = 0;
                    int cnt = 0;
                    for (int y = ys; y < ye && xe > xs; y++) {
                        sum += sad_row(a + (size_t)y * w + xs, b + (size_t)(y + dy) * w + xs + dx, xe - xs);
                        cnt += xe - xs;
                    }
                    cost[(j + BLOCK_R) * side + i + BLOCK_R] = cnt * 2 >= bw * bh ? 0.25 * (double)sum / cnt : 1e30;
                }
            }
            int bi = 0;
            for (int k = 1; k < side * side; k++)
                if (cost[k] < cost[bi]) bi = k;
            const int ix = bi % side, iy = bi / side;
            if (ix == 0 || iy == 0 || ix == side - 1 || iy == side - 1) continue;   // at the search's edge
            const double c0 = cost[bi];
            const double cl = cost[bi - 1], cr = cost[bi + 1], cu = cost[bi - side], cd = cost[bi + side];
            if (cl >= 1e29 || cr >= 1e29 || cu >= 1e29 || cd >= 1e29) continue;
            // texture in both directions: the cost must rise by a clear step either way
            const double rise = 0.5;
            if (cl - c0 < rise || cr - c0 < rise || cu - c0 < rise || cd - c0 < rise) continue;
            const double fx = 0.5 * (cl - cr) / (cl + cr - 2 * c0), fy = 0.5 * (cu - cd) / (cu + cd - 2 * c0);
            const double zx = x0 + 0.5 * bw - ccx, zy = y0 + 0.5 * bh - ccy;   // centred, level px
            out[m].zr = zx; out[m].zi = zy;
            out[m].wr = zx + cx0 + (ix - BLOCK_R) + fx;
            out[m].wi = zy + cy0 + (iy - BLOCK_R) + fy;
            m++;
        }
    }
    return m;
}

/// The similarity w = A z + t that most block matches agree with (within `thr` level px): every pair of matches
/// gives one (scale within 0.95-1.05, angle within 3 degrees); the most inliers wins, then the least squared error,
/// then the first pair. Matches flagged in `skip` are not counted (a second hypothesis is the consensus of the
/// first's outliers). Then a least-squares fit on its inliers, which are flagged in `inl`. Returns the inliers.
static int consensus(const match *mt, int n, double thr, const unsigned char *skip, unsigned char *inl, state *s) {
    int best_in = 0;
    double best_err = 0, br = 1, bi = 0, btr = 0, bti = 0;
    const double t2 = thr * thr;
    for (int i = 0; i < n; i++) {
        if (skip[i]) continue;
        for (int j = i + 1; j < n; j++) {
            if (skip[j]) continue;
            const double dzr = mt[j].zr - mt[i].zr, dzi = mt[j].zi - mt[i].zi;
            const double dwr = mt[j].wr - mt[i].wr, dwi = mt[j].wi - mt[i].wi;
            const double dn = dzr * dzr + dzi * dzi;
            if (dn < 1e-9) continue;
            const double ar = (dwr * dzr + dwi * dzi) / dn, ai = (dwi * dzr - dwr * dzi) / dn;
            const double sc2 = ar * ar + ai * ai;
            if (sc2 < 0.9 || sc2 > 1.1 || fabs(ai) > 0.05) continue;
            const double tr = mt[i].wr - (ar * mt[i].zr - ai * mt[i].zi);
            const double ti = mt[i].wi - (ai * mt[i].zr + ar * mt[i].zi);
            int in = 0;
            double err = 0;
            for (int k = 0; k < n; k++) {
                if (skip[k]) continue;
                const double ex = ar * mt[k].zr - ai * mt[k].zi + tr - mt[k].wr;
                const double ey = ai * mt[k].zr + ar * mt[k].zi + ti - mt[k].wi;
                const double e2 = ex * ex + ey * ey;
                if (e2 < t2) { in++; err += e2; }
            }
            if (in > best_in || (in == best_in && err < best_err)) {
                best_in = in; best_err = err; br = ar; bi = ai; btr = tr; bti = ti;
            }
        }
    }
    if (best_in < 3) return 0;
    // least squares on the inliers: unknowns (a, b, tx, ty)
    double A[16], b[4];
    memset(A, 0, sizeof A);
    memset(b, 0, sizeof b);
    for (int k = 0; k < n; k++) {
        inl[k] = 0;
        if (skip[k]) continue;
        const double ex = br * mt[k].zr - bi * mt[k].zi + btr - mt[k].wr;
        const double ey = bi * mt[k].zr + br * mt[k].zi + bti - mt[k].wi;
        if (ex * ex + ey * ey >= t2) continue;
        inl[k] = 1;
        const double u = mt[k].zr, v = mt[k].zi;
        const double r1[4] = { u, -v, 1, 0 }, r2[4] = { v, u, 0, 1 };
        for (int p = 0; p < 4; p++) {
            b[p] += r1[p] * mt[k].wr + r2[p] * mt[k].wi;
            for (int q = 0; q < 4; q++) A[p * 4 + q] += r1[p] * r1[q] + r2[p] * r2[q];
        }
    }
    if (solve_spd(A, b, 4, 1e-12)) { br = b[0]; bi = b[1]; btr = b[2]; bti = b[3]; }
    s->ar = br; s->ai = bi; s->tr = btr; s->ti = bti;
    return best_in;
}

int cz_motion_estimate(cz_motion *ctx, const cz_motion_frame *prev, const cz_motion_frame *cur, double out[4],
                       cz_motion_stats *stats) {
    const cz_motion_geometry *g = &ctx->g;
    cz_motion_stats st;
    memset(&st, 0, sizeof st);
    out[0] = 1; out[1] = 0; out[2] = 0; out[3] = 0;
    st.points = cur->npts[0];
    st.status = CZ_MOTION_NO_TEXTURE;
    const int min_textured = g->analysis_width * g->analysis_height / 400 > 64
        ? g->analysis_width * g->analysis_height / 400 : 64;
    if (prev->textured < min_textured || cur->textured < min_textured || cur->npts[0] < 32) {
        if (stats) *stats = st;
        return CZ_MOTION_NO_TEXTURE;
    }
    const int L = g->levels;
    state s;
    memset(&s, 0, sizeof s);
    s.ar = 1;
    s.level = L - 1;
    // brightness first from the coarsest level's statistics (a fade's change)
    s.gain = cur->sdev > 1e-3 ? prev->sdev / cur->sdev : 1;
    if (s.gain < 0.5) s.gain = 0.5;
    if (s.gain > 2) s.gain = 2;
    s.offset = prev->mean - s.gain * cur->mean;
    // 1. the best whole-pixel translation at the coarsest level (the centre of the block searches)
    int sx[STARTS], sy[STARTS];
    const int R = g->search < 16 ? g->search : 16;
    const int starts = coarse_search(ctx, prev, cur, &s, R, sx, sy);
    if (starts < 1) { sx[0] = 0; sy[0] = 0; }
    // 2. block translations one level finer and the similarity most of them agree with: the background's blocks
    //    outnumber a moving object's, whatever its texture
    const int bl = L >= 2 ? L - 2 : 0;
    const int f = 1 << (L - 1 - bl);
    match mt[NBLOCKS];
    const int nm = block_matches(ctx, prev, cur, bl, &s, sx[0] * f, sy[0] * f, mt);
    // two hypotheses: the consensus of the blocks, and the consensus of its outliers (a moving object's, or
    // the background's when the object's blocks are more consistent); each refined densely with the similarity
    // one level finer, on at most about 2048 points, where Tukey's cost (common scale) tells: the background's
    // points outnumber the object's
    unsigned char skip[NBLOCKS], inl[NBLOCKS];
    memset(skip, 0, sizeof skip);
    state hyp[2];
    int nh = 0;
    for (int k = 0; k < 2 && nm >= 3; k++) {
        state c = s;
        c.level = bl;
        const int in = consensus(mt, nm, 0.3, skip, inl, &c);
        if (in < 3 || (k == 1 && in < 4)) break;
        hyp[nh++] = c;
        for (int q = 0; q < nm; q++) skip[q] |= inl[q];
    }
    if (nh == 0) {   // too few blocks agree: the coarse translation
        hyp[0] = s;
        hyp[0].level = bl;
        hyp[0].tr = sx[0] * f; hyp[0].ti = sy[0] * f;
        nh = 1;
    }
    const int dl = bl >= 1 ? bl - 1 : 0;
    const int every = cur->npts[dl] > 2048 ? cur->npts[dl] / 2048 : 1;
    int pick = 0;
    for (int k = 0; k < nh && nh > 1; k++) {
        for (int l = hyp[k].level; l >= dl && !hyp[k].failed; l--) refine_level(ctx, prev, cur, l, &hyp[k], 6, every);
        if (hyp[k].failed) { hyp[k].cost = 1e300; continue; }
        residuals_every(ctx, prev, cur, dl, &hyp[k], every);
        hyp[k].cost = tukey_cost(ctx, cur->npts[dl], g->sigma_max, every);
#ifdef CZ_MOTION_DEBUG
        fprintf(stderr, "hypothesis %d: %.5f %.5f %.3f %.3f (level %d) cost %.3f\n", k, hyp[k].ar, hyp[k].ai,
                hyp[k].tr, hyp[k].ti, hyp[k].level, hyp[k].cost);
#endif
        if (hyp[k].cost < hyp[pick].cost) pick = k;
    }
    s = hyp[pick];
    s.failed = 0;
#ifdef CZ_MOTION_DEBUG
    for (int k = 0; k < nm; k++)
        fprintf(stderr, "  block (%.1f, %.1f) -> d (%.2f, %.2f)\n", mt[k].zr, mt[k].zi, mt[k].wr - mt[k].zr,
                mt[k].wi - mt[k].zi);
    fprintf(stderr, "coarse (%d, %d); %d blocks; %d hypotheses, picked %d\n", sx[0], sy[0], nm, nh, pick);
#endif
    // 3. the dense robust refinement from there, down to the finest level
    s.inliers = 0;
    for (int l = s.level; l >= 0 && !s.failed; l--) refine_level(ctx, prev, cur, l, &s, l == 0 ? 12 : 8, 1);
    st.iterations = s.iterations;
    st.inlier_share = s.inlier_share;
    st.residual = s.sigma;
    st.inliers = s.inliers;
    st.gain = s.gain;
    st.offset = s.offset;
    if (s.failed) {
        if (stats) *stats = st;
        return CZ_MOTION_NO_TEXTURE;
    }
    to_level(&s, 0);
    out[0] = s.ar; out[1] = s.ai; out[2] = s.tr; out[3] = s.ti;
    st.status = CZ_MOTION_OK;
    if (stats) *stats = st;
    return CZ_MOTION_OK;
}
