/* SPDX-License-Identifier: MIT */
/* Writing tensors as NumPy .npy files (harness/case/npy.c). */
#ifndef SCENETEST_HARNESS_NPY_H
#define SCENETEST_HARNESS_NPY_H

#include <scenetest/tensor.h>

/* Writes t to root/scene/kase/stem.npy in the NPY format version 1.0,
 * or, for bfloat16 and FP8 (which numpy lacks), their exact float32 values
 * to .../stem.bf16-as-f32.npy, .../stem.float8_e4m3fn-as-f32.npy or
 * .../stem.float8_e5m2-as-f32.npy (docs/scene-format.md#compare). root is
 * created (with parents) as the user named it; below it no symlink is
 * followed: scene and kase are directories opened with O_NOFOLLOW, the
 * file replaces what had its name and is created with O_EXCL
 * (docs/reliability.md). The file's path goes to path (size bytes).
 * Thread-safety: any thread. */
st_status st__npy_write(const char *root /* IN */, const char *scene /* IN */,
                        const char *kase /* IN */, const char *stem /* IN */,
                        const st_tensor *t /* IN */, char *path /* OUT */,
                        size_t size) ST_WUR;

#endif
