/* SPDX-License-Identifier: MIT */
/* The autoload records of a run as the JSON and JUnit reports show them
 * (docs/cli.md#json): each record line kept by the case that emitted it, parsed
 * into its fields, and the distinct ones (compared in every field but
 * pid). CLI-private. */
#ifndef SCENETEST_HARNESS_AUTOLOAD_H
#define SCENETEST_HARNESS_AUTOLOAD_H

#include <scenetest/run.h>

typedef struct st__record_field {
  char *key;   /* "setting", "raw", ..., "torch_imported", "NAME_loaded" */
  char *value; /* as printed: raw keeps its quotes and escapes */
} st__record_field;

/* One record: its fields in line order, pid apart. */
typedef struct st__record {
  long pid;
  st__record_field *fields;
  size_t n;
} st__record;

/* The distinct records of run's cases, in the order they first appear;
 * each keeps the pid of its first carrier. *out is the caller's
 * (st__records_free); *n may be 0. A line that does not parse is left
 * out. ST_ENOMEM. Thread-safety: any thread. */
st_status st__records_distinct(const st_run_result *run /* IN */,
                               st__record **out /* OUT */,
                               size_t *n /* OUT */) ST_WUR;
/* Accepts NULL. */
void st__records_free(st__record *list /* IN, owned */, size_t n);

/* How many different autoload settings list's n records carry: records
 * compared in every field but pid and the watched modules' (setting, raw,
 * effective). Two processes of one run under one environment differ in a
 * module's field when one started at a case that loads the module (a
 * lazy plugin, in golden) and the other did not: a crash's replacement
 * child, a -j or --isolate child. 0 when n is 0. */
size_t st__records_settings(const st__record *list /* IN */, size_t n);

/* The module name of a field that says whether a watched module is
 * loaded ("torch_imported" -> "torch", "NAME_loaded" -> "NAME") into buf,
 * or NULL for any other field. */
const char *st__record_module(const char *key /* IN */, char *buf /* OUT */,
                              size_t size);

#endif
