/* SPDX-License-Identifier: MIT */
/* The compare phase's failure report (harness/case/mismatch.c). */
#ifndef SCENETEST_HARNESS_MISMATCH_H
#define SCENETEST_HARNESS_MISMATCH_H

#include "case/args.h"
#include "scene/scene.h"

/* Where a failing compare's tensors go as .npy files (--dump-on-fail):
 * dir/SCENE/CASE/; NULL dir: nowhere. */
typedef struct st__dump {
  const char *dir;
  const char *scene;
  const char *kase;
} st__dump;

/* Compares every tensor of one round (inputs bit-exactly against their
 * pre-run copy init, compared outputs and inouts against gold) and, when
 * any differs, writes the report to *text (malloc'd, the caller frees):
 * its first line is docs/scene-format.md#compare's one-line message of the
 * first failing tensor; then the round and how many tensors differ; then for
 * every failing tensor the mismatch count and percentage, the first and the
 * greatest differences in torch.testing's wording and a table of up to 8
 * mismatching elements (for a modified input, the first changed element
 * before and after); and the .npy files written under dump. Returns the
 * number of failing tensors (*text NULL when 0), or (size_t)-1 when out
 * of memory. Thread-safety: any thread. */
size_t st__mismatch_report(const st__plan *plan /* IN */,
                           const st__argset *args /* IN */,
                           const st__argset *gold /* IN */,
                           const st__argset *init /* IN */, unsigned round,
                           unsigned rounds, const st__dump *dump /* IN */,
                           char **text /* OUT */);

#endif
