/* SPDX-License-Identifier: MIT */
/* The JUnit XML reporter (docs/cli.md#junit, docs/cli.md#junit). It writes the
 * whole document when the run ends (the root's counts need every case):
 *
 *   <testsuites name tests failures errors time>       (no `skipped`: the
 *     <testsuite name tests failures errors skipped      schema refuses it)
 *                time timestamp hostname file>        one per scene, in
 *       <properties> platform, seed, shard, repeat,    order of first case
 *         shuffle_seed, autoload.* </properties>
 *       <testcase classname="SCENE" name="CASE[@k]" time>
 *         <failure message type> | <error message type> | <skipped message>
 *         <system-err> what the child printed </system-err>
 *
 * It validates against junit-10.xsd of Jenkins' xUnit plugin (a copy in
 * tests/data/) and is what Jenkins' JUnit plugin, GitLab and junitparser
 * read; --junit-family xunit1 adds testcase file/line as pytest's
 * junit_family does (GitLab shows them; that schema refuses them). Times
 * are seconds written with '.', whatever the locale. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case/result.h"
#include "report/autoload.h"
#include "report/report.h"
#include "report/trust.h"
#include "report/xml.h"
#include "scene/scene.h"

/* One document at run end: the shared reporter state (report.h). */
typedef st__report_doc junit_state;

/* Seconds with '.' as the separator whatever LC_NUMERIC says (printf's
 * %f follows the locale), digits only: the schema's SUREFIRE_TIME. */
static void put_seconds(FILE *out, uint64_t ns) {
  fprintf(out, "%" PRIu64 ".%06" PRIu64, ns / 1000000000u,
          (ns % 1000000000u) / 1000u);
}

static void put_property(FILE *out, const char *name, const char *value) {
  fputs("      <property name=\"", out);
  st__xml_escape(out, name, 1);
  fputs("\" value=\"", out);
  st__xml_escape(out, value, 1);
  fputs("\"/>\n", out);
}

/* The backend that computed the scene's golden (docs/scene-format.md):
 * --golden-platform, else the scene's golden_platform, else reference.
 * A case's own golden_platform is not shown (a testcase has no
 * properties). */
static const char *golden_platform(const junit_state *st, const char *scene) {
  const st_scene_set *set = st->cfg.scenes;
  if (st->cfg.golden_platform != NULL)
    return st->cfg.golden_platform;
  for (size_t i = 0;
       set != NULL && scene != NULL && i < st_scene_set_count(set); i++) {
    const st_scene *s = st_scene_set_get(set, i);
    if (strcmp(st_scene_name(s), scene) == 0)
      return s->golden_platform != NULL ? s->golden_platform : "reference";
  }
  return "reference";
}

static const st_scene *find_scene(const junit_state *st, const char *scene) {
  const st_scene_set *set = st->cfg.scenes;
  for (size_t i = 0;
       set != NULL && scene != NULL && i < st_scene_set_count(set); i++)
    if (strcmp(st_scene_name(st_scene_set_get(set, i)), scene) == 0)
      return st_scene_set_get(set, i);
  return NULL;
}

/* Tags joined by ", " (malloc'd) but those also in skip[0..n_skip),
 * NULL when none is left. */
static char *join_tags(char *const *tags, size_t n, char *const *skip,
                       size_t n_skip) {
  char *buf = NULL;
  size_t len = 0, k = 0;
  FILE *m;
  if (n == 0 || (m = open_memstream(&buf, &len)) == NULL)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (j < n_skip && strcmp(skip[j], tags[i]) != 0)
      j++;
    if (j == n_skip)
      fprintf(m, "%s%s", k++ > 0 ? ", " : "", tags[i]);
  }
  if (k == 0) {
    fclose(m);
    free(buf);
    return NULL;
  }
  if (fclose(m) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* docs/cli.md#junit: the case's own tags (its scene's are the suite's
 * `tags` property) go in <system-out>, a testcase having no properties:
 * the result's tags (the scene's, then the case's own) without the
 * scene's. */
static char *own_tags(const junit_state *st, const st_case_result *res) {
  const st_scene *s = find_scene(st, st_case_result_scene(res));
  const char *name = NULL;
  size_t n = st__case_result_tag(res, 0, &name);
  char **v;
  char *joined;
  if (n == 0 || (v = malloc(n * sizeof *v)) == NULL)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    st__case_result_tag(res, i, &name);
    v[i] = (char *)name;
  }
  joined =
      join_tags(v, n, s != NULL ? s->tags : NULL, s != NULL ? s->n_tags : 0);
  free(v);
  return joined;
}

