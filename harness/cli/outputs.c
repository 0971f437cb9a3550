/* SPDX-License-Identifier: MIT */
/* The run's reports and where they go
 * (docs/cli.md#several-reports-and-the-ci-engines-report-variables): the one
 * --format writes to --output (or standard output), each --report FORMAT:PATH,
 * and those the CI engines ask for through the environment: GoogleTest's
 * GTEST_OUTPUT (googletest/docs/advanced.md, "Generating an XML Report":
 * "xml" is ./test_detail.xml, "xml:DIR/" is DIR/<program>.xml, "xml:PATH"
 * is PATH; "json:..." the same with .json, which gives our JSON, not
 * GoogleTest's) and Bazel's XML_OUTPUT_FILE (a JUnit file; the test
 * encyclopedia). Two sources naming the same (format, real path) write it
 * once; any other overlap of two outputs, or of an output with --events
 * or an input scene, would have one file clobber another: a usage
 * error. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/proc.h"
#include "cli/cli_internal.h"

/* path, or DIR/scenetest.EXT when path names a directory ("DIR/"). */
static char *gtest_path(const char *path, const char *ext) {
  size_t n = strlen(path);
  char *out = NULL;
  if (n == 0) {
    if (asprintf(&out, "test_detail.%s", ext) < 0)
      return NULL;
  } else if (path[n - 1] == '/') {
    if (asprintf(&out, "%sscenetest.%s", path, ext) < 0)
      return NULL;
  } else {
    out = strdup(path);
  }
  return out;
}

/* GTEST_OUTPUT of a kind no format has: the usage error naming the forms
 * of each kind that one has ("xml, xml:PATH, xml:DIR/, json, ..."). */
static int gtest_usage(const char *g) {
  char forms[256];
  size_t used = 0, n = 0, k = 0;
  for (size_t i = 0; i < st__n_report_formats; i++)
    n += st__report_formats[i].gtest != NULL;
  forms[0] = '\0';
  for (size_t i = 0; i < st__n_report_formats && used < sizeof forms; i++) {
    const char *kind = st__report_formats[i].gtest;
    if (kind == NULL)
      continue;
    k++;
    used += (size_t)snprintf(forms + used, sizeof forms - used,
                             "%s%s, %s:PATH%s%s:DIR/", k == 1 ? "" : ", ", kind,
                             kind, k == n ? " or " : ", ", kind);
  }
  return st__cli_usage("GTEST_OUTPUT='%s': expected %s", g, forms);
}

int st__outputs_from_env(st__output *out, size_t *n) {
  const char *g = getenv("GTEST_OUTPUT"), *x = getenv("XML_OUTPUT_FILE");

  if (g != NULL && g[0] != '\0') {
    const char *colon = strchr(g, ':');
    size_t kind = colon != NULL ? (size_t)(colon - g) : strlen(g);
    const char *ext = NULL;
    st__output *o = &out[*n];
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < st__n_report_formats && ext == NULL; i++) {
      const char *k = st__report_formats[i].gtest;
      if (k != NULL && strlen(k) == kind && strncmp(g, k, kind) == 0) {
        o->fmt = (int)i;
        ext = k;
      }
    }
    if (ext == NULL)
      return gtest_usage(g);
    o->owned_path = gtest_path(colon != NULL ? colon + 1 : "", ext);
    if (o->owned_path == NULL) {
      fputs("scenetest: error: internal error: out of memory\n", stderr);
      return 3;
    }
    o->path = o->owned_path;
    o->source = "GTEST_OUTPUT";
    (*n)++;
  }
  if (x != NULL && x[0] != '\0') {
    st__output *o = &out[*n];
    memset(o, 0, sizeof *o);
    o->fmt = st__report_format_find("junit");
    o->path = x;
    o->source = "XML_OUTPUT_FILE";
    (*n)++;
  }
  return 0;
}

/* realpath of path, or of its directory plus its last component when the
 * file does not exist yet; a copy of path when neither resolves (the open
 * then says why). */
static char *real_of(const char *path) {
  char *r = realpath(path, NULL), *dir, *slash, *out = NULL;
  if (r != NULL)
    return r;
  dir = strdup(path);
  if (dir == NULL)
    return NULL;
  slash = strrchr(dir, '/');
  if (slash == dir) {
    r = strdup("/");
  } else if (slash != NULL) {
    *slash = '\0';
    r = realpath(dir, NULL);
  } else {
    r = realpath(".", NULL);
  }
  if (r != NULL && asprintf(&out, "%s/%s", strcmp(r, "/") == 0 ? "" : r,
                            slash != NULL ? slash + 1 : dir) < 0)
    out = NULL;
  else if (r == NULL)
    out = strdup(path);
  free(r);
  free(dir);
  return out;
}

