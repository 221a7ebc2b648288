// NN_SIMD_CLONES: a loop function built three times, for the x86-64
// baseline (SSE2: four floats a vector), for x86-64-v3 (AVX2: eight) and for
// x86-64-v4 (AVX-512: sixteen), the build for this CPU chosen once when the
// program loads (GCC's target_clones, an ifunc), so that one binary runs
// everywhere and uses the wider vectors where there are some: exp, tanh,
// erf and the like are arithmetic that the vector width divides
// (backend/ops/float_math.h; on an AVX-512 machine exp(a) over 16M floats
// went from 62% to 114-119% of memcpy's rate with the third build, sigmoid
// from 46% to 84-89%, bench_elementwise). Every build gives the same bits:
// the project compiles with -ffp-contract=off, so the fused multiply-add of
// x86-64-v3 and v4 is never used for a * b + c, and every other operation is
// IEEE's at any width. Elsewhere (other compilers and machines) and in the
// sanitizer builds (whose runtimes start after ifunc resolvers run) the
// macro is empty: one build of the same source.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__) && \
    !defined(__SANITIZE_ADDRESS__)
#define NN_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NN_SIMD_CLONES
#endif
