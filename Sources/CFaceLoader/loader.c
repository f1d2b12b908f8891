// CFaceLoader: opens libCropZoomFaces.so (CFaceDetect) on first use and calls through to it (see CFaceLoader.h).
#define _GNU_SOURCE
#include "CFaceLoader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    cz_faces *(*faces_new)(const char *);
    void (*faces_free)(cz_faces *);
    int (*faces_detect)(cz_faces *, const uint8_t *, int, int, int, int, int *, int);
    cz_patch *(*patch_new)(void);
    void (*patch_free)(cz_patch *);
    int (*patch_set)(cz_patch *, const uint8_t *, int, int, int, const int[4]);
    double (*patch_find)(const cz_patch *, const uint8_t *, int, int, int, double, double, int, double[2]);
    cz_compare *(*compare_new)(void);
    void (*compare_free)(cz_compare *);
    int (*frame_compare)(cz_compare *, const uint8_t *, const uint8_t *, int, int, int, double, int, cz_change *);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[1024];
static int loaded;

static void load(void) {
    char path[4096];
    const char *given = getenv("CROPZOOM_FACES_LIBRARY");
    if (given && *given) {
        snprintf(path, sizeof path, "%s", given);
    } else {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 64);
        if (n <= 0) {
            snprintf(why, sizeof why, "cannot find the running executable's folder (/proc/self/exe)");
            return;
        }
        path[n] = 0;
        char *slash = strrchr(path, '/');
        char *folder_end = slash ? slash + 1 : path;
        // Beside the executable (a build folder), else where install.sh puts it: PREFIX/lib/cropzoom/.
        strcpy(folder_end, "../lib/cropzoom/libCropZoomFaces.so");
        if (access(path, R_OK) != 0) strcpy(folder_end, "libCropZoomFaces.so");
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, sizeof why, "%s", dlerror());
        return;
    }
    struct { const char *name; void **slot; } table[] = {
        {"cz_faces_new", (void **)&api.faces_new},     {"cz_faces_free", (void **)&api.faces_free},
        {"cz_faces_detect", (void **)&api.faces_detect}, {"cz_patch_new", (void **)&api.patch_new},
        {"cz_patch_free", (void **)&api.patch_free},   {"cz_patch_set", (void **)&api.patch_set},
        {"cz_patch_find", (void **)&api.patch_find},   {"cz_compare_new", (void **)&api.compare_new},
        {"cz_compare_free", (void **)&api.compare_free}, {"cz_frame_compare", (void **)&api.frame_compare},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        *table[i].slot = dlsym(h, table[i].name);
        if (!*table[i].slot) {
            snprintf(why, sizeof why, "%s: %s is missing (an older plugin?)", path, table[i].name);
            dlclose(h);
            memset(&api, 0, sizeof api);
            return;
        }
    }
    loaded = 1;
}

const char *czl_error(void) {
    pthread_once(&once, load);
    return loaded ? NULL : why;
}

cz_faces *czl_faces_new(const char *path) { return czl_error() ? NULL : api.faces_new(path); }

void czl_faces_free(cz_faces *f) {
    if (f && loaded) api.faces_free(f);
}

int czl_faces_detect(cz_faces *f, const uint8_t *plane, int width, int height, int stride, int min_size, int *boxes,
                     int max) {
    return loaded ? api.faces_detect(f, plane, width, height, stride, min_size, boxes, max) : -1;
}

cz_patch *czl_patch_new(void) { return czl_error() ? NULL : api.patch_new(); }

void czl_patch_free(cz_patch *p) {
    if (p && loaded) api.patch_free(p);
}

int czl_patch_set(cz_patch *p, const uint8_t *plane, int width, int height, int stride, const int box[4]) {
    return loaded ? api.patch_set(p, plane, width, height, stride, box) : -1;
}

double czl_patch_find(const cz_patch *p, const uint8_t *plane, int width, int height, int stride, double x, double y,
                      int radius, double out[2]) {
    return loaded ? api.patch_find(p, plane, width, height, stride, x, y, radius, out) : -2;
}

cz_compare *czl_compare_new(void) { return czl_error() ? NULL : api.compare_new(); }

void czl_compare_free(cz_compare *c) {
    if (c && loaded) api.compare_free(c);
}

int czl_frame_compare(cz_compare *c, const uint8_t *previous, const uint8_t *current, int width, int height,
                      int stride, double threshold, int region, cz_change *out) {
    return loaded ? api.frame_compare(c, previous, current, width, height, stride, threshold, region, out) : -1;
}
