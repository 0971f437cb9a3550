/* SPDX-License-Identifier: MIT */
/* A case's `env` around its phases (docs/scene-format.md): set in the
 * process that runs the case before `args`, put back after the case. */
#ifndef SCENETEST_HARNESS_CASE_ENV_H
#define SCENETEST_HARNESS_CASE_ENV_H

#include "base/env.h"
#include "case/case.h"

/* Sets case ci's environment (the scene's and the case's, merged) and
 * fills cc->env, cc->n_env and cc->env_key. Returns 1 to go on; 0 after
 * making the case an error (out of memory, a variable setenv refuses).
 * Thread-safety: the process's one thread that runs cases. */
int st__case_env_set(st__casectx *cc /* IN/OUT */,
                     const st_scene *scene /* IN */, size_t ci,
                     st__env_saved *saved /* OUT: zeroed by the caller */);
/* Puts the environment back and frees what st__case_env_set made.
 * Call it whatever st__case_env_set returned. */
void st__case_env_unset(st__casectx *cc /* IN/OUT */,
                        st__env_saved *saved /* IN/OUT */);

/* Case ci's golden backend is available (ops/avail.h), or the case does
 * not compute golden: returns 1. Else the case is made a skip whose
 * message says what is missing and how to get it, and 0. Thread-safety: any
 * thread. */
int st__case_needs_ok(st__casectx *cc /* IN/OUT */,
                      const st_scene *scene /* IN */, size_t ci);

#endif
