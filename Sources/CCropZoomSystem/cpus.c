#define _GNU_SOURCE
#include "CCropZoomSystem.h"

#include <sched.h>
#include <stdlib.h>

int cz_affinity_cpu_count(void) {
    // Grow the mask until it holds every CPU the kernel knows (EINVAL: too small).
    for (int cpus = 1024; cpus <= 1 << 20; cpus *= 2) {
        cpu_set_t *set = CPU_ALLOC(cpus);
        if (!set) return 0;
        size_t size = CPU_ALLOC_SIZE(cpus);
        CPU_ZERO_S(size, set);
        int r = sched_getaffinity(0, size, set);
        int n = r == 0 ? CPU_COUNT_S(size, set) : 0;
        CPU_FREE(set);
        if (r == 0) return n;
    }
    return 0;
}
