#include "cpu_features.h"

#if defined(__x86_64__)
#include <stdatomic.h>

// Workers ask at once: the cached answer is atomic (a plain static was a data race, found by ThreadSanitizer;
// every thread computes the same value, so a relaxed store is enough).
int cz_cpu_features(void) {
    static _Atomic int cached = -1;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        __builtin_cpu_init();
        v = (__builtin_cpu_supports("avx2") ? CZ_CPU_AVX2 : 0) | (__builtin_cpu_supports("fma") ? CZ_CPU_FMA : 0);
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
            && __builtin_cpu_supports("avx512bw"))
            v |= CZ_CPU_AVX512;
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v;
}
#else
int cz_cpu_features(void) { return 0; }
#endif
