#define _GNU_SOURCE
#include "CFFmpeg.h"

#include <sys/resource.h>

#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/prctl.h>

const char *cz_strerror(int errnum, char *buf, size_t size) {
    if (av_strerror(errnum, buf, size) < 0) {
        snprintf(buf, size, "error %d", errnum);
    }
    return buf;
}

// MARK: - Signals

static volatile sig_atomic_t pending_signal = 0;

static void record_signal(int sig) {
    if (pending_signal == 0) pending_signal = sig;
}

void cz_install_signal_handlers(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = record_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    // A parent may have started us with these blocked (threads of test runners often do).
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int cz_pending_signal(void) { return pending_signal; }

int cz_interrupt_callback(void *opaque) {
    (void)opaque;
    return pending_signal != 0;
}

// MARK: - Files

int cz_rename_noreplace(const char *from, const char *to) {
#ifdef SYS_renameat2
    if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -errno;
#endif
    if (link(from, to) != 0) return -errno;
    if (unlink(from) != 0) return -errno;
    return 0;
}

int cz_end_with_parent(int parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) return -errno;
    // The parent may have died before the call: then no signal would ever come.
    if (getppid() != parent) raise(SIGTERM);
    return 0;
}

// MARK: - Logging and decode-error counting

static int print_level_setting = AV_LOG_QUIET;

static void cz_log_callback(void *avcl, int level, const char *fmt, va_list vl) {
    if (avcl && level <= AV_LOG_ERROR && fmt && strncmp(fmt, "concealing", 10) == 0) {
        const AVClass *cls = *(const AVClass **)avcl;
        if (cls == avcodec_get_class()) {
            AVCodecContext *ctx = avcl;
            if (ctx->opaque && ctx->codec_type == AVMEDIA_TYPE_VIDEO)
                atomic_fetch_add((atomic_int *)ctx->opaque, 1);
        }
    }
    if (level <= print_level_setting) av_log_default_callback(avcl, level, fmt, vl);
}

void cz_log_install(int print_level) {
    print_level_setting = print_level;
    av_log_set_level(print_level > AV_LOG_ERROR ? print_level : AV_LOG_ERROR);
    av_log_set_callback(cz_log_callback);
}

void *cz_counter_new(void) {
    atomic_int *c = malloc(sizeof *c);
    if (c) atomic_init(c, 0);
    return c;
}

int cz_counter_get(void *counter) { return counter ? atomic_load((atomic_int *)counter) : 0; }

void cz_counter_free(void *counter) { free(counter); }

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

// MARK: - Plane kernels

void cz_plane_orthogonal(const uint8_t *src, int src_stride, uint8_t *dst, int dst_stride,
                         int dst_w, int dst_h, int elem,
                         int ox, int oy, int xx, int xy, int yx, int yy) {
    // Step in bytes through the source for one destination column (x+1) and row (y+1).
    const ptrdiff_t step_x = (ptrdiff_t)xx * elem + (ptrdiff_t)yx * src_stride;
    const ptrdiff_t step_y = (ptrdiff_t)xy * elem + (ptrdiff_t)yy * src_stride;
    const uint8_t *row_start = src + (ptrdiff_t)oy * src_stride + (ptrdiff_t)ox * elem;
    for (int y = 0; y < dst_h; y++) {
        const uint8_t *s = row_start + (ptrdiff_t)y * step_y;
        uint8_t *d = dst + (ptrdiff_t)y * dst_stride;
        if (step_x == elem) {
            memcpy(d, s, (size_t)dst_w * elem);
            continue;
        }
        switch (elem) {
        case 1:
            for (int x = 0; x < dst_w; x++, s += step_x) d[x] = *s;
            break;
        case 2:
            for (int x = 0; x < dst_w; x++, s += step_x) memcpy(d + 2 * x, s, 2);
            break;
        case 4:
            for (int x = 0; x < dst_w; x++, s += step_x) memcpy(d + 4 * x, s, 4);
            break;
        default:
            for (int x = 0; x < dst_w; x++, s += step_x) memcpy(d + (ptrdiff_t)elem * x, s, (size_t)elem);
            break;
        }
    }
}

// MARK: - Thread priority

int cz_lower_thread_priority(int by) {
    // On Linux the nice value is per thread: PRIO_PROCESS with a thread id reads and sets that
    // thread's. Relative to the current value, so `nice -n 5 cropzoom` stays 5 lower still.
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int current = getpriority(PRIO_PROCESS, tid);
    if (current == -1 && errno != 0) return -errno;
    if (setpriority(PRIO_PROCESS, tid, current + by) != 0) return -errno;
    return 0;
}
