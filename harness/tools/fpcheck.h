/* SPDX-License-Identifier: MIT */
/* `compare` against two sides' environment fingerprints (docs/bench.md,
 * docs/measuring.md): the sets of distinct fingerprints must be the same,
 * field by field, clock fields and --ignore-env fields left out. */
#ifndef SCENETEST_HARNESS_TOOLS_FPCHECK_H
#define SCENETEST_HARNESS_TOOLS_FPCHECK_H

#include <stdio.h>

#include "tools/samples.h"

/* A clock field (its key holds "mhz" or "clock"): shown, never refused. */
int st__fp_is_clock(const char *key /* IN */, size_t len);

/* -1: go on (the same, or a side without a fingerprint line: a warning
 * on err); else the exit status of a refusal, the fields printed on err. */
int st__fp_check(const st__side *base /* IN */, const st__side *nw /* IN */,
                 const char *base_name /* IN */, const char *new_name /* IN */,
                 const char *const *ignore /* IN */, size_t n_ignore,
                 FILE *err /* IN */);

#endif
