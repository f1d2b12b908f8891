/*
 * CFaceDetect: the faces `cropzoom --follow` looks for (issue 30), and the tracker that keeps them between detections.
 * The only target that includes or links OpenCV (4.6, Debian's libopencv-objdetect-dev; the cascade files from
 * opencv-data): C functions over plain 8-bit grey planes, no FFmpeg, no Swift type. OpenCV's exceptions stop here
 * (every function catches them and returns an error value). Built as a plugin (the `CropZoomFaces` product,
 * libCropZoomFaces.so), which cropzoom opens only when it reframes (CFaceLoader): no other job loads OpenCV.
 *
 * Detector: a Viola-Jones cascade (`cv::CascadeClassifier::detectMultiScale`); the choice among the cascades Debian
 * ships is measured in Benchmarks/results/face-detectors.md (Haar frontal alt2: 98 of 100 LFW faces, no false
 * one). Tracker: normalised cross-correlation of the face's patch at its last detection (`cv::matchTemplate`,
 * TM_CCOEFF_NORMED) in a search area around its last position, so a missed detection or a turned head keeps the box.
 */
#ifndef CFACEDETECT_H
#define CFACEDETECT_H

#include "CFaceLoader.h"   // the types (cropzoom reaches these functions through CFaceLoader's czl_NAME)

#ifdef __cplusplus
extern "C" {
#endif

/// Loads the cascade file at `path`; NULL when it cannot be read or is not a cascade.
cz_faces *cz_faces_new(const char *path);
void cz_faces_free(cz_faces *f);

/// Finds faces in an 8-bit grey plane (width x height, stride bytes a row): writes up to `max` boxes as (x, y, w, h)
/// in its pixels, biggest first; returns how many were found, or -1 on an error. `min_size`: the smallest face side
/// looked for, px.
int cz_faces_detect(cz_faces *f, const uint8_t *plane, int width, int height, int stride, int min_size, int *boxes,
                    int max);

cz_patch *cz_patch_new(void);
void cz_patch_free(cz_patch *p);

/// Keeps the plane's pixels inside box (x, y, w, h; clipped to the plane) as the patch. Returns 0, or -1.
int cz_patch_set(cz_patch *p, const uint8_t *plane, int width, int height, int stride, const int box[4]);

/// Looks for the patch in the plane within `radius` px of (x, y) (the box's last top-left corner): writes the best
/// top-left corner (sub-pixel: a parabola through the correlation peak) to out[0], out[1] and returns the
/// normalised correlation there (-1 to 1), or -2 when the patch is unset or the search area is off the plane.
double cz_patch_find(const cz_patch *p, const uint8_t *plane, int width, int height, int stride, double x, double y,
                     int radius, double out[2]);

/// A comparison context; NULL when out of memory. Free with cz_compare_free.
cz_compare *cz_compare_new(void);
void cz_compare_free(cz_compare *c);

/// Compares `previous` and `current` (width x height, stride bytes a row) in `c`; returns 0, or -1 on an error.
/// `threshold`: the grey levels a pixel's blurred difference must exceed to count as moved. `region` 0: the
/// largest region that moved is not looked for (box stays 0: `--follow faces` needs only cuts).
int cz_frame_compare(cz_compare *c, const uint8_t *previous, const uint8_t *current, int width, int height,
                     int stride, double threshold, int region, cz_change *out);

#ifdef __cplusplus
}
#endif
#endif
