// CKernels: the crop+scale kernels compared in Benchmarks/README.md ("Scaling kernel"), behind
// one small C API so that the benchmarks and KernelQuality drive them the same way.
//
// Every kernel reads a window of a yuv420p 8-bit picture *by pointer offset* (no copy) and
// writes a yuv420p picture into preallocated planes. All set-up (contexts, graphs, scratch
// memory) happens in ck_kernel_create; ck_kernel_run allocates nothing.
#ifndef CKERNELS_H
#define CKERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A yuv420p 8-bit picture: three planes, each 64-byte aligned with a stride that is a
/// multiple of 64 (what zimg's AVX-512 path needs; swscale and libyuv are happy with it).
typedef struct ck_image {
    uint8_t *data[3];
    int stride[3];
    int width, height;
} ck_image;

/// Allocates a picture (planes zeroed). Returns 0, or -1 when out of memory.
int ck_image_alloc(ck_image *image, int width, int height);
void ck_image_free(ck_image *image);

typedef enum ck_backend {
    CK_BACKEND_SWSCALE = 0,
    CK_BACKEND_ZIMG = 1,
    CK_BACKEND_LIBYUV = 2,
} ck_backend;

/// What to build.
typedef struct ck_kernel_spec {
    ck_backend backend;
    /// swscale: SWS_* flags; zimg: zimg_resample_filter_e; libyuv: enum FilterMode.
    int option;
    /// swscale: param[0], param[1] (bicubic B, C; lanczos taps in a); zimg: filter_param_a/b
    /// (bicubic b, c; lanczos taps in a). NAN = the library's default.
    double param_a, param_b;
    /// zimg only: 1 = ZIMG_CPU_AUTO_64B (AVX-512), 0 = ZIMG_CPU_AUTO.
    int wide_simd;
} ck_kernel_spec;

typedef struct ck_kernel ck_kernel;

/// Builds a kernel that maps the window (left, top, width, height) of a source picture of
/// size src_width x src_height (luma pixels; a pixel's centre at +0.5) onto dst_width x
/// dst_height. swscale and libyuv read whole pixels: they round the window to an even origin
/// and a whole size (see ck_kernel_window); zimg keeps it exact (active_region).
/// Returns NULL and writes a message to `error` on failure.
ck_kernel *ck_kernel_create(const ck_kernel_spec *spec, int src_width, int src_height,
                            double left, double top, double width, double height,
                            int dst_width, int dst_height, char *error, size_t error_size);

/// One frame: reads `src` (src_width x src_height, as created) and writes `dst`. Returns 0 on
/// success. Allocates nothing.
int ck_kernel_run(ck_kernel *kernel, const ck_image *src, ck_image *dst);

/// The window actually read (after rounding, for swscale and libyuv).
void ck_kernel_window(const ck_kernel *kernel, double *left, double *top, double *width, double *height);

void ck_kernel_free(ck_kernel *kernel);

/// The flag values of swscale, for Swift (the macros are not all importable as constants).
int ck_sws_flag(const char *name);
/// The libraries' version strings (swscale, zimg API/library, libyuv).
void ck_versions(char *buffer, size_t size);

/// A band-limited synthetic picture: a sum of `count` 2-D cosines,
///   f(u, v) = mean + sum_k amp[k] * cos(2 pi (fx[k] u + fy[k] v) + phase[k]),
/// with u, v in the plane's pixel units. Evaluates f at the points (xs[i], ys[j]) into
/// out[j * out_stride + i] (double precision; exact, no resampling involved).
void ck_synth_eval(double *out, ptrdiff_t out_stride, int width, int height,
                   const double *xs, const double *ys, int count,
                   const double *fx, const double *fy, const double *amp, const double *phase,
                   double mean);

#ifdef __cplusplus
}
#endif

#endif
