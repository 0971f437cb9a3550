/* SPDX-License-Identifier: MIT */
/* Quarantine (docs/scene-format.md#quarantine): its dates, whether it
 * applies to a run, and its copies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scene/quarantine.h"

int st__quarantine_date_ok(const char *s) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int y, m, d, i;
  if (s == NULL || strlen(s) != 10 || s[4] != '-' || s[7] != '-')
    return 0;
  for (i = 0; i < 10; i++)
    if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9'))
      return 0;
  y = atoi(s);
  m = (s[5] - '0') * 10 + (s[6] - '0');
  d = (s[8] - '0') * 10 + (s[9] - '0');
  if (y < 1 || m < 1 || m > 12 || d < 1)
    return 0;
  if (m == 2 && (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
    return d <= 29;
  return d <= days[m - 1];
}

void st__quarantine_today(char *buf) {
  const char *fixed = getenv("SCENETEST_TODAY");
  time_t t;
  struct tm tm;
  if (fixed != NULL && st__quarantine_date_ok(fixed)) {
    memcpy(buf, fixed, 11);
    return;
  }
  t = time(NULL);
  if (gmtime_r(&t, &tm) == NULL || strftime(buf, 11, "%Y-%m-%d", &tm) != 10)
    memcpy(buf, "1970-01-01", 11);
}

/* YYYY-MM-DD strings order as their dates: strcmp compares them. */
int st__quarantine_expired(const st__quarantine *q, const char *today) {
  return q != NULL && strcmp(today, q->until) > 0;
}

int st__quarantine_applies(const st__quarantine *q, const char *platform,
                           const char *today) {
  size_t i;
  if (q == NULL || st__quarantine_expired(q, today))
    return 0;
  if (q->platforms == NULL)
    return 1;
  for (i = 0; i < q->n_platforms; i++)
    if (platform != NULL && q->platforms[i] != NULL &&
        strcmp(q->platforms[i], platform) == 0)
      return 1;
  return 0;
}

void st__quarantine_free(st__quarantine *q) {
  size_t i;
  if (q == NULL)
    return;
  free(q->reason);
  for (i = 0; q->platforms != NULL && i < q->n_platforms; i++)
    free(q->platforms[i]);
  free(q->platforms);
  free(q);
}

st__quarantine *st__quarantine_copy(const st__quarantine *q, int *oom) {
  st__quarantine *c;
  size_t i;
  if (q == NULL)
    return NULL;
  c = calloc(1, sizeof *c);
  if (c == NULL)
    goto fail;
  memcpy(c->until, q->until, sizeof c->until);
  c->strict = q->strict;
  if (q->reason != NULL && (c->reason = strdup(q->reason)) == NULL)
    goto fail;
  if (q->platforms != NULL) {
    c->platforms =
        calloc(q->n_platforms ? q->n_platforms : 1, sizeof *c->platforms);
    if (c->platforms == NULL)
      goto fail;
    c->n_platforms = q->n_platforms;
    for (i = 0; i < q->n_platforms; i++)
      if (q->platforms[i] != NULL &&
          (c->platforms[i] = strdup(q->platforms[i])) == NULL)
        goto fail;
  }
  return c;
fail:
  st__quarantine_free(c);
  *oom = 1;
  return NULL;
}
