// CPlaneKernels: cropzoom's picture kernels, each working on one plane (or one picture's
// planes) of plain memory: the orthogonal turns, the spatial deinterlacer, the zimg crop+scale
// bridge (zimg.h stays behind it), the separable resampler, the 2-D warp and the box blur.
//
// Holds: code that reads and writes samples. Must not hold: FFmpeg headers or types (planes
// come as pointers, strides and sizes; the Swift side takes them out of AVFrames), nor
// operating-system shims (CCropZoomSystem).
#ifndef CPLANE_KERNELS_H
#define CPLANE_KERNELS_H

#include <stdint.h>
#include <stddef.h>

// MARK: - Orthogonal turns

/// Copies a `dst_w` x `dst_h` plane from `src`, applying one of the eight orthogonal transforms
/// (the dihedral group D4). Destination element (x, y) reads source element
///   (sx, sy) = (ox + xx * x + xy * y, oy + yx * x + yy * y)
/// where (xx, xy, yx, yy) are -1, 0 or 1 and (ox, oy) is the source start. `elem` is the size of
/// one element in bytes (1, 2 for 16-bit samples, 2 or 4 for interleaved chroma, 3/4 for RGB).
void cz_plane_orthogonal(const uint8_t *src, int src_stride, uint8_t *dst, int dst_stride,
                         int dst_w, int dst_h, int elem,
                         int ox, int oy, int xx, int xy, int yx, int yy);

// MARK: - Deinterlacing

/// Deinterlaces one plane (`bytes` 1 or 2 per sample): the lines of parity `keep` (0: the top
/// field's, 1: the bottom field's) are copied, the others rebuilt from their neighbours by an
/// edge-directed average (directions -2…+2, as yadif's spatial check).
void cz_deinterlace_plane(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst, ptrdiff_t dst_stride,
                          int width, int height, int bytes, int keep);

// MARK: - zimg (crop + scale kernel)

/// A zimg resize graph for one fixed crop + scale of planar YUV or grey pictures, with a
/// window that may be sub-pixel. Built once (`zimg_filter_graph_build`), run per frame with no
/// allocation (`zimg_filter_graph_process`).
/// zimg's version (zimg_get_version_info): for `cropzoom --version`.
void cz_zimg_version(unsigned *major, unsigned *minor, unsigned *micro);

typedef struct cz_zimg cz_zimg;

/// The resampling filters cropzoom asks zimg for.
typedef enum { CZ_ZIMG_POINT, CZ_ZIMG_BILINEAR, CZ_ZIMG_BICUBIC, CZ_ZIMG_LANCZOS } cz_zimg_filter;

/// Chroma siting, numbered as FFmpeg's AVChromaLocation (AVCHROMA_LOC_UNSPECIFIED = 0, LEFT = 1,
/// CENTER = 2, TOPLEFT = 3, TOP = 4, BOTTOMLEFT = 5, BOTTOM = 6; a test checks they agree), so
/// that an AVChromaLocation's value may be passed as it is.
typedef enum {
    CZ_CHROMA_UNSPECIFIED = 0,
    CZ_CHROMA_LEFT = 1,
    CZ_CHROMA_CENTER = 2,
    CZ_CHROMA_TOPLEFT = 3,
    CZ_CHROMA_TOP = 4,
    CZ_CHROMA_BOTTOMLEFT = 5,
    CZ_CHROMA_BOTTOM = 6,
} cz_chroma_location;

typedef struct {
    /// The whole source picture, and the window of it to read (luma pixels, may be fractional).
    int src_width, src_height;
    double left, top, width, height;
    int dst_width, dst_height;
    /// Bits per sample (8 to 16), log2 chroma subsampling, one plane only (grey).
    int src_depth, dst_depth;
    int src_log2_chroma_w, src_log2_chroma_h, dst_log2_chroma_w, dst_log2_chroma_h;
    int gray;
    /// Range (both sides) and chroma siting (a cz_chroma_location, that is an AVChromaLocation;
    /// unspecified = left).
    int full_range;
    int chroma_location;
    /// The filter and its parameters (bicubic B and C, Lanczos taps; NAN: zimg's default).
    cz_zimg_filter filter;
    double param_a, param_b;
} cz_zimg_params;

/// Builds the graph; NULL with a message in `error` when zimg refuses the conversion.
cz_zimg *cz_zimg_new(const cz_zimg_params *params, char *error, size_t error_size);
/// 1 when the planes and strides meet zimg's alignment (64 bytes), so `cz_zimg_process` may run.
int cz_zimg_aligned(const cz_zimg *z, uint8_t *const src[4], const int src_stride[4],
                    uint8_t *const dst[4], const int dst_stride[4]);
