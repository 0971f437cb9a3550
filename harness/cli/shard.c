/* SPDX-License-Identifier: MIT */
/* Which shard this run is (docs/cli.md#sharding): --shard K/N, else the CI
 * engines' own variables, spoken exactly as they define them: GoogleTest
 * GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS, 0-based (googletest/docs/advanced.md,
 * "Distributing Test Functions to Multiple Machines"); Bazel TEST_SHARD_INDEX /
 * TEST_TOTAL_SHARDS, 0-based, and TEST_SHARD_STATUS_FILE touched to say the
 * binary shards (Bazel's test encyclopedia, "Test sharding"); GitLab
 * CI_NODE_INDEX / CI_NODE_TOTAL, 1-based, for `parallel:` jobs; GitLab sets
 * CI_NODE_TOTAL=1 in every other job, so CI_NODE_TOTAL alone, or 1, is
 * unsharded (GitLab CI/CD variables reference); CircleCI    CIRCLE_NODE_INDEX /
 * CIRCLE_NODE_TOTAL, 0-based, for `parallelism:` jobs (CircleCI's project
 * values and variables reference); Buildkite   BUILDKITE_PARALLEL_JOB /
 * BUILDKITE_PARALLEL_JOB_COUNT, 0-based, for `parallelism:` steps (Buildkite's
 *               environment variables reference).
 * A pair whose total is 1 is unsharded and agrees with every other; the
 * first pair present names the source (docs/cli.md#sharding).
 * Conflicts are usage errors: a silently wrong shard runs the wrong cases
 * and still passes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_internal.h"

#define MAX_SHARDS 65536u

/* Decimal digits only, at most max: 1, else 0. */
static int parse_count(const char *s, unsigned long max, unsigned long *out) {
  char *end;
  unsigned long v;
  if (s[0] < '0' || s[0] > '9')
    return 0;
  errno = 0;
  v = strtoul(s, &end, 10);
  if (*end != '\0' || errno == ERANGE || v > max)
    return 0;
  *out = v;
  return 1;
}

int st__shard_parse(const char *text, st__shard *out) {
  const char *slash = strchr(text, '/');
  char k[32];
  unsigned long idx, total;

  memset(out, 0, sizeof *out);
  if (slash == NULL || (size_t)(slash - text) >= sizeof k)
    goto bad;
  memcpy(k, text, (size_t)(slash - text));
  k[slash - text] = '\0';
  if (!parse_count(k, MAX_SHARDS, &idx) ||
      !parse_count(slash + 1, MAX_SHARDS, &total) || total < 1 || idx >= total)
    goto bad;
  out->index = (unsigned)idx;
  out->total = (unsigned)total;
  out->source = "--shard";
  return 0;
bad:
  return st__cli_usage(
      "--shard must be K/N with 0 <= K < N <= 65536 (got '%s')", text);
}

/* One engine's pair. */
typedef struct pair {
  const char *index_var, *total_var, *source;
  int one_based;
} pair;

static const pair pairs[] = {
    {"GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS",
     "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS", 0},
    {"TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS",
     "TEST_SHARD_INDEX/TEST_TOTAL_SHARDS", 0},
    {"CI_NODE_INDEX", "CI_NODE_TOTAL", "CI_NODE_INDEX/CI_NODE_TOTAL", 1},
    {"CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL",
     "CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL", 0},
    {"BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT",
     "BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT", 0},
};

/* Reads one pair: 0 with out->total 0 when absent (or, for GitLab,
 * unsharded), 0 with the shard, or 2. */
static int read_pair(const pair *p, st__shard *out) {
  const char *idx = getenv(p->index_var), *tot = getenv(p->total_var);
  unsigned long i, t;

  memset(out, 0, sizeof *out);
  if (p->one_based) {
    /* GitLab sets CI_NODE_TOTAL=1 in every job; only a parallel job
     * has CI_NODE_INDEX. */
    if (tot != NULL && idx == NULL)
      return 0;
    if (tot != NULL && strcmp(tot, "1") == 0 &&
        (idx == NULL || strcmp(idx, "1") == 0))
      return 0;
  }
  if (idx == NULL && tot == NULL)
    return 0;
  if (idx == NULL || tot == NULL)
    return st__cli_usage("%s is set but %s is not; set both or neither",
                         idx != NULL ? p->index_var : p->total_var,
                         idx != NULL ? p->total_var : p->index_var);
  if (!parse_count(tot, MAX_SHARDS, &t) || t < 1 ||
      !parse_count(idx, MAX_SHARDS, &i) ||
      (p->one_based ? (i < 1 || i > t) : i >= t))
    return st__cli_usage("%s='%s' and %s='%s' do not name a shard (%s: 1 <= "
                         "total <= 65536, %s)",
                         p->index_var, idx, p->total_var, tot, p->source,
                         p->one_based ? "1 <= index <= total"
                                      : "0 <= index < total");
  out->index = (unsigned)(p->one_based ? i - 1 : i);
  out->total = (unsigned)t;
  out->source = p->source;
  return 0;
}

/* Shards compared as the cases they select: every N/1 is unsharded. */
static int same_shard(const st__shard *a, const st__shard *b) {
  unsigned at = a->total > 1 ? a->total : 0, bt = b->total > 1 ? b->total : 0;
  return at == bt && (at == 0 || a->index == b->index);
}

static void describe(const st__shard *s, char *buf, size_t size) {
  if (s->total > 1)
    snprintf(buf, size, "shard %u/%u", s->index, s->total);
  else
    snprintf(buf, size, "unsharded");
}

/* Creates the file or updates its mtime, as touch(1) does. */
static int touch_status_file(void) {
  const char *path = getenv("TEST_SHARD_STATUS_FILE");
  int fd;
  if (path == NULL || path[0] == '\0')
    return 0;
  fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0 || futimens(fd, NULL) != 0) {
    int e = errno;
    if (fd >= 0)
      close(fd);
    return st__cli_usage("cannot touch TEST_SHARD_STATUS_FILE '%s': %s", path,
                         strerror(e));
  }
  close(fd);
  return 0;
}

int st__shard_resolve(const st__shard *option, int touch, st__shard *out) {
  st__shard found, first;
  char a[48], b[48];
  size_t i;
  int rc, have = 0;

  memset(&first, 0, sizeof first);
  for (i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    if ((rc = read_pair(&pairs[i], &found)) != 0)
      return rc;
    if (found.source == NULL || found.total <= 1)
      continue;
    if (have && !same_shard(&first, &found)) {
      describe(&first, a, sizeof a);
      describe(&found, b, sizeof b);
      return st__cli_usage("%s says %s but %s says %s", first.source, a,
                           found.source, b);
    }
    if (!have)
      first = found;
    have = 1;
  }
  if (option->total > 1 && have && !same_shard(option, &first)) {
    describe(option, a, sizeof a);
    describe(&first, b, sizeof b);
    return st__cli_usage("--shard says %s but %s says %s", a, first.source, b);
  }
  *out = option->total > 0 ? *option : first;
  if (out->total <= 1)
    memset(out, 0, sizeof *out);
  if (touch && (rc = touch_status_file()) != 0)
    return rc;
  return 0;
}
