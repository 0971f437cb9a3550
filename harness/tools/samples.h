/* SPDX-License-Identifier: MIT */
/* A side of a measurement: the TIMING lines of one or more log files (a
 * directory counts as its regular files, in name order) read into phase
 * samples and autoload records, the distinct conditions those records
 * describe, docs/measuring.md#timing-what-one-log-says's cold rule, and the
 * samples grouped by (scene, case, phase) with their statistics. What `timing`
 * prints and what `compare` compares. CLI-private (tools layer). */
#ifndef SCENETEST_HARNESS_SAMPLES_H
#define SCENETEST_HARNESS_SAMPLES_H

#include <stdint.h>
#include <stdio.h>

#include <scenetest/common.h>

#include "tools/timelog.h"

/* One distinct autoload condition and the processes that reported it. */
typedef struct st__condition {
  /* The first line seen (its pid is one of pids); malloc'd with room for
   * its n_modules only (a log of many distinct records stays about the
   * size of its lines): never copy it by value. */
  st__tl_record *record;
  long *pids; /* distinct, in order of appearance */
  size_t n_pids;
} st__condition;

/* A (scene, case, phase) group. Rows "run.device" and "run.copy" come
 * from the device_ns/copy_ns fields of run lines. */
typedef struct st__group {
  char *scene, *kase, *phase;
  double *values; /* kept samples (ns), sorted */
  size_t n;       /* kept */
  size_t dropped; /* by the cold rule */
  double min, median, max;
  int has_sum;         /* phase run: min over per-case sums */
  double min_sum;      /* ns */
  size_t sum_rounds;   /* rounds in each summed case */
  unsigned conditions; /* bit i: condition i contributed; see unknown */
  int unknown;         /* a sample from a process with no record */
} st__group;

typedef struct st__side st__side;

/* Reads every path (a file, or a directory's regular files, not hidden,
 * in name order). keep_first: docs/measuring.md#timing-what-one-log-says's cold
 * rule off. On an error writes one line to err, "FILE:LINE:COL: error:
 * malformed TIMING line:
 * ..." (ST_ELOAD) or "scenetest: error: cannot read ..." (ST_EIO), or
 * says out of memory (ST_ENOMEM).
 * Caller frees *out with st__side_free. Thread-safety: any thread. */
st_status st__side_load(const char *const *paths /* IN */, size_t n_paths,
                        int keep_first, FILE *err /* IN */,
                        st__side **out /* OUT, owned */) ST_WUR;
void st__side_free(st__side *s /* IN, owned; may be NULL */);

/* Phase lines read (any status); 0 means no TIMING phase line at all. */
size_t st__side_lines(const st__side *s /* IN */);
size_t st__side_records(const st__side *s /* IN */);
/* The side's distinct environment fingerprints (docs/bench.md): each the
 * text of a `[TIMING] fingerprint` line after "fingerprint", as written. */
size_t st__side_fingerprint_count(const st__side *s /* IN */);
const char *st__side_fingerprint(const st__side *s /* IN */, size_t i);
size_t st__side_condition_count(const st__side *s /* IN */);
const st__condition *st__side_condition(const st__side *s /* IN */, size_t i);
size_t st__side_group_count(const st__side *s /* IN */);
/* Writes g's name as the first members of a JSON object, opening brace
 * included: {"scene": ..., "case": ..., "phase": ... (the caller adds
 * the rest and the closing brace). Thread-safety: one thread per out. */
void st__group_json_open(FILE *out /* IN */, const st__group *g /* IN */);

/* The next group of a, from index *i on, that b has no group of the same
 * scene, case and phase for; *i moves past it. NULL when there is none
 * left. For "only in base/new". Thread-safety: any thread. */
const st__group *st__side_only(const st__side *a /* IN */,
                               const st__side *b /* IN */,
                               size_t *i /* IN/OUT */);

const st__group *st__side_group(const st__side *s /* IN */, size_t i);
/* The group (scene, case, phase), or NULL. */
const st__group *st__side_find(const st__side *s /* IN */,
                               const char *scene /* IN */,
                               const char *kase /* IN */,
                               const char *phase /* IN */);

/* Writes a record's fields as "setting=0 raw=\"0\" effective=... M=...",
 * pid left out. Thread-safety: one thread per f. */
void st__record_print(FILE *f /* IN */, const st__tl_record *r /* IN */);
/* The value of a field of a record as printed ("setting", "raw",
 * "effective", or a module's field: "true"/"false"); NULL when the record
 * has no such field (a module the other run watched).
 * Thread-safety: any thread. */
const char *st__record_field_value(const st__tl_record *r /* IN */,
                                   const char *field /* IN */);
/* The label of condition i: "A".."Z", then "C27", ... */
void st__condition_label(char *buf /* OUT */, size_t size, size_t i);
/* Writes the distinct conditions as a JSON array of {"id", "record":
 * {"setting", "raw", "effective", "fields": {FIELD: bool}}, "pids"}. */
void st__conditions_json(FILE *out /* IN */, const st__side *s /* IN */);
/* Writes a duration in ns with a unit (ns, us, ms, s). */
void st__duration_print(FILE *f /* IN */, double ns);

#endif
