// CFFmpeg: the helpers FFmpeg's C API needs (see CFFmpeg.h).
#include "CFFmpeg.h"
#include "CCropZoomSystem.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <dlfcn.h>
#include <libavdevice/version_major.h>
#include <time.h>

const char *cz_strerror(int errnum, char *buf, size_t size) {
    if (av_strerror(errnum, buf, size) < 0) {
        snprintf(buf, size, "error %d", errnum);
    }
    return buf;
}

// MARK: - Interrupting FFmpeg

int cz_register_devices(void) {
    static int done = 0;
    if (done) return done > 0 ? 0 : -1;
    void *lib = dlopen("libavdevice.so." AV_STRINGIFY(LIBAVDEVICE_VERSION_MAJOR), RTLD_NOW | RTLD_GLOBAL);
    if (!lib) lib = dlopen("libavdevice.so", RTLD_NOW | RTLD_GLOBAL);
    void (*register_all)(void) = lib ? (void (*)(void))dlsym(lib, "avdevice_register_all") : NULL;
    if (register_all) register_all();
    done = register_all ? 1 : -1;
    return register_all ? 0 : -1;
}

int cz_interrupt_callback(void *opaque) {
    (void)opaque;
    return cz_pending_signal() != 0;
}

struct cz_watch {
    atomic_int stopped;
    atomic_int timed_out;         // sticky: a read was interrupted by the deadline
    _Atomic int64_t deadline_ns;  // CLOCK_MONOTONIC; 0: none
};

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

cz_watch *cz_watch_new(void) { return calloc(1, sizeof(cz_watch)); }

void cz_watch_free(cz_watch *w) { free(w); }

void cz_watch_stop(cz_watch *w) { atomic_store(&w->stopped, 1); }

void cz_watch_arm(cz_watch *w, double seconds) {
    atomic_store(&w->deadline_ns, seconds > 0 ? now_ns() + (int64_t)(seconds * 1e9) : 0);
}

int cz_watch_reason(cz_watch *w) {
    if (atomic_load(&w->stopped)) return 1;
    if (atomic_load(&w->timed_out)) return 2;
    const int64_t d = atomic_load(&w->deadline_ns);
    if (d > 0 && now_ns() > d) {
        atomic_store(&w->timed_out, 1);
        return 2;
    }
    return 0;
}

int cz_watch_callback(void *opaque) {
    return cz_pending_signal() != 0 || cz_watch_reason(opaque) != 0;
}

int cz_watch_only_callback(void *opaque) { return cz_watch_reason(opaque) != 0; }

// MARK: - Logging and decode-error counting

// Atomic: jobs running at once in one process set it while FFmpeg's threads of another log (ThreadSanitizer
// found the race).
static _Atomic int print_level_setting = AV_LOG_QUIET;
/// The last error or warning a muxer logged on this thread (its text, without the newline).
static _Thread_local char mux_error[256];
/// The last error a demuxer or device logged on this thread while opening ("Cannot open display :88.0, error 1").
static _Thread_local char open_error[256];

static void cz_keep_line(char *into, size_t size, const char *fmt, va_list vl) {
    va_list copy;
    va_copy(copy, vl);
    vsnprintf(into, size, fmt, copy);
    va_end(copy);
    size_t n = strlen(into);
    while (n > 0 && (into[n - 1] == '\n' || into[n - 1] == '.' || into[n - 1] == ' ')) into[--n] = 0;
}

