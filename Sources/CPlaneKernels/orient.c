// Quarter turns and mirrors of an 8-bit plane (`--follow`'s analysis picture turned upright by a display matrix).
#include "CPlaneKernels.h"

#include <stdlib.h>

int cz_plane_orient(const uint8_t *src, int sw, int sh, int sstride, int a, int b, int c, int d, uint8_t *dst,
                    int dstride) {
    if (!src || !dst || sw < 1 || sh < 1) return -1;
    if (abs(a) + abs(b) != 1 || abs(c) + abs(d) != 1 || abs(a) + abs(c) != 1) return -1;
    const int swaps = a == 0;
    const int dw = swaps ? sh : sw, dh = swaps ? sw : sh;
    // Upright pixel (u, v) (centred: cu = u + 0.5 - dw / 2) reads the coded pixel of the inverse (transposed) map.
    for (int v = 0; v < dh; v++) {
        uint8_t *row = dst + (size_t)v * dstride;
        for (int u = 0; u < dw; u++) {
            // Twice the centred coordinates, so that everything stays whole.
            int cu = 2 * u + 1 - dw, cv = 2 * v + 1 - dh;
            int cx = a * cu + c * cv, cy = b * cu + d * cv;
            int x = (cx + sw - 1) / 2, y = (cy + sh - 1) / 2;
            row[u] = src[(size_t)y * sstride + x];
        }
    }
    return 0;
}
