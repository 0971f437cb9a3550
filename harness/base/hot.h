/* SPDX-License-Identifier: MIT */
/* ST_HOT_CLONES, the attribute for the few hot loops (compare's all-close
 * pass, fill's uniform float32 blocks) that gcc builds twice, for AVX2 and
 * for the baseline, picking one at load time where the CPU has AVX2: gcc 12
 * without -march stays at SSE2. Elsewhere it expands to nothing. */
#ifndef SCENETEST_HARNESS_HOT_H
#define SCENETEST_HARNESS_HOT_H

/* Not under ThreadSanitizer: the ifunc resolver of a clone runs before the
 * TSan runtime is initialised and crashes the program at load. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&         \
    defined(__has_attribute) && !defined(__SANITIZE_THREAD__)
#if __has_attribute(target_clones)
#define ST_HOT_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef ST_HOT_CLONES
#define ST_HOT_CLONES
#endif

#endif
