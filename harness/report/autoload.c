/* SPDX-License-Identifier: MIT */
/* The autoload records of a run for the reports: the line each emitting
 * case kept ("torch_backend_autoload setting=... raw=... effective=...
 * torch_imported=... torch_npu_loaded=... [NAME_loaded=...] pid=N",
 * docs/measuring.md#the-autoload-record) split into fields, and the distinct
 * records of the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "case/result.h"
#include "report/autoload.h"

static void record_free(st__record *r) {
  size_t i;
  for (i = 0; i < r->n; i++) {
    free(r->fields[i].key);
    free(r->fields[i].value);
  }
  free(r->fields);
  r->fields = NULL;
  r->n = 0;
}

void st__records_free(st__record *list, size_t n) {
  size_t i;
  if (list == NULL)
    return;
  for (i = 0; i < n; i++)
    record_free(&list[i]);
  free(list);
}

/* The end of a value starting at s: a quoted raw value runs to its closing
 * quote (the record escapes '"' and '\' inside as \" and \\), anything
 * else to the next space. */
static const char *value_end(const char *s) {
  if (*s == '"') {
    for (s++; *s != '\0' && *s != '"'; s++)
      if (*s == '\\' && s[1] != '\0')
        s++;
    return *s == '"' ? s + 1 : s;
  }
  return s + strcspn(s, " ");
}

/* Parses one record line into *r. 0 when it is not a record line, -1 out
 * of memory, 1 parsed. */
static int record_parse(const char *line, st__record *r) {
  static const char head[] = "torch_backend_autoload ";
  const char *s = line;

  memset(r, 0, sizeof *r);
  if (strncmp(s, head, sizeof head - 1) != 0)
    return 0;
  s += sizeof head - 1;
  while (*s != '\0') {
    const char *eq = strchr(s, '='), *end;
    st__record_field *grown;
    if (eq == NULL || eq == s || memchr(s, ' ', (size_t)(eq - s)) != NULL)
      break;
    end = value_end(eq + 1);
    if (strncmp(s, "pid=", 4) == 0) {
      r->pid = strtol(eq + 1, NULL, 10);
    } else {
      grown = st__array_resize(r->fields, r->n + 1, sizeof *grown);
      if (grown == NULL)
        goto oom;
      r->fields = grown;
      r->fields[r->n].key = strndup(s, (size_t)(eq - s));
      r->fields[r->n].value = strndup(eq + 1, (size_t)(end - eq - 1));
      r->n++;
      if (r->fields[r->n - 1].key == NULL || r->fields[r->n - 1].value == NULL)
        goto oom;
    }
    s = end;
    while (*s == ' ')
      s++;
  }
  return 1;
oom:
  record_free(r);
  return -1;
}

/* Equal in every field but pid (docs/measuring.md#the-statistics compares
 * records so too). */
static int same_record(const st__record *a, const st__record *b) {
  size_t i;
  if (a->n != b->n)
    return 0;
  for (i = 0; i < a->n; i++)
    if (strcmp(a->fields[i].key, b->fields[i].key) != 0 ||
        strcmp(a->fields[i].value, b->fields[i].value) != 0)
      return 0;
  return 1;
}

st_status st__records_distinct(const st_run_result *run, st__record **out,
                               size_t *n) {
  st__record *list = NULL;
  size_t count = 0, i, j, cases = run != NULL ? st_run_result_count(run) : 0;

  *out = NULL;
  *n = 0;
  for (i = 0; i < cases; i++) {
    const st_case_result *res = st_run_result_get(run, i);
    const char *line = res != NULL ? st__case_result_record(res) : NULL;
    st__record r, *grown;
    int rc;
    if (line == NULL)
      continue;
    rc = record_parse(line, &r);
    if (rc < 0)
      goto oom;
    if (rc == 0)
      continue;
    if (r.pid == 0)
      r.pid = st_case_result_pid(res);
    for (j = 0; j < count && !same_record(&list[j], &r); j++)
      ;
    if (j < count) {
      record_free(&r);
      continue;
    }
    grown = st__array_resize(list, count + 1, sizeof *grown);
    if (grown == NULL) {
      record_free(&r);
      goto oom;
    }
    list = grown;
    list[count++] = r;
  }
  *out = list;
  *n = count;
  return ST_OK;
oom:
  st__records_free(list, count);
  return ST_ENOMEM;
}

/* 1 when every field of x that is not a watched module's is in y (with
 * the same value, when values). */
static int covered(const st__record *x, const st__record *y, int values) {
  size_t i, j;
  char module[256];
  for (i = 0; i < x->n; i++) {
    if (st__record_module(x->fields[i].key, module, sizeof module) != NULL)
      continue;
    for (j = 0; j < y->n; j++)
      if (strcmp(x->fields[i].key, y->fields[j].key) == 0)
        break;
    if (j == y->n ||
        (values && strcmp(x->fields[i].value, y->fields[j].value) != 0))
      return 0;
  }
  return 1;
}

/* Equal in every field that is not a watched module's (setting, raw,
 * effective): the environment torch reads. A module's field says what the
 * process had loaded at its first case, which depends on where the process
 * started in the run (docs/reports.md), not on the environment. */
static int same_setting(const st__record *a, const st__record *b) {
  return covered(a, b, 1) && covered(b, a, 0);
}

size_t st__records_settings(const st__record *list, size_t n) {
  size_t i, j, distinct = 0;
  for (i = 0; i < n; i++) {
    for (j = 0; j < i && !same_setting(&list[j], &list[i]); j++)
      ;
    if (j == i)
      distinct++;
  }
  return distinct;
}

const char *st__record_module(const char *key, char *buf, size_t size) {
  size_t len = strlen(key);
  /* docs/measuring.md#watching-more-modules names torch's field torch_imported;
   * every other watched module's is NAME_loaded. */
  if (strcmp(key, "torch_imported") == 0) {
    snprintf(buf, size, "torch");
    return buf;
  }
  if (len > 7 && strcmp(key + len - 7, "_loaded") == 0 && len - 7 < size) {
    memcpy(buf, key, len - 7);
    buf[len - 7] = '\0';
    return buf;
  }
  return NULL;
}
