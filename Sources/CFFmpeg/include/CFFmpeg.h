// CFFmpeg: cropzoom's boundary to FFmpeg 5.1 (libavformat, libavcodec, libavutil, libswscale,
// libswresample), and the only target that includes or links them.
//
// Holds: FFmpeg's headers for Swift, `static inline` helpers for what Swift cannot import
// (function-like macros such as AVERROR(EAGAIN), AVERROR_EOF, AV_NOPTS_VALUE), and the few
// helpers that need FFmpeg's structures or callbacks in C (log routing and decode-error
// counting, the I/O interrupt callback, chapter copy, the first frame's HDR metadata, a read-only
// AVIOContext over bytes in memory).
// Must not hold: operating-system shims (CCropZoomSystem) or picture kernels (CPlaneKernels).
#ifndef CFFMPEG_H
#define CFFMPEG_H

#include <stdint.h>
#include <stddef.h>
#include <errno.h>

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavutil/avutil.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/display.h>
#include <libavutil/dovi_meta.h>
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
/// AVERROR_PATCHWELCOME: what FFmpeg cannot handle (a bitstream filter on a damaged packet, among others).
static inline int cz_averror_patchwelcome(void) { return AVERROR_PATCHWELCOME; }
/// AV_NOPTS_VALUE: "no timestamp".
static inline int64_t cz_nopts(void) { return AV_NOPTS_VALUE; }

/// av_strerror into a caller buffer; returns the buffer.
const char *cz_strerror(int errnum, char *buf, size_t size);

// MARK: - Interrupting FFmpeg

/// Makes libavdevice's capture devices known to av_find_input_format (avdevice_register_all), loading
/// libavdevice only then (dlopen): it pulls in ~80 libraries (SDL, PulseAudio, X11 …) that a file
/// transcode would otherwise load at every start (+20 MiB, measured). 0, or -1 when it cannot be loaded.
int cz_register_devices(void);

/// The AVIOInterruptCB callback: non-zero once a signal is pending (cz_pending_signal of
/// CCropZoomSystem).
int cz_interrupt_callback(void *opaque);

/// What a live input's reads are interrupted by, besides a signal: a stop request (the recording
/// ends cleanly) and a deadline (no data for the live timeout). Made with cz_watch_new, given as
/// the AVIOInterruptCB opaque of cz_watch_callback, freed with cz_watch_free.
typedef struct cz_watch cz_watch;
cz_watch *cz_watch_new(void);
void cz_watch_free(cz_watch *w);
/// Interrupts reads from now on.
void cz_watch_stop(cz_watch *w);
/// Interrupts a read still waiting `seconds` from now (0 or less: no deadline).
void cz_watch_arm(cz_watch *w, double seconds);
/// 1 when the watch stopped the input (a stop request), 2 once the deadline has passed (sticky:
/// re-arming does not undo a read it interrupted), 0 otherwise.
int cz_watch_reason(cz_watch *w);
/// The AVIOInterruptCB callback of a watched input: a pending signal, a stop or a passed deadline.
int cz_watch_callback(void *opaque);
/// The same without the signal: for a live recording's output, which must still be written (its
/// end included) after the signal that ended the recording; only a stop of its watch interrupts it.
int cz_watch_only_callback(void *opaque);

// MARK: - Logging and decode-error counting

/// Routes FFmpeg's log through cropzoom: messages at or below `print_level` are printed as
/// usual (AV_LOG_QUIET prints nothing), and every error-concealment report of a video decoder
/// ("concealing N DC, N AC, N MV errors") is counted in the `cz_counter` its AVCodecContext's
/// `opaque` points to. Frame-threaded decoders copy `opaque` to their thread contexts, so the
/// count is exact even where FFmpeg 5.1 sets a frame's `decode_error_flags` too late to be seen.
/// The last error-level line an input's demuxer or device logged on this thread (empty: none since the clear): the
/// reason behind a failed `avformat_open_input` that FFmpeg's return code only names as errno text.
void cz_open_error_clear(void);
const char *cz_open_error(void);
void cz_log_install(int print_level);
/// The last error or warning a muxer logged on the calling thread ("" when none since the last clear), so that
/// a failed write can say what the muxer refused; `cz_mux_error_clear` forgets it.
const char *cz_mux_error(void);
void cz_mux_error_clear(void);
/// A counter for one decoder (atomic; freed with cz_counter_free).
void *cz_counter_new(void);
int cz_counter_get(void *counter);
void cz_counter_free(void *counter);

// MARK: - Reading from memory

/// A read-only AVIOContext over `size` bytes at `data` (avio_alloc_context with a 32 KiB buffer, a read callback
/// and a seek callback taking SEEK_SET, SEEK_CUR, SEEK_END and AVSEEK_SIZE). The bytes stay the caller's: they
/// must outlive the context and not change. NULL when out of memory. Give it to a format context as its `pb`
/// with AVFMT_FLAG_CUSTOM_IO (avformat_close_input then leaves it open) and free it after that context with
/// cz_memory_io_free.
AVIOContext *cz_memory_io_new(const uint8_t *data, size_t size);
/// Frees a context of cz_memory_io_new and sets `*ctx` to NULL: its read state, av_freep(&ctx->buffer),
/// avio_context_free. NULL is ignored.
void cz_memory_io_free(AVIOContext **ctx);

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

#endif