/// Scales the window of `src` (whole picture planes) into `dst`. 0 on success.
int cz_zimg_process(cz_zimg *z, uint8_t *const src[4], const int src_stride[4],
                    uint8_t *const dst[4], const int dst_stride[4]);
void cz_zimg_free(cz_zimg *z);

// MARK: - Resampler (animated zoom and pan)

/// cropzoom's separable resampler for one plane and any fractional window, for windows that
/// change every frame (zimg would build a new graph each time). Tables and buffers are sized at
/// creation for the largest source and the output; a frame allocates nothing.
typedef struct cz_resampler cz_resampler;
/// Buffers for sources up to max_src_w x max_src_h samples and a dst_w x dst_h output plane;
/// `filter` as for zimg, `b`/`c` the cubic's parameters; taps for windows of up to `max_scale`
/// source samples per output sample (a window larger than the picture: zooming out), or
/// max_src / dst if larger. NULL when out of memory.
cz_resampler *cz_resampler_new(int max_src_w, int max_src_h, int dst_w, int dst_h,
                               cz_zimg_filter filter, double b, double c, double max_scale);
/// The scale beyond which the kernel is not widened any more (its taps are capped).
double cz_resampler_widest_scale(cz_zimg_filter filter);
/// Resamples one plane: output sample (i, j) is centred on source sample position
/// (origin_x + i * step_x, origin_y + j * step_y) (sample-index units: sample k sits at k).
/// `bytes` 1 or 2 per sample; results clamped to [0, max_value]. Outputs whose centre falls
/// outside the picture (zooming out) get `background`, with -2 are left as they are (painted
/// before: the blurred background), or with -1 the nearest sample of the
/// picture (edge fill). 0 on success.
int cz_resample_plane(cz_resampler *r, const uint8_t *src, ptrdiff_t src_stride, int src_w, int src_h,
                      int bytes, double origin_x, double origin_y, double step_x, double step_y,
                      uint8_t *dst, ptrdiff_t dst_stride, int dst_w, int dst_h, int max_value, int background);
void cz_resampler_free(cz_resampler *r);
/// 0 restricts 8-bit planes to the plain C forms (the AVX2 forms must give the same bytes).
void cz_resampler_set_simd(cz_resampler *r, int enabled);

// MARK: - 2-D warp (rotation, any affine map)

/// A 2-D warp of one plane by an affine map (rotation, shear, mirror, any scale near 1): the
/// cubic (`b`, `c`), bilinear or nearest kernel at unit scale, weights tabulated per 1/1024
/// sample. No allocation after creation; one per worker.
typedef struct cz_warp cz_warp;
cz_warp *cz_warp_new(cz_zimg_filter filter, double b, double c);
/// Output sample (x, y) (indices) is read around source sample position
/// (m[0] x + m[2] y + m[4], m[1] x + m[3] y + m[5]) (the CGAffineTransform layout a, b, c, d,
/// tx, ty). Taps outside the picture read `background`, or with -1 the nearest edge sample; with
/// -2 they read the nearest edge sample and outputs wholly outside are left as they are.
/// Results clamped to [0, max_value]. 0 on success.
int cz_warp_plane(const cz_warp *w, const uint8_t *src, ptrdiff_t src_stride, int src_w, int src_h, int bytes,
                  const double m[6], uint8_t *dst, ptrdiff_t dst_stride, int dst_w, int dst_h,
                  int max_value, int background);
void cz_warp_free(cz_warp *w);
/// 0 restricts the warp to its plain C form (the AVX2 form must give the same bytes).
void cz_warp_set_simd(cz_warp *w, int enabled);

// MARK: - Box blur (the blurred background)

/// `passes` box blurs of `radius` samples, rows then columns, in place (three passes are close
/// to a Gaussian); `tmp` holds max(w, h) ints.
void cz_box_blur(uint8_t *plane, ptrdiff_t stride, int w, int h, int bytes, int radius, int passes, int *tmp);

// MARK: - Tone mapping (HDR to SDR)

/// The source's transfer characteristic.
typedef enum { CZ_TONEMAP_PQ = 0, CZ_TONEMAP_HLG = 1 } cz_tonemap_transfer;
/// The tone curve, applied to the brightest of R, G and B (hue kept): BT.2390's EETF, Hable's filmic curve and
/// Reinhard's (as FFmpeg's `tonemap` filter has them).
typedef enum { CZ_TONEMAP_BT2390 = 0, CZ_TONEMAP_HABLE = 1, CZ_TONEMAP_REINHARD = 2 } cz_tonemap_kind;

