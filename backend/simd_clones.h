// NN_SIMD_CLONES: a loop function built twice, for the x86-64 baseline
// (SSE2: four floats a vector) and for x86-64-v3 (AVX2: eight), the build
// for this CPU chosen once when the program loads (GCC's target_clones, an
// ifunc), so that one binary runs everywhere and uses the wider vectors
// where there are some: exp, tanh, erf and the like are arithmetic that the
// vector width divides (backend/ops/float_math.h). Both builds give the same
// bits: the project compiles with -ffp-contract=off, so x86-64-v3's fused
// multiply-add is never used for a * b + c, and every other operation is
// IEEE's at either width. Elsewhere (other compilers and machines) and in
// the sanitizer builds (whose runtimes start after ifunc resolvers run) the
// macro is empty: one build of the same source.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__) && \
    !defined(__SANITIZE_ADDRESS__)
#define NN_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define NN_SIMD_CLONES
#endif
