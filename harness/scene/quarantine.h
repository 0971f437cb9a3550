/* SPDX-License-Identifier: MIT */
/* A quarantine: `expect:` as a mapping (docs/scene-format.md#quarantine),
 * an expected failure limited to some platforms and to a date, with the
 * reason it is there. The loader fills one; the case applies it. */
#ifndef SCENETEST_HARNESS_SCENE_QUARANTINE_H
#define SCENETEST_HARNESS_SCENE_QUARANTINE_H

#include <stddef.h>

typedef struct st__quarantine {
  char *reason;     /* owned; never NULL in a loaded scene */
  char until[11];   /* YYYY-MM-DD, a valid date */
  char **platforms; /* owned; NULL: every platform */
  size_t n_platforms;
  int strict; /* default 1: an unexpected pass is an xpass */
} st__quarantine;

/* 1 if s is a date YYYY-MM-DD of the Gregorian calendar (years 1 to
 * 9999), else 0. Thread-safety: any thread. */
int st__quarantine_date_ok(const char *s /* IN */);

/* The run's UTC date as YYYY-MM-DD in buf (at least 11 bytes):
 * SCENETEST_TODAY when it holds a valid date (for tests only,
 * docs/cli.md), else today's UTC date. Thread-safety: any thread. */
void st__quarantine_today(char *buf /* OUT */);

/* Whether q applies to a case run on platform on the date today: today
 * <= until and the platform listed (or no list). 0 when q is NULL.
 * Thread-safety: any thread. */
int st__quarantine_applies(const st__quarantine *q /* IN */,
                           const char *platform /* IN */,
                           const char *today /* IN */);

/* Whether q has expired on the date today (today > until). */
int st__quarantine_expired(const st__quarantine *q /* IN */,
                           const char *today /* IN */);

/* A deep copy of q (NULL for NULL); NULL when out of memory, with *oom
 * set. Caller owns it. */
st__quarantine *st__quarantine_copy(const st__quarantine *q /* IN */,
                                    int *oom /* OUT */);

/* Frees q and what it owns; accepts NULL. */
void st__quarantine_free(st__quarantine *q /* IN, owned */);

#endif