typedef struct {
    int transfer;  ///< cz_tonemap_transfer
    int curve;     ///< cz_tonemap_kind
    /// The brightest the source holds (cd/m²: MaxCLL, else the mastering display's peak, else 1000), and the
    /// SDR white it is mapped to (100).
    double source_peak_nits, white_nits;
    /// The source's YUV matrix (Kr, Kb: BT.2020's 0.2627, 0.0593) and the output's (BT.709's 0.2126, 0.0722).
    float source_kr, source_kb, output_kr, output_kb;
    /// Linear source RGB → linear BT.709 RGB, row-major.
    float gamut[9];
} cz_tonemap_params;

typedef struct cz_tonemap cz_tonemap;

/// Tables for one mapping, and scratch rows for pictures up to `width` wide; NULL when out of memory or the
/// parameters make no sense. One per thread (the scratch rows are written).
cz_tonemap *cz_tonemap_new(const cz_tonemap_params *params, int width);
void cz_tonemap_free(cz_tonemap *t);
/// The widest rows the kernel may use: 0 plain C, 1 AVX2 + FMA, 2 AVX-512 (the default; each where the CPU has
/// it). Tests compare them.
void cz_tonemap_set_simd(cz_tonemap *t, int level);
/// The widest rows this CPU runs (0, 1 or 2, as cz_tonemap_set_simd counts).
int cz_tonemap_cpu_level(void);

/// Maps one picture: `src` is 4:4:4 16-bit limited-range YUV (three planes, strides in bytes); `dst` planar YUV of
/// `depth` bits (8: a byte a sample, else 16-bit little-endian), chroma subsampled by `log2w`/`log2h` (0 or 1),
/// `full_range` or limited, its horizontal chroma `cosited` with the even luma columns (MPEG-2's "left") or
/// between two. Allocates nothing.
void cz_tonemap_picture(cz_tonemap *t, const uint8_t *const src[3], const ptrdiff_t src_stride[3], int width,
                        int height, uint8_t *const dst[3], const ptrdiff_t dst_stride[3], int depth, int log2w,
                        int log2h, int full_range, int cosited);

/// The tone curve alone (for tests and plots): `x` and `peak` in units of `white_nits`.
float cz_tonemap_curve(int kind, double x, double peak, double white_nits);

// MARK: - Motion estimation

/// The camera's global motion between consecutive frames (`--stabilize`): a similarity F_t that maps frame t's
/// centred coordinates to frame t-1's (u' = a u - b v + tx, v' = b u + a v + ty; u = x + 0.5 - W/2 with x the
/// pixel index, y down). Each frame's luma is downscaled to an 8-bit *analysis plane* (a power-of-two area
/// average) and prepared once into a `cz_motion_frame` (pyramid and textured points); a pair estimate picks the
/// background's motion from a consensus of block translations (a big moving object loses), then refines it by a
/// robust direct registration (Gauss-Newton with Tukey weights on a pyramid, similarity plus brightness gain and
/// offset; a fade does not pull it). Results are in the analysis plane's centred pixels whose centre is the *full*
/// frame's (W / 2k, H / 2k), so the full-resolution F_t is (a, b, k tx, k ty) exactly.
/// Nothing is allocated after `*_new`; a frame is written only by its prepare and may then be read by any number
/// of estimates on any threads at once; a context (scratch) belongs to one thread at a time. The result depends
/// on the two frames alone (the same bytes whatever the threads, the order, or SSE2 or not).

#define CZ_MOTION_MAX_LEVELS 8
/// The analysis plane's recommended largest width (see Benchmarks/results/motion-estimation.md).
#define CZ_MOTION_ANALYSIS_WIDTH 960

/// Sizes of one stream's analysis (the same for its frames and contexts). Filled by `cz_motion_geometry_init`;
/// the tuning fields may be changed before the frames and contexts are made.
typedef struct {
    int width, height;                       ///< full-resolution coded luma size
    int factor;                              ///< k: full-resolution pixels per analysis pixel (a power of two)
    int analysis_width, analysis_height;     ///< floor(width / k), floor(height / k) (the rest is not read)
    double cx, cy;                           ///< the centre in analysis pixels: width / 2k, height / 2k
    int levels;                              ///< pyramid levels (coarsest 64-127 px wide)
    int cell, per_cell;                      ///< points: the per_cell strongest gradients of each cell x cell
    float gradient_floor;                    ///< smallest gradient (levels per px) a point may have
    int search;                              ///< whole-pixel translation search at the coarsest level, +-px
    int smooth;                              ///< passes of a [1 2 1] x [1 2 1] / 16 blur on each level (less bias)
    float sigma_max;                         ///< largest robust scale (grey levels): Tukey's cut at 4.685 x it
    int photometric_levels;                  ///< gain and offset estimated at the finest this many levels
    int similarity_levels;                   ///< rotation and scale estimated at the finest this many levels
} cz_motion_geometry;