static const char *describe(const st__output *o, char *buf, size_t size) {
  if (strcmp(o->source, "--report") == 0)
    snprintf(buf, size, "--report %s:%s", st__report_format_name(o->fmt),
             o->path);
  else
    snprintf(buf, size, "%s '%s'", o->source, o->path);
  return buf;
}

int st__outputs_check(st__output *out, size_t *n, const st__reserved *res,
                      size_t n_res) {
  size_t i, j, k;
  char a[PATH_MAX + 64], b[PATH_MAX + 64];

  for (i = 0; i < *n; i++)
    if (out[i].path != NULL && (out[i].real = real_of(out[i].path)) == NULL) {
      fputs("scenetest: error: internal error: out of memory\n", stderr);
      return 3;
    }
  for (i = 0; i < *n; i++) {
    if (out[i].real == NULL)
      continue;
    for (j = 0; j < n_res; j++) {
      char *r = real_of(res[j].path);
      int same = r != NULL && strcmp(r, out[i].real) == 0;
      free(r);
      if (same)
        return st__cli_usage("%s is also the %s '%s'",
                             describe(&out[i], a, sizeof a), res[j].what,
                             res[j].path);
    }
    for (j = 0; j < i; j++) {
      if (out[j].real == NULL || strcmp(out[j].real, out[i].real) != 0)
        continue;
      if (out[j].fmt != out[i].fmt)
        return st__cli_usage("%s and %s are the same file",
                             describe(&out[j], a, sizeof a),
                             describe(&out[i], b, sizeof b));
      /* The same report asked for twice: written once. */
      free(out[i].real);
      free(out[i].owned_path);
      for (k = i; k + 1 < *n; k++)
        out[k] = out[k + 1];
      (*n)--;
      i--;
      break;
    }
  }
  return 0;
}

int st__outputs_open(st__output *out, size_t n, const st__report_config *cfg) {
  size_t i;

  for (i = 0; i < n; i++) {
    st__output *o = &out[i];
    st__report_config c = *cfg;
    if (o->path != NULL) {
      o->f = fopen(o->path, "we");
      if (o->f == NULL)
        return st__cli_usage("cannot open %s '%s': %s", o->source, o->path,
                             strerror(errno));
    } else {
      /* docs/reliability.md#the-report: reporters write to the original
       * standard output; the run points fd 1 at fd 2 while phases run. */
      int fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
      if (fd < 0 || (o->f = fdopen(fd, "w")) == NULL) {
        if (fd >= 0)
          close(fd);
        return st__cli_usage("cannot open standard output: %s",
                             strerror(errno));
      }
    }
    st__proc_parent_only(fileno(o->f)); /* no child writes to a report */
    c.out = o->f;
    c.tty = isatty(fileno(o->f));
    c.color = c.color == 2 || (c.color && c.tty);
    if (st__report_formats[o->fmt].make(&c, &o->obs) != ST_OK) {
      fputs("scenetest: error: internal error: creating the reporter: out "
            "of memory\n",
            stderr);
      return 3;
    }
    o->has_obs = 1;
  }
  return 0;
}

int st__outputs_close(st__output *out, size_t n) {
  size_t i;
  int status = 0;

  for (i = 0; i < n; i++) {
    st__output *o = &out[i];
    if (o->has_obs)
      st__report_formats[o->fmt].free(&o->obs);
    o->has_obs = 0;
    if (o->f != NULL) {
      int bad = ferror(o->f) != 0;
      st__proc_parent_only_end(fileno(o->f));
      if (fclose(o->f) != 0)
        bad = 1;
      o->f = NULL;
      if (bad && o->path != NULL)
        fprintf(stderr, "scenetest: error: writing %s '%s' failed\n", o->source,
                o->path);
      else if (bad)
        fputs("scenetest: error: writing the report failed\n", stderr);
      if (bad)
        status = 3;
    }
    free(o->real);
    o->real = NULL;
    free(o->owned_path);
    o->owned_path = NULL;
  }
  return status;
}
