// The orthogonal plane copy (see CPlaneKernels.h, "Orthogonal turns").
#include "CPlaneKernels.h"

#include <string.h>

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