/// The smallest power of two k with width / k <= max_width (CZ_MOTION_ANALYSIS_WIDTH).
int cz_motion_factor(int width, int max_width);
/// Fills `g` for a `width` x `height` luma plane analysed at 1/`factor` (from cz_motion_factor). 0, or -1 when the
/// sizes make no sense (analysis plane under 16 x 16, factor not a power of two).
int cz_motion_geometry_init(cz_motion_geometry *g, int width, int height, int factor);

/// Full-resolution luma (`bytes` 1: 8-bit; 2: 16-bit little-endian samples of `depth` 9-16 bits, in the low bits;
/// MSB-aligned formats such as P010 pass 16) to the 8-bit analysis plane (analysis_width x analysis_height,
/// `dst_stride` bytes a row): the mean of each k x k block scaled to 8 bits, rounded. Allocates nothing.
void cz_motion_downscale(const cz_motion_geometry *g, const uint8_t *src, ptrdiff_t src_stride, int bytes, int depth,
                         uint8_t *dst, ptrdiff_t dst_stride);

/// One prepared frame: buffers for `g`'s pyramid and points. NULL when out of memory.
typedef struct cz_motion_frame cz_motion_frame;
cz_motion_frame *cz_motion_frame_new(const cz_motion_geometry *g);
void cz_motion_frame_free(cz_motion_frame *f);
/// Prepares the frame from an analysis plane (8-bit, analysis_width x analysis_height). Returns the number of
/// points at the finest level.
int cz_motion_frame_prepare(cz_motion_frame *f, const uint8_t *plane, ptrdiff_t stride);
/// `cz_motion_downscale` into the frame's own analysis plane, then `cz_motion_frame_prepare`.
int cz_motion_frame_prepare_luma(cz_motion_frame *f, const uint8_t *src, ptrdiff_t src_stride, int bytes,
                                 int depth);
/// The frame's own analysis plane (stride analysis_width), as the last `cz_motion_frame_prepare_luma` left it.
const uint8_t *cz_motion_frame_plane(const cz_motion_frame *f);

/// A pair estimate's result.
typedef enum {
    CZ_MOTION_OK = 0,
    /// Too little texture in either frame (fewer than max(64, analysis area / 400) pixels with a gradient of at
    /// least gradient_floor: black, flat, the end of a fade) or a direction the points do not constrain: the
    /// estimate is the identity, flagged, never a guess.
    CZ_MOTION_NO_TEXTURE = 1,
} cz_motion_status;

typedef struct {
    int status;             ///< cz_motion_status
    int points;             ///< the current frame's points at the finest level
    int inliers;            ///< of them, those with a non-zero weight in the last iteration
    double inlier_share;    ///< inliers / points inside the previous frame
    double residual;        ///< robust residual scale (1.4826 x median |r|, grey levels; within [0.5, sigma_max])
    double gain, offset;    ///< brightness: prev ~ gain * cur + offset
    int iterations;         ///< Gauss-Newton iterations over all levels
} cz_motion_stats;

/// Scratch for the estimates of one thread. NULL when out of memory.
typedef struct cz_motion cz_motion;
cz_motion *cz_motion_new(const cz_motion_geometry *g);
void cz_motion_free(cz_motion *m);
/// F_t from `prev` (frame t-1) and `cur` (frame t), both prepared with the context's geometry (same values): `out` = (a, b, tx,
/// ty) in the analysis plane's centred pixels (see above), and `stats` (may be NULL). Returns the status; with
/// CZ_MOTION_NO_TEXTURE `out` is the identity (1, 0, 0, 0).
int cz_motion_estimate(cz_motion *ctx, const cz_motion_frame *prev, const cz_motion_frame *cur, double out[4],
                       cz_motion_stats *stats);

/// Turns an 8-bit plane upright (a display matrix's quarter turns and mirrors): (a, b, c, d) maps a coded pixel's
/// centred coordinates (x, y) to upright ones (a x + b y, c x + d y), each entry 0 or +-1. `dst` is sh x sw when the
/// map swaps the axes (a = 0), else sw x sh. Returns 0, or -1 for a matrix that is not such a map.
int cz_plane_orient(const uint8_t *src, int sw, int sh, int sstride, int a, int b, int c, int d, uint8_t *dst,
                    int dstride);

#endif
