/* SPDX-License-Identifier: MIT */
/* The caller-allocated option structs (st_run_options, st_load_options,
 * st_observer): their _init functions and the one place that reads a
 * caller's struct by its size into a full copy at this library's layout,
 * so that nothing past the size-check ever sees the caller's struct. */
#ifndef SCENETEST_HARNESS_BASE_OPTIONS_H
#define SCENETEST_HARNESS_BASE_OPTIONS_H

#include <scenetest/run.h>
#include <scenetest/scene.h>

/* Copies the fields of *in that in->size covers into *out; the others get
 * their defaults. in->size below the first layout is ST_EINVAL naming the
 * struct and its _init. Thread-safety: any thread. */
st_status st__run_options_take(const st_run_options *in /* IN */,
                               st_run_options *out /* OUT */,
                               st_error *err /* OUT, may be NULL */) ST_WUR;
st_status st__load_options_take(const st_load_options *in /* IN */,
                                st_load_options *out /* OUT */,
                                st_error *err /* OUT, may be NULL */) ST_WUR;
/* Copies n observers, stepping through in by each one's size field, into
 * *out (malloc'd, n entries at this layout; caller frees; NULL when n is
 * 0). Thread-safety: any thread. */
st_status st__observers_take(const st_observer *in /* IN */, size_t n,
                             st_observer **out /* OUT */,
                             st_error *err /* OUT, may be NULL */) ST_WUR;

#endif
