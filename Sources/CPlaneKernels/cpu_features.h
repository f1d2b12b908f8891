// What the CPU can run, asked once for every kernel of the target (private to CPlaneKernels).
#ifndef CZ_CPU_FEATURES_H
#define CZ_CPU_FEATURES_H

enum {
    CZ_CPU_AVX2 = 1,
    CZ_CPU_FMA = 2,
    /// AVX-512 F, VL and BW together (what the AVX-512 rows use).
    CZ_CPU_AVX512 = 4,
};

/// The CZ_CPU_* bits this CPU has (0 off x86-64); cached after the first call.
int cz_cpu_features(void);

#endif