static void cz_log_callback(void *avcl, int level, const char *fmt, va_list vl) {
    if (avcl && level <= AV_LOG_ERROR && fmt && strncmp(fmt, "concealing", 10) == 0) {
        const AVClass *cls = *(const AVClass **)avcl;
        if (cls == avcodec_get_class()) {
            AVCodecContext *ctx = avcl;
            if (ctx->opaque && ctx->codec_type == AVMEDIA_TYPE_VIDEO)
                atomic_fetch_add((atomic_int *)ctx->opaque, 1);
        }
    }
    // A muxer's warnings too: some refusals are logged as warnings ("pts/dts pair unsupported").
    if (avcl && level <= AV_LOG_WARNING && fmt) {
        const AVClass *cls = *(const AVClass **)avcl;
        if (cls == avformat_get_class() && ((AVFormatContext *)avcl)->oformat) {
            cz_keep_line(mux_error, sizeof mux_error, fmt, vl);
        } else if (cls == avformat_get_class() && level <= AV_LOG_ERROR) {
            cz_keep_line(open_error, sizeof open_error, fmt, vl);
        }
    }
    if (level <= atomic_load_explicit(&print_level_setting, memory_order_relaxed))
        av_log_default_callback(avcl, level, fmt, vl);
}

void cz_mux_error_clear(void) { mux_error[0] = 0; }

void cz_open_error_clear(void) { open_error[0] = 0; }

const char *cz_open_error(void) { return open_error; }

const char *cz_mux_error(void) { return mux_error; }

void cz_log_install(int print_level) {
    atomic_store_explicit(&print_level_setting, print_level, memory_order_relaxed);
    av_log_set_level(print_level > AV_LOG_WARNING ? print_level : AV_LOG_WARNING);
    av_log_set_callback(cz_log_callback);
}

void *cz_counter_new(void) {
    atomic_int *c = malloc(sizeof *c);
    if (c) atomic_init(c, 0);
    return c;
}

int cz_counter_get(void *counter) { return counter ? atomic_load((atomic_int *)counter) : 0; }

void cz_counter_free(void *counter) { free(counter); }

// MARK: - Reading from memory

typedef struct {
    const uint8_t *data;
    int64_t size;
    int64_t pos;
} cz_memory;

static int cz_memory_read(void *opaque, uint8_t *buf, int size) {
    cz_memory *m = opaque;
    if (size <= 0) return 0;
    if (m->pos >= m->size) return AVERROR_EOF;
    int64_t n = FFMIN((int64_t)size, m->size - m->pos);
    memcpy(buf, m->data + m->pos, (size_t)n);
    m->pos += n;
    return (int)n;
}

// As a file: any position from 0 on (reads past the end find the end); AVSEEK_SIZE is the size.
static int64_t cz_memory_seek(void *opaque, int64_t offset, int whence) {
    cz_memory *m = opaque;
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return m->size;
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = m->pos; break;
    case SEEK_END: base = m->size; break;
    default: return AVERROR(EINVAL);
    }
    if ((offset > 0 && base > INT64_MAX - offset) || base + offset < 0) return AVERROR(EINVAL);
    m->pos = base + offset;
    return m->pos;
}

AVIOContext *cz_memory_io_new(const uint8_t *data, size_t size) {
    const int buffer_size = 32768;
    cz_memory *m = av_mallocz(sizeof(cz_memory));
    uint8_t *buffer = av_malloc(buffer_size);
    AVIOContext *ctx = m && buffer
        ? avio_alloc_context(buffer, buffer_size, 0, m, cz_memory_read, NULL, cz_memory_seek) : NULL;
    if (!ctx) {
        av_free(buffer);
        av_free(m);
        return NULL;
    }
    *m = (cz_memory){.data = data, .size = (int64_t)size, .pos = 0};
    return ctx;
}

void cz_memory_io_free(AVIOContext **ctx) {
    if (!ctx || !*ctx) return;
    av_freep(&(*ctx)->opaque);
    // avio may have replaced the buffer it was given (ffio_set_buf_size): free the one it holds now.
    av_freep(&(*ctx)->buffer);
    avio_context_free(ctx);
}

// MARK: - Muxing

