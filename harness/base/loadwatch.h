/* SPDX-License-Identifier: MIT */
/* Watching the dynamic loader's list: which shared objects became loaded
 * since the last look. One list per process, as the loader's is. */
#ifndef SCENETEST_HARNESS_LOADWATCH_H
#define SCENETEST_HARNESS_LOADWATCH_H

#include <scenetest/common.h>

/* Returns (malloc'd array of malloc'd paths, *n entries) the objects that
 * are in the loader's list now and were not at any earlier call in this
 * process; the first call returns nothing and records the list as it is.
 * When nothing was loaded since the last call (dlpi_adds unchanged) it
 * costs one dl_iterate_phdr callback; when something was, it reads the
 * names of the new entries only (while nothing was unloaded). Free with
 * st__loadwatch_free. Thread-safety: any thread; an object is reported to
 * exactly one caller. */
st_status st__loadwatch_poll(char ***out /* OUT */, size_t *n /* OUT */) ST_WUR;
/* A poll whose list is dropped: what is loaded now is attributed to no
 * phase. Thread-safety: any thread. */
void st__loadwatch_prime(void);
/* Frees a list from st__loadwatch_poll (NULL with n 0 too).
 * Thread-safety: any thread. */
void st__loadwatch_free(char **list /* IN: freed */, size_t n);

/* What the watch has done in this process, for the tests that hold it to
 * O(1) per look when nothing changed and O(new objects) when something
 * did (issue 14). */
typedef struct st__loadwatch_stats {
  unsigned long polls;          /* st__loadwatch_poll calls */
  unsigned long names_examined; /* loader entries whose name was read */
  unsigned long sorts;          /* times the seen set was re-sorted */
} st__loadwatch_stats;
/* Thread-safety: any thread. */
void st__loadwatch_get_stats(st__loadwatch_stats *out /* OUT */);

/* Calls fn(path, data) for every object in the loader's list now (the main
 * program's empty name skipped). Stops early when fn returns non-zero.
 * Thread-safety: any thread. */
void st__loadwatch_each(int (*fn)(const char *path /* IN */,
                                  void *data /* IN/OUT */),
                        void *data /* IN/OUT: passed to fn */);

#endif
