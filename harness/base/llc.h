/* SPDX-License-Identifier: MIT */
/* The CPU's last-level cache size, for the bench's buffers
 * (docs/bench.md). */
#ifndef SCENETEST_HARNESS_BASE_LLC_H
#define SCENETEST_HARNESS_BASE_LLC_H

#include <stdint.h>

/* The largest cache of CPU 0 in sysfs (cpu0/cache/indexN/size), or 0
 * when unknown. */
uint64_t st__llc_bytes(void);

#endif