int cz_copy_chapters(AVFormatContext *out, const AVFormatContext *in, int64_t from, int64_t to, int64_t shift) {
    if (in->nb_chapters == 0) return 0;
    AVChapter **list = av_realloc_array(out->chapters, out->nb_chapters + in->nb_chapters, sizeof(*list));
    if (!list) return AVERROR(ENOMEM);
    out->chapters = list;
    for (unsigned i = 0; i < in->nb_chapters; i++) {
        const AVChapter *c = in->chapters[i];
        int64_t start = c->start, end = c->end;
        if (from != INT64_MIN) {
            int64_t f = av_rescale_q(from, AV_TIME_BASE_Q, c->time_base);
            if (end <= f) continue;
            if (start < f) start = f;
        }
        if (to != INT64_MAX) {
            int64_t t = av_rescale_q(to, AV_TIME_BASE_Q, c->time_base);
            if (start >= t) continue;
            if (end > t) end = t;
        }
        int64_t s = av_rescale_q(shift, AV_TIME_BASE_Q, c->time_base);
        AVChapter *n = av_mallocz(sizeof(*n));
        if (!n) return AVERROR(ENOMEM);
        n->id = c->id;
        n->time_base = c->time_base;
        n->start = start - s;
        n->end = end - s;
        if (av_dict_copy(&n->metadata, c->metadata, 0) < 0) { av_free(n); return AVERROR(ENOMEM); }
        out->chapters[out->nb_chapters++] = n;
    }
    return 0;
}

// MARK: - HDR metadata

int cz_first_frame_hdr(const char *url, int stream_index, int max_packets,
                       AVMasteringDisplayMetadata *md, AVContentLightMetadata *cll) {
    AVFormatContext *fmt = avformat_alloc_context();
    AVCodecContext *dec = NULL;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    int r = AVERROR(ENOMEM);
    if (!fmt || !pkt || !frame) goto end;
    fmt->interrupt_callback.callback = cz_interrupt_callback;
    if ((r = avformat_open_input(&fmt, url, NULL, NULL)) < 0) goto end;   // frees fmt on failure
    if ((r = avformat_find_stream_info(fmt, NULL)) < 0) goto end;
    r = AVERROR_STREAM_NOT_FOUND;
    if (stream_index < 0 || (unsigned)stream_index >= fmt->nb_streams) goto end;
    for (unsigned i = 0; i < fmt->nb_streams; i++)
        if ((int)i != stream_index) fmt->streams[i]->discard = AVDISCARD_ALL;
    const AVCodecParameters *par = fmt->streams[stream_index]->codecpar;
    const AVCodec *codec = avcodec_find_decoder(par->codec_id);
    r = AVERROR_DECODER_NOT_FOUND;
    if (!codec) goto end;
    r = AVERROR(ENOMEM);
    if (!(dec = avcodec_alloc_context3(codec))) goto end;
    if ((r = avcodec_parameters_to_context(dec, par)) < 0) goto end;
    dec->thread_count = 1;
    if ((r = avcodec_open2(dec, codec, NULL)) < 0) goto end;
    r = 0;
    int got = 0;
    for (int n = 0; n < max_packets && !got; ) {
        int e = av_read_frame(fmt, pkt);
        if (e >= 0 && pkt->stream_index != stream_index) { av_packet_unref(pkt); continue; }
        n++;
        avcodec_send_packet(dec, e >= 0 ? pkt : NULL);
        av_packet_unref(pkt);
        if (avcodec_receive_frame(dec, frame) >= 0) got = 1;
        else if (e < 0) break;
    }
    if (got) {
        AVFrameSideData *sd = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA);
        if (sd && sd->size >= sizeof(*md)) { memcpy(md, sd->data, sizeof(*md)); r |= 1; }
        sd = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL);
        if (sd && sd->size >= sizeof(*cll)) { memcpy(cll, sd->data, sizeof(*cll)); r |= 2; }
    }
end:
    av_frame_free(&frame);
    av_packet_free(&pkt);
    avcodec_free_context(&dec);
    if (fmt) avformat_close_input(&fmt);
    return r;
}
