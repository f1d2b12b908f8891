// The tone-mapping kernel alone, at each row kind (plain C, AVX2, AVX-512), on one real picture: a raw 4:4:4
// 16-bit limited-range BT.2020 PQ frame (what the transform hands the kernel) mapped to 8-bit 4:2:0 BT.709.
// Built and run by Benchmarks/tonemap.py:
//   cc -O2 -I Sources/CPlaneKernels/include Benchmarks/tonemap_kernel.c Sources/CPlaneKernels/tonemap.c \
//      Sources/CPlaneKernels/cpu_features.c -lm
//   ./a.out FRAME.yuv WIDTH HEIGHT RUNS   → one line per row kind: level, median ms, fastest ms
#include "CPlaneKernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s FRAME.yuv WIDTH HEIGHT RUNS\n", argv[0]);
        return 2;
    }
    const int w = atoi(argv[2]), h = atoi(argv[3]), runs = atoi(argv[4]);
    const size_t plane = (size_t)w * (size_t)h * 2;
    uint8_t *in = malloc(3 * plane), *out = malloc((size_t)w * (size_t)h * 2);
    FILE *f = fopen(argv[1], "rb");
    if (!f || fread(in, 1, 3 * plane, f) != 3 * plane) {
        fprintf(stderr, "%s: cannot read a %dx%d 4:4:4 16-bit frame\n", argv[1], w, h);
        return 1;
    }
    fclose(f);
    // BT.2020 → BT.709 (ITU-R BT.2087), MaxCLL 1000, BT.2390: the job's default for an HDR10 clip.
    cz_tonemap_params p = {.transfer = CZ_TONEMAP_PQ, .curve = CZ_TONEMAP_BT2390, .source_peak_nits = 1000,
                           .white_nits = 100, .source_kr = 0.2627f, .source_kb = 0.0593f, .output_kr = 0.2126f,
                           .output_kb = 0.0722f,
                           .gamut = {1.6605f, -0.5876f, -0.0728f, -0.1246f, 1.1329f, -0.0083f, -0.0182f, -0.1006f,
                                     1.1187f}};
    cz_tonemap *t = cz_tonemap_new(&p, w);
    const uint8_t *src[3] = {in, in + plane, in + 2 * plane};
    const ptrdiff_t src_stride[3] = {2 * w, 2 * w, 2 * w};
    uint8_t *dst[3] = {out, out + (size_t)w * h, out + (size_t)w * h * 5 / 4};
    const ptrdiff_t dst_stride[3] = {w, w / 2, w / 2};
    double *ms = malloc(sizeof(double) * (size_t)runs);
    for (int level = 0; level <= cz_tonemap_cpu_level(); level++) {
        cz_tonemap_set_simd(t, level);
        for (int r = 0; r < runs; r++) {
            double a = now();
            cz_tonemap_picture(t, src, src_stride, w, h, dst, dst_stride, 8, 1, 1, 0, 1);
            ms[r] = (now() - a) * 1000;
        }
        qsort(ms, (size_t)runs, sizeof(double), by_value);
        printf("%d %.3f %.3f\n", level, ms[runs / 2], ms[0]);
    }
    cz_tonemap_free(t);
    free(ms);
    free(in);
    free(out);
    return 0;
}
