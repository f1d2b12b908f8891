/*
 * CFaceLoader: the door to `--follow`'s face detector and frame comparison (CFaceDetect, over OpenCV), which is not
 * linked into cropzoom: it is a plugin, libCropZoomFaces.so beside the executable (the `CropZoomFaces` product),
 * opened with dlopen the first time a reframing job needs it. A job that does not reframe never loads OpenCV (whose
 * libraries, with the dnn module's protobuf, cost every process 9 MiB of memory at start when linked).
 *
 * The types are the plugin's; each czl_NAME calls the plugin's cz_NAME (documented in CFaceDetect.h) and, when the
 * plugin cannot be loaded, returns what that function returns on an error (NULL, -1, -2); czl_error() says why.
 */
#ifndef CFACELOADER_H
#define CFACELOADER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A loaded cascade and its scratch.
typedef struct cz_faces cz_faces;
/// One tracked patch: the picture inside a box at its last detection.
typedef struct cz_patch cz_patch;
/// The comparison's working pictures, kept from frame to frame (nothing allocated per frame once sizes settle).
typedef struct cz_compare cz_compare;

/// What changed between two grey planes of one size (the previous frame's and this one's), for cuts and for the
/// region that moves (`--follow motion`).
typedef struct {
    double block_change;   ///< mean absolute difference of the planes' 32 x 18 block means (0-255): a cut is large
    double histogram;      ///< Bhattacharyya distance of their 32-bin histograms (0 same, 1 disjoint)
    double moved;          ///< share of the picture whose difference (blurred) exceeds the threshold
    double box[4];         ///< x, y, w, h of the largest region that moved (plane px); w = 0: none
} cz_change;

/// Loads the plugin once (thread-safe): from $CROPZOOM_FACES_LIBRARY when set, else ../lib/cropzoom/ from the
/// running executable's folder (an install), else libCropZoomFaces.so beside it (a build folder). NULL when it is
/// loaded, else why not (dlopen's text, or a missing function).
const char *czl_error(void);

cz_faces *czl_faces_new(const char *path);
void czl_faces_free(cz_faces *f);
int czl_faces_detect(cz_faces *f, const uint8_t *plane, int width, int height, int stride, int min_size, int *boxes,
                     int max);
cz_patch *czl_patch_new(void);
void czl_patch_free(cz_patch *p);
int czl_patch_set(cz_patch *p, const uint8_t *plane, int width, int height, int stride, const int box[4]);
double czl_patch_find(const cz_patch *p, const uint8_t *plane, int width, int height, int stride, double x, double y,
                      int radius, double out[2]);
cz_compare *czl_compare_new(void);
void czl_compare_free(cz_compare *c);
int czl_frame_compare(cz_compare *c, const uint8_t *previous, const uint8_t *current, int width, int height,
                      int stride, double threshold, int region, cz_change *out);

#ifdef __cplusplus
}
#endif
#endif
