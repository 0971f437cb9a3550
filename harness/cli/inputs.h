/* SPDX-License-Identifier: MIT */
/* The files a run reads (its scene paths, the scenes found in the
 * directories among them, its plugins, the --rerun-failed report), so
 * that no output (--log-file, --output, --report, --events) is opened,
 * and so truncated, when it names one of them (docs/cli.md). Files are
 * told apart by device and inode, so a hard link or a symlink to an
 * input is that input. CLI-private. */
#ifndef SCENETEST_HARNESS_INPUTS_H
#define SCENETEST_HARNESS_INPUTS_H

#include <stddef.h>
#include <sys/types.h>

typedef struct st__input {
  const char *what; /* "scene", "plugin", ...: borrowed */
  const char *path; /* as given: borrowed */
  dev_t dev;
  ino_t ino;
  int is_dir; /* a directory of scenes */
} st__input;

typedef struct st__inputs {
  st__input *items;
  size_t n, cap;
} st__inputs;

/* Adds path (what it is for the message) when it exists; a path that
 * does not is no file an output can clobber. 0, or -1 out of memory.
 * what and path must outlive in. Thread-safety: one thread per in. */
int st__inputs_add(st__inputs *in /* IN/OUT */, const char *what /* IN */,
                   const char *path /* IN */);
void st__inputs_free(st__inputs *in /* IN/OUT */);

/* The input that the output path names: an input file with its device
 * and inode, or a scene file (.yaml, .yml) below an input directory;
 * NULL when none (or when path does not exist yet).
 * Thread-safety: any thread. */
const st__input *st__inputs_named_by(const st__inputs *in /* IN */,
                                     const char *path /* IN */);

#endif
