/* SPDX-License-Identifier: MIT */
/* What the files of the cuda plugin share (cuda_plugin.cu, bench_hooks.cu).
 * Plugin-private. */
#ifndef SCENETEST_PLUGINS_CUDA_INTERNAL_H
#define SCENETEST_PLUGINS_CUDA_INTERNAL_H

#include <cuda_runtime.h>

#include <scenetest/scenetest.h>

/* 1 when this process initialised CUDA itself (a prepare ran here: the
 * context is this process's own, not one inherited through fork), with
 * device 0's properties in *props; 0 otherwise. Thread-safety: any
 * thread. */
int cu__ready_here(cudaDeviceProp *props /* OUT */);

/* The bench hooks (bench_hooks.cu; docs/bench.md#platform-hooks). */
st_status cu__ceilings(st_platform_ceilings *out /* OUT */);
st_status cu__flush(void);
st_status cu__describe(char *buf /* OUT */, size_t size);

#endif
