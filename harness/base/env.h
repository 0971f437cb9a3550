/* SPDX-License-Identifier: MIT */
/* A case's environment variables (docs/scene-format.md, `env`): set in the
 * process that runs the case and put back as they were after it. setenv is
 * not thread-safe, so only processes that run one case at a time call this
 * (a supervised child, an isolated child, a level-3 worker). */
#ifndef SCENETEST_HARNESS_ENV_H
#define SCENETEST_HARNESS_ENV_H

#include <stddef.h>

#include <scenetest/common.h>

/* What st__env_apply replaced, to put back. Zero it before first use. */
typedef struct st__env_saved {
  char **names; /* owned */
  char **old;   /* owned; NULL: the variable was unset */
  size_t n;
} st__env_saved;

/* Sets the n variables kv[2i] = kv[2i+1] (pairs), first putting back what
 * an earlier apply on saved replaced. ST_ENOMEM (nothing set) or
 * ST_EINVAL with a message in err when setenv refuses a name.
 * Thread-safety: the process's one thread that runs cases. */
st_status st__env_apply(st__env_saved *saved /* IN/OUT */,
                        const char *const *kv /* IN: 2 * n strings */, size_t n,
                        st_error *err /* OUT: may be NULL */) ST_WUR;
/* Puts back every variable the last apply set (unset where it was unset)
 * and empties saved. Accepts a zeroed saved. Thread-safety: as apply. */
void st__env_restore(st__env_saved *saved /* IN/OUT */);

#endif