static void put_properties(FILE *out, const junit_state *st, const char *scene,
                           const st__record *recs, size_t n_recs) {
  char buf[64];
  size_t i;

  fputs("    <properties>\n", out);
  put_property(out, "platform", st->info.platform);
  put_property(out, "golden_platform", golden_platform(st, scene));
  {
    const st_scene *s = find_scene(st, scene);
    char *tags = s != NULL ? join_tags(s->tags, s->n_tags, NULL, 0) : NULL;
    if (tags != NULL)
      put_property(out, "tags", tags);
    free(tags);
  }
  snprintf(buf, sizeof buf, "%" PRIu64, st->info.seed);
  put_property(out, "seed", buf);
  if (st->info.shard_total > 1)
    snprintf(buf, sizeof buf, "%u/%u", st->info.shard_index,
             st->info.shard_total);
  else
    snprintf(buf, sizeof buf, "none");
  put_property(out, "shard", buf);
  snprintf(buf, sizeof buf, "%u", st->info.repeat ? st->info.repeat : 1);
  put_property(out, "repeat", buf);
  if (st->info.shuffle) {
    snprintf(buf, sizeof buf, "%" PRIu64, st->info.shuffle_seed);
    put_property(out, "shuffle_seed", buf);
  }
  /* docs/cli.md#json: the first record's fields, and how many distinct records
   * the run saw (isolated children each emit their own). */
  if (n_recs > 0) {
    char name[256];
    for (i = 0; i < recs[0].n; i++) {
      snprintf(name, sizeof name, "autoload.%s", recs[0].fields[i].key);
      put_property(out, name, recs[0].fields[i].value);
    }
    snprintf(buf, sizeof buf, "%ld", recs[0].pid);
    put_property(out, "autoload.pid", buf);
  }
  snprintf(buf, sizeof buf, "%zu", n_recs);
  put_property(out, "autoload.distinct", buf);
  fputs("    </properties>\n", out);
}

/* The `type` of an <error>: what kind of harness-side failure it was,
 * from the message the runner wrote. */
static const char *error_type(const char *msg) {
  if (msg == NULL)
    return "error";
  if (strncmp(msg, "timed out after", 15) == 0)
    return "timeout";
  if (strstr(msg, "BackendImplementationMissing") != NULL)
    return "BackendImplementationMissing";
  if (strstr(msg, "signal") != NULL || strstr(msg, "child process") != NULL)
    return "crash";
  return "error";
}

/* 1 if a run event of res carries a platform's own timing
 * (docs/plugins.md#device-time-device_ns-and-copy_ns). */
static int has_device_time(const st_case_result *res) {
  const size_t n = st_case_result_event_count(res);
  for (size_t i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(res, i);
    if (strcmp(ev->name, "run") == 0 &&
        (ev->device_ns != ST_NS_NONE || ev->copy_ns != ST_NS_NONE))
      return 1;
  }
  return 0;
}

/* docs/plugins.md#device-time-device_ns-and-copy_ns: a testcase allows no
 * properties, so the platform's device and copy times go in <system-out>, one
 * line per round. */
static void put_device_time(FILE *out, const st_case_result *res) {
  const size_t n = st_case_result_event_count(res);
  for (size_t i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(res, i);
    if (strcmp(ev->name, "run") != 0)
      continue;
    fprintf(out, "run round=%d", ev->round);
    if (ev->device_ns != ST_NS_NONE)
      fprintf(out, " device_ns=%llu", (unsigned long long)ev->device_ns);
    if (ev->copy_ns != ST_NS_NONE)
      fprintf(out, " copy_ns=%llu", (unsigned long long)ev->copy_ns);
    fputc('\n', out);
  }
}

