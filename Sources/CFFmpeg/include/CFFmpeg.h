// CFFmpeg: cropzoom's only C boundary.
//
// Exposes FFmpeg 5.1's headers to Swift, plus `static inline` helpers for what Swift cannot
// import (function-like macros such as AVERROR(EAGAIN), AVERROR_EOF, AV_NOPTS_VALUE), the
// process-wide signal flag, and a few small plane kernels that are easiest to keep in C.
#ifndef CFFMPEG_H
#define CFFMPEG_H

#include <stdint.h>
#include <stddef.h>
#include <errno.h>

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libavutil/samplefmt.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>

// MARK: - FFmpeg macros

/// AVERROR(EAGAIN): "output not available in this state, feed more input / drain output".
static inline int cz_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: end of stream.
static inline int cz_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(e) for a POSIX errno value.
static inline int cz_averror(int e) { return AVERROR(e); }
/// AVERROR_INVALIDDATA.
static inline int cz_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
/// AV_NOPTS_VALUE: "no timestamp".
static inline int64_t cz_nopts(void) { return AV_NOPTS_VALUE; }

/// av_strerror into a caller buffer; returns the buffer.
const char *cz_strerror(int errnum, char *buf, size_t size);

// MARK: - Signals

/// Installs SIGINT/SIGTERM/SIGHUP handlers that record the signal (async-signal-safe), and
/// ignores SIGPIPE and SIGXFSZ so that write failures come back as errors (EPIPE, EFBIG).
void cz_install_signal_handlers(void);
/// The first signal received since installation, or 0.
int cz_pending_signal(void);
/// The AVIOInterruptCB callback: non-zero once a signal is pending.
int cz_interrupt_callback(void *opaque);

// MARK: - Threads

/// Raises the calling thread's nice value by `by` (`getpriority`/`setpriority` on its thread
/// id; Linux nice values are per thread), relative to what it is. Returns 0 or -errno.
int cz_lower_thread_priority(int by);

// MARK: - Files

/// rename(2) that refuses to replace an existing file (renameat2 RENAME_NOREPLACE; falls back to
/// link+unlink on file systems without it). Returns 0 or -errno.
int cz_rename_noreplace(const char *from, const char *to);

/// Asks for SIGTERM when the parent process `parent` dies (prctl PR_SET_PDEATHSIG), and raises
/// it at once when that parent is already gone. Returns 0 or -errno.
int cz_end_with_parent(int parent);

// MARK: - Logging and decode-error counting

/// Routes FFmpeg's log through cropzoom: messages at or below `print_level` are printed as
/// usual (AV_LOG_QUIET prints nothing), and every error-concealment report of a video decoder
/// ("concealing N DC, N AC, N MV errors") is counted in the `cz_counter` its AVCodecContext's
/// `opaque` points to. Frame-threaded decoders copy `opaque` to their thread contexts, so the
/// count is exact even where FFmpeg 5.1 sets a frame's `decode_error_flags` too late to be seen.
void cz_log_install(int print_level);
/// A counter for one decoder (atomic; freed with cz_counter_free).
void *cz_counter_new(void);
int cz_counter_get(void *counter);
void cz_counter_free(void *counter);

// MARK: - Muxing

/// Copies the input's chapters (times, ids, metadata) to the output, as the ffmpeg CLI does;
/// there is no public libavformat call for it. Only chapters overlapping [from, to) are kept,
/// cut to it and moved back by `shift` (all three in AV_TIME_BASE units; INT64_MIN / INT64_MAX
/// for no limit). Returns 0 or a negative AVERROR.
int cz_copy_chapters(AVFormatContext *out, const AVFormatContext *in, int64_t from, int64_t to, int64_t shift);

/// HDR10 static metadata of the first decoded frame of stream `stream_index` of `url`
/// (`AV_FRAME_DATA_MASTERING_DISPLAY_METADATA`, `AV_FRAME_DATA_CONTENT_LIGHT_LEVEL`): opens the
/// file on its own, decodes up to `max_packets` packets of that stream, closes everything.
/// Returns a mask (1: `md` set, 2: `cll` set; 0: the first frame has neither) or a negative AVERROR.
int cz_first_frame_hdr(const char *url, int stream_index, int max_packets,
                       AVMasteringDisplayMetadata *md, AVContentLightMetadata *cll);

// MARK: - Plane kernels

/// Copies a `dst_w` x `dst_h` plane from `src`, applying one of the eight orthogonal transforms
/// (the dihedral group D4). Destination element (x, y) reads source element
///   (sx, sy) = (ox + xx * x + xy * y, oy + yx * x + yy * y)
/// where (xx, xy, yx, yy) are -1, 0 or 1 and (ox, oy) is the source start. `elem` is the size of
/// one element in bytes (1, 2 for 16-bit samples, 2 or 4 for interleaved chroma, 3/4 for RGB).
/// Deinterlaces one plane (`bytes` 1 or 2 per sample): the lines of parity `keep` (0: the top
/// field's, 1: the bottom field's) are copied, the others rebuilt from their neighbours by an
/// edge-directed average (directions -2…+2, as yadif's spatial check).
void cz_deinterlace_plane(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst, ptrdiff_t dst_stride,
                          int width, int height, int bytes, int keep);

void cz_plane_orthogonal(const uint8_t *src, int src_stride, uint8_t *dst, int dst_stride,
                         int dst_w, int dst_h, int elem,
                         int ox, int oy, int xx, int xy, int yx, int yy);

// MARK: - zimg (crop + scale kernel)

/// A zimg resize graph for one fixed crop + scale of planar YUV or grey pictures, with a
/// window that may be sub-pixel. Built once (`zimg_filter_graph_build`), run per frame with no
/// allocation (`zimg_filter_graph_process`).
typedef struct cz_zimg cz_zimg;

/// The resampling filters cropzoom asks zimg for.
typedef enum { CZ_ZIMG_POINT, CZ_ZIMG_BILINEAR, CZ_ZIMG_BICUBIC, CZ_ZIMG_LANCZOS } cz_zimg_filter;

typedef struct {
    /// The whole source picture, and the window of it to read (luma pixels, may be fractional).
    int src_width, src_height;
    double left, top, width, height;
    int dst_width, dst_height;
    /// Bits per sample (8 to 16), log2 chroma subsampling, one plane only (grey).
    int src_depth, dst_depth;
    int src_log2_chroma_w, src_log2_chroma_h, dst_log2_chroma_w, dst_log2_chroma_h;
    int gray;
    /// Range (both sides) and chroma siting (an AVChromaLocation; unspecified = left).
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

/// `passes` box blurs of `radius` samples, rows then columns, in place (three passes are close
/// to a Gaussian); `tmp` holds max(w, h) ints.
void cz_box_blur(uint8_t *plane, ptrdiff_t stride, int w, int h, int bytes, int radius, int passes, int *tmp);

/// CPUs in the calling thread's affinity mask (`sched_getaffinity`, `CPU_COUNT_S`), 0 when unknown.
int cz_affinity_cpu_count(void);

#endif
