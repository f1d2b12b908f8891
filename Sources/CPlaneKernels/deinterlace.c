// Spatial deinterlacing: one field of a frame kept, the other rebuilt from it by an
// edge-directed line average (the spatial part of yadif's filter_line: among the directions
// -2…+2 the pair of neighbouring-line samples that differ least is averaged).
#include "CPlaneKernels.h"

#include <stdlib.h>
#include <string.h>

#define CZ_DEINTERLACE_LINE(T)                                                                     \
    static void interpolate_##T(const T *a, const T *c, T *d, int w) {                             \
        for (int x = 0; x < w; x++) {                                                              \
            int xm1 = x > 0 ? x - 1 : 0, xp1 = x + 1 < w ? x + 1 : w - 1;                           \
            int best = abs((int)a[xm1] - (int)c[xm1]) + abs((int)a[x] - (int)c[x])                  \
                       + abs((int)a[xp1] - (int)c[xp1]);                                            \
            int pred = ((int)a[x] + (int)c[x] + 1) >> 1;                                            \
            for (int side = -1; side <= 1; side += 2) {                                             \
                for (int k = 1; k <= 2; k++) {                                                      \
                    int j = side * k;                                                               \
                    if (x - 1 - k < 0 || x + 1 + k >= w) break;                                     \
                    int score = abs((int)a[x - 1 + j] - (int)c[x - 1 - j])                          \
                                + abs((int)a[x + j] - (int)c[x - j])                                \
                                + abs((int)a[x + 1 + j] - (int)c[x + 1 - j]);                       \
                    if (score >= best) break;                                                       \
                    best = score;                                                                   \
                    pred = ((int)a[x + j] + (int)c[x - j] + 1) >> 1;                                \
                }                                                                                   \
            }                                                                                       \
            d[x] = (T)pred;                                                                         \
        }                                                                                           \
    }

CZ_DEINTERLACE_LINE(uint8_t)
CZ_DEINTERLACE_LINE(uint16_t)

void cz_deinterlace_plane(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst, ptrdiff_t dst_stride,
                          int width, int height, int bytes, int keep) {
    for (int y = 0; y < height; y++) {
        uint8_t *d = dst + (ptrdiff_t)y * dst_stride;
        if ((y & 1) == keep) {
            memcpy(d, src + (ptrdiff_t)y * src_stride, (size_t)width * bytes);
            continue;
        }
        // The kept field's lines above and below; at the picture's edge, the one there is.
        int above = y - 1 >= 0 ? y - 1 : y + 1;
        int below = y + 1 < height ? y + 1 : y - 1;
        if (above >= height || below < 0) {
            memcpy(d, src + (ptrdiff_t)y * src_stride, (size_t)width * bytes);
            continue;
        }
        const uint8_t *a = src + (ptrdiff_t)above * src_stride;
        const uint8_t *c = src + (ptrdiff_t)below * src_stride;
        if (bytes == 1) {
            interpolate_uint8_t(a, c, d, width);
        } else {
            interpolate_uint16_t((const uint16_t *)a, (const uint16_t *)c, (uint16_t *)d, width);
        }
    }
}