static void put_testcase(FILE *out, const junit_state *st,
                         const st_case_result *res) {
  st_case_status status = st_case_result_status(res);
  const char *msg = st_case_result_message(res);
  const char *output = st_case_result_output(res);
  char *name =
      st__report_case_id(st_case_result_scene(res), st_case_result_case(res),
                         st_case_result_iteration(res), st->info.repeat, 1);

  fputs("    <testcase classname=\"", out);
  st__xml_escape(out, st_case_result_scene(res), 1);
  fputs("\" name=\"", out);
  st__xml_escape(out, name != NULL ? name : st_case_result_case(res), 1);
  free(name);
  fputs("\" time=\"", out);
  put_seconds(out, st_case_result_duration_ns(res));
  fputc('"', out);
  if (st->cfg.junit_xunit1) {
    fputs(" file=\"", out);
    st__xml_escape(out, st_case_result_file(res), 1);
    fprintf(out, "\" line=\"%d\"", st_case_result_line(res));
  }
  const int device = has_device_time(res);
  const int trust = st__report_trust_any(res);
  char *tags = own_tags(st, res);
  if (status == ST_CASE_PASS && output == NULL && !device && !trust &&
      tags == NULL) {
    fputs("/>\n", out);
    return;
  }
  fputs(">\n", out);
  if (status == ST_CASE_FAIL || status == ST_CASE_ERROR ||
      status == ST_CASE_XPASS) {
    const char *tag = status == ST_CASE_ERROR ? "error" : "failure";
    fprintf(out, "      <%s type=\"%s\" message=\"", tag,
            status == ST_CASE_FAIL    ? "mismatch"
            : status == ST_CASE_XPASS ? "xpass"
                                      : error_type(msg));
    st__xml_escape(out, msg != NULL ? msg : st_case_status_name(status), 1);
    fputs("\">", out);
    st__xml_escape(out, msg, 0);
    /* The rerun command, as the text and TAP reports print it. */
    fputs("\nrerun: ", out);
    {
      char *cmd = NULL;
      size_t len = 0;
      FILE *mem = open_memstream(&cmd, &len);
      if (mem != NULL) {
        st__report_rerun(mem, &st->cfg, st_case_result_scene(res),
                         st_case_result_case(res), st_case_result_seed(res),
                         st_case_result_platform(res),
                         st_case_result_file(res));
        if (fclose(mem) == 0)
          st__xml_escape(out, cmd, 0);
      }
      free(cmd);
    }
    fprintf(out, "</%s>\n", tag);
  } else if (status == ST_CASE_XFAIL) {
    /* docs/scene-format.md#expected-failures, pytest's xunit2 convention. */
    fputs("      <skipped type=\"xfail\" message=\"expected failure: ", out);
    st__xml_escape(out, msg != NULL ? msg : "", 1);
    fputs("\"/>\n", out);
  } else if (status == ST_CASE_SKIP) {
    fputs("      <skipped message=\"", out);
    st__xml_escape(out, msg != NULL ? msg : "skipped", 1);
    fputs("\"/>\n", out);
  }
  if (device || trust || tags != NULL) {
    fputs("      <system-out>", out);
    if (tags != NULL) {
      fputs("tags: ", out);
      st__xml_escape(out, tags, 0);
      fputc('\n', out);
    }
    if (device)
      put_device_time(out, res);
    (void)st__report_trust_junit(out, res);
    fputs("</system-out>\n", out);
  }
  free(tags);
  if (output != NULL) {
    /* docs/cli.md#junit: what a child printed is kept in <system-err>. */
    fputs("      <system-err>", out);
    st__xml_escape(out, output, 0);
    fputs("</system-err>\n", out);
  }
  fputs("    </testcase>\n", out);
}

/* Counts of a set of cases. */
typedef struct counts {
  size_t tests, failures, errors, skipped;
  uint64_t ns;
} counts;

static void count_case(counts *k, const st_case_result *r) {
  k->tests++;
  k->ns += st_case_result_duration_ns(r);
  switch (st_case_result_status(r)) {
  case ST_CASE_FAIL:
  case ST_CASE_XPASS: /* docs/scene-format.md#expected-failures: an unexpected
                         pass is a failure */
    k->failures++;
    break;
  case ST_CASE_ERROR:
    k->errors++;
    break;
  case ST_CASE_SKIP:
  case ST_CASE_XFAIL: /* pytest's xunit2: <skipped type="xfail"> */
    k->skipped++;
    break;
  default:
    break;
  }
}

/* The run's cases grouped by scene: members[] holds result indexes sorted
 * by (scene, index); a group is a run of one scene in it, and groups are
 * written in the order of their first case (sorting keeps this O(n log n)
 * for 100,000-case matrices). */
typedef struct group {
  size_t first; /* the group's smallest result index */
  size_t start; /* into members */
  size_t len;
} group;

/* qsort_r (glibc; _GNU_SOURCE is the build's) keeps the run out of a
 * global. */
