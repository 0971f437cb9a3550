/* SPDX-License-Identifier: MIT */
/* The caller-allocated option structs: _init and reading by size
 * (base/options.h, docs/api.md). A field is taken from the caller's struct
 * only when its size covers the field (ST__HAS_FIELD); every struct's
 * first size-first layout (release 0.2.0) is the minimum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/abi.h"
#include "base/options.h"

/* Takes src->field into dst->field when src's size covers it. */
#define TAKE(dst, src, type, field)                                            \
  do {                                                                         \
    if (ST__HAS_FIELD(src, type, field))                                       \
      (dst)->field = (src)->field;                                             \
  } while (0)

/* The first size-first layouts (0.2.0) end with these fields. */
#define RUN_OPTIONS_MIN ST__SIZE_THROUGH(st_run_options, timeout)
#define LOAD_OPTIONS_MIN ST__SIZE_THROUGH(st_load_options, max_nodes)
#define OBSERVER_MIN ST__SIZE_THROUGH(st_observer, case_finish)

void st_run_options_init(st_run_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->size = sizeof *opts;
  opts->platform = "cpu";
  opts->manual = ST_MANUAL_EXCLUDE;
  opts->jobs = 1;
}

void st_load_options_init(st_load_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->size = sizeof *opts;
  opts->max_arg_bytes = ST_DEFAULT_MAX_ARG_BYTES;
  opts->max_nodes = ST_DEFAULT_MAX_NODES;
  opts->max_file_bytes = ST_DEFAULT_MAX_FILE_BYTES;
}

void st_observer_init(st_observer *obs) {
  memset(obs, 0, sizeof *obs);
  obs->size = sizeof *obs;
}

static st_status too_small(st_error *err, const char *what, size_t size,
                           size_t min, const char *init) {
  return st_error_set(err, ST_EINVAL,
                      "%s has size %zu, less than the %zu of its first "
                      "layout: initialise it with %s()",
                      what, size, min, init);
}

st_status st__run_options_take(const st_run_options *in, st_run_options *out,
                               st_error *err) {
  st_run_options_init(out);
  if (in == NULL)
    return st_error_set(err, ST_EINVAL, "no st_run_options");
  if (in->size < RUN_OPTIONS_MIN)
    return too_small(err, "st_run_options", in->size, RUN_OPTIONS_MIN,
                     "st_run_options_init");
  TAKE(out, in, st_run_options, platform);
  TAKE(out, in, st_run_options, selectors);
  TAKE(out, in, st_run_options, n_selectors);
  TAKE(out, in, st_run_options, manual);
  TAKE(out, in, st_run_options, rounds);
  TAKE(out, in, st_run_options, skip_golden);
  TAKE(out, in, st_run_options, seed);
  TAKE(out, in, st_run_options, jobs);
  TAKE(out, in, st_run_options, golden_threads);
  TAKE(out, in, st_run_options, fail_fast);
  TAKE(out, in, st_run_options, strict_record);
  TAKE(out, in, st_run_options, watch);
  TAKE(out, in, st_run_options, n_watch);
  TAKE(out, in, st_run_options, registry);
  TAKE(out, in, st_run_options, redirect_stdout);
  TAKE(out, in, st_run_options, isolate);
  TAKE(out, in, st_run_options, timeout);
  TAKE(out, in, st_run_options, dump_dir);
  TAKE(out, in, st_run_options, shard_index);
  TAKE(out, in, st_run_options, shard_total);
  TAKE(out, in, st_run_options, repeat);
  TAKE(out, in, st_run_options, shuffle);
  TAKE(out, in, st_run_options, shuffle_seed);
  TAKE(out, in, st_run_options, only_cases);
  TAKE(out, in, st_run_options, n_only_cases);
  TAKE(out, in, st_run_options, use_only_cases);
  TAKE(out, in, st_run_options, keep_record);
  /* Later fields: an older caller's size leaves them at the defaults. */
  TAKE(out, in, st_run_options, golden_platform);
  TAKE(out, in, st_run_options, supervise);
  TAKE(out, in, st_run_options, live);
  TAKE(out, in, st_run_options, interrupts);
  TAKE(out, in, st_run_options, guard_pages);
  TAKE(out, in, st_run_options, shard_preselected);
  TAKE(out, in, st_run_options, strict_mistrust);
  TAKE(out, in, st_run_options, determinism);
  TAKE(out, in, st_run_options, maxfail);
  TAKE(out, in, st_run_options, case_filter);
  TAKE(out, in, st_run_options, case_filter_data);
  TAKE(out, in, st_run_options, first_cases);
  TAKE(out, in, st_run_options, n_first_cases);
  return ST_OK;
}

st_status st__load_options_take(const st_load_options *in, st_load_options *out,
                                st_error *err) {
  st_load_options_init(out);
  if (in == NULL)
    return ST_OK; /* NULL means the defaults (scene.h) */
  if (in->size < LOAD_OPTIONS_MIN)
    return too_small(err, "st_load_options", in->size, LOAD_OPTIONS_MIN,
                     "st_load_options_init");
  TAKE(out, in, st_load_options, max_arg_bytes);
  TAKE(out, in, st_load_options, max_nodes);
  /* Later fields: an older caller's size leaves them at the defaults. */
  TAKE(out, in, st_load_options, max_file_bytes);
  return ST_OK;
}

st_status st__observers_take(const st_observer *in, size_t n, st_observer **out,
                             st_error *err) {
  const unsigned char *p = (const unsigned char *)in;
  st_observer *copy;
  size_t i;

  *out = NULL;
  if (n == 0)
    return ST_OK;
  if (in == NULL)
    return st_error_set(err, ST_EINVAL, "%zu observers but no array", n);
  copy = calloc(n, sizeof *copy);
  if (copy == NULL)
    return st_error_set(err, ST_ENOMEM, "out of memory");
  for (i = 0; i < n; i++) {
    const st_observer *o = (const st_observer *)(const void *)p;
    char what[64];
    if (o->size < OBSERVER_MIN) {
      free(copy);
      snprintf(what, sizeof what, "observer %zu", i);
      return too_small(err, what, o->size, OBSERVER_MIN, "st_observer_init");
    }
    st_observer_init(&copy[i]);
    TAKE(&copy[i], o, st_observer, data);
    TAKE(&copy[i], o, st_observer, run_begin);
    TAKE(&copy[i], o, st_observer, case_begin);
    TAKE(&copy[i], o, st_observer, phase_begin);
    TAKE(&copy[i], o, st_observer, phase_end);
    TAKE(&copy[i], o, st_observer, case_end);
    TAKE(&copy[i], o, st_observer, run_end);
    TAKE(&copy[i], o, st_observer, case_finish);
    p += o->size;
  }
  *out = copy;
  return ST_OK;
}
