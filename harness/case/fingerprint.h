/* SPDX-License-Identifier: MIT */
/* The environment fingerprint (docs/bench.md#the-environment-fingerprint):
 * CPU model, logical CPUs, scaling governor, kernel release, libc and
 * torch versions, and what the platform's `describe` hook adds (its keys
 * prefixed with the platform's name). Logged once per process, right
 * after its first autoload record, as
 * `[TIMING] fingerprint KEY="VALUE" ...`, and part of every bench
 * result. */
#ifndef SCENETEST_HARNESS_CASE_FINGERPRINT_H
#define SCENETEST_HARNESS_CASE_FINGERPRINT_H

#include <stddef.h>

#include <scenetest/registry.h>

#define ST__FP_MAX 32

typedef struct st__fingerprint {
  size_t n;
  char key[ST__FP_MAX][64];
  char value[ST__FP_MAX][256]; /* unescaped */
} st__fingerprint;

/* The fingerprint of this process for platform (reg: its describe hook;
 * may be NULL). Thread-safety: any thread. */
void st__fingerprint_collect(st_registry *reg /* IN, may be NULL */,
                             const char *platform /* IN, may be NULL */,
                             st__fingerprint *fp /* OUT */);

/* "fingerprint KEY=\"VALUE\" ..." with the values escaped as the record's
 * raw (case/record.h) into buf. */
void st__fingerprint_format(const st__fingerprint *fp /* IN */,
                            char *buf /* OUT */, size_t size);

/* Logs the fingerprint line once per process (by pid: a forked child
 * logs its own). Thread-safety: any thread. */
void st__fingerprint_log_once(st_registry *reg /* IN, may be NULL */,
                              const char *platform /* IN, may be NULL */);

#endif
