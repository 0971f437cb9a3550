/* SPDX-License-Identifier: MIT */
/* Setting a case's environment and putting the process's back (env.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"

void st__env_restore(st__env_saved *saved) {
  /* In reverse, so that a name given twice ends as it began. */
  for (size_t i = saved->n; i-- > 0;) {
    if (saved->old[i] != NULL)
      (void)setenv(saved->names[i], saved->old[i], 1);
    else
      (void)unsetenv(saved->names[i]);
    free(saved->names[i]);
    free(saved->old[i]);
  }
  free(saved->names);
  free(saved->old);
  memset(saved, 0, sizeof *saved);
}

st_status st__env_apply(st__env_saved *saved, const char *const *kv, size_t n,
                        st_error *err) {
  st__env_restore(saved);
  if (n == 0)
    return ST_OK;
  saved->names = calloc(n, sizeof *saved->names);
  saved->old = calloc(n, sizeof *saved->old);
  if (saved->names == NULL || saved->old == NULL) {
    st__env_restore(saved);
    return st_error_set(err, ST_ENOMEM, "out of memory setting env");
  }
  for (size_t i = 0; i < n; i++) {
    const char *name = kv[2 * i], *old = getenv(name);
    char *name_copy = strdup(name), *old_copy = old ? strdup(old) : NULL;
    if (name_copy == NULL || (old != NULL && old_copy == NULL)) {
      free(name_copy);
      free(old_copy);
      st__env_restore(saved);
      return st_error_set(err, ST_ENOMEM, "out of memory setting env");
    }
    saved->names[saved->n] = name_copy;
    saved->old[saved->n] = old_copy;
    saved->n++;
    if (setenv(name, kv[2 * i + 1], 1) != 0) {
      int e = errno;
      st__env_restore(saved);
      return st_error_set(err, e == ENOMEM ? ST_ENOMEM : ST_EINVAL,
                          "env: cannot set '%s': %s", name, strerror(e));
    }
  }
  return ST_OK;
}
