/* SPDX-License-Identifier: MIT */
/* `scenetest timing` and `scenetest compare` (docs/cli.md#exit-status,
 * docs/measuring.md#the-statistics): the commands over TIMING logs, given
 * parsed options. They return the exit status: 0 done, 1 --fail-above tripped
 * (compare), 2 usage error, unreadable file or refusal. CLI-private (tools
 * layer). */
#ifndef SCENETEST_HARNESS_TIMING_H
#define SCENETEST_HARNESS_TIMING_H

#include <stdio.h>

enum { ST__TOOL_OK = 0, ST__TOOL_TRIPPED = 1, ST__TOOL_REFUSED = 2 };

typedef enum st__tool_format {
  ST__TOOL_TEXT = 0,
  ST__TOOL_JSON = 1,
  ST__TOOL_CSV = 2, /* timing only */
  ST__TOOL_HTML = 3
} st__tool_format;

typedef struct st__timing_opts {
  const char *const *paths; /* files or directories of logs */
  size_t n_paths;
  int keep_first; /* the cold rule off */
  st__tool_format format;
} st__timing_opts;

/* Thread-safety: one thread per out/err. */
int st__timing_main(const st__timing_opts *o /* IN */, FILE *out /* IN */,
                    FILE *err /* IN */);

typedef struct st__compare_opts {
  const char *base, *new_; /* a file or a directory each */
  double alpha;            /* default 0.05 */
  size_t min_samples;      /* default 5 */
  int has_fail_above;
  double fail_above; /* percent */
  int ignore_autoload;
  /* --ignore-env FIELD (docs/bench.md): fingerprint fields accepted when
   * they differ; borrowed from argv. */
  const char *const *ignore_env;
  size_t n_ignore_env;
  int keep_first;
  st__tool_format format; /* text, json or html */
} st__compare_opts;

/* Thread-safety: one thread per out/err. */
int st__compare_main(const st__compare_opts *o /* IN */, FILE *out /* IN */,
                     FILE *err /* IN */);

#endif