static int cmp_member(const void *a, const void *b, void *arg) {
  const st_run_result *run = arg;
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  int c = strcmp(st_case_result_scene(st_run_result_get(run, i)),
                 st_case_result_scene(st_run_result_get(run, j)));
  return c != 0 ? c : (i > j) - (i < j);
}

static int cmp_group(const void *a, const void *b) {
  size_t i = ((const group *)a)->first, j = ((const group *)b)->first;
  return (i > j) - (i < j);
}

static void put_testsuite(FILE *out, const junit_state *st,
                          const st_run_result *run, const size_t *members,
                          size_t len, const char *host, const st__record *recs,
                          size_t n_recs) {
  const st_case_result *first =
      len > 0 ? st_run_result_get(run, members[0]) : NULL;
  counts k;
  size_t i;

  memset(&k, 0, sizeof k);
  for (i = 0; i < len; i++)
    count_case(&k, st_run_result_get(run, members[i]));
  fputs("  <testsuite name=\"", out);
  st__xml_escape(out, first != NULL ? st_case_result_scene(first) : "scenetest",
                 1);
  fprintf(out,
          "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" "
          "time=\"",
          k.tests, k.failures, k.errors, k.skipped);
  put_seconds(out, k.ns);
  fprintf(out, "\" timestamp=\"%s\" hostname=\"", st->start);
  st__xml_escape(out, host, 1);
  fputc('"', out);
  if (first != NULL) {
    fputs(" file=\"", out);
    st__xml_escape(out, st_case_result_file(first), 1);
    fputc('"', out);
  }
  fputs(">\n", out);
  put_properties(out, st, first != NULL ? st_case_result_scene(first) : NULL,
                 recs, n_recs);
  for (i = 0; i < len; i++)
    put_testcase(out, st, st_run_result_get(run, members[i]));
  fputs("  </testsuite>\n", out);
}

static void junit_run_end(void *data, const st_run_result *run) {
  junit_state *st = data;
  FILE *out = st->cfg.out;
  st__record *recs = NULL;
  size_t n_recs = 0, i, n_groups = 0, n_members = 0;
  size_t n = st_run_result_count(run);
  size_t *members = malloc((n + 1) * sizeof *members);
  group *groups = malloc((n + 1) * sizeof *groups);
  counts all;
  char host[256];

  if (members == NULL || groups == NULL) {
    free(members);
    free(groups);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<!-- out of memory writing the report -->\n",
          out);
    return;
  }
  memset(&all, 0, sizeof all);
  for (i = 0; i < n; i++)
    if (st_run_result_get(run, i) != NULL) {
      members[n_members++] = i;
      count_case(&all, st_run_result_get(run, i));
    }
  qsort_r(members, n_members, sizeof *members, cmp_member, (void *)run);
  for (i = 0; i < n_members; i++) {
    if (i == 0 ||
        strcmp(st_case_result_scene(st_run_result_get(run, members[i])),
               st_case_result_scene(st_run_result_get(run, members[i - 1]))) !=
            0) {
      groups[n_groups].first = members[i];
      groups[n_groups].start = i;
      groups[n_groups].len = 0;
      n_groups++;
    }
    groups[n_groups - 1].len++;
  }
  qsort(groups, n_groups, sizeof *groups, cmp_group);

  if (gethostname(host, sizeof host) != 0)
    snprintf(host, sizeof host, "localhost");
  host[sizeof host - 1] = '\0';
  if (st__records_distinct(run, &recs, &n_recs) != ST_OK)
    n_recs = 0; /* out of memory: the report goes on without them */
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
  fprintf(out,
          "<testsuites name=\"scenetest\" tests=\"%zu\" failures=\"%zu\" "
          "errors=\"%zu\" time=\"",
          all.tests, all.failures, all.errors);
  put_seconds(out, all.ns);
  fputs("\">\n", out);
  for (i = 0; i < n_groups; i++)
    put_testsuite(out, st, run, members + groups[i].start, groups[i].len, host,
                  recs, n_recs);
  /* A run that selected nothing still says where it ran (its shard). */
  if (n_groups == 0)
    put_testsuite(out, st, run, members, 0, host, recs, n_recs);
  fputs("</testsuites>\n", out);
  fflush(out);
  st__records_free(recs, n_recs);
  free(members);
  free(groups);
}

st_status st__report_junit_new(const st__report_config *cfg, st_observer *obs) {
  return st__report_doc_new(cfg, junit_run_end, obs);
}

void st__report_junit_free(st_observer *obs) { st__report_doc_free(obs); }
