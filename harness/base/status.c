/* SPDX-License-Identifier: MIT */
/* Status names and messages, and the st_error / st_error_list helpers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/common.h>

#include "base/util.h"

const char *st_status_name(st_status status) {
  switch (status) {
#define XX(name, val, msg)                                                     \
  case ST_##name:                                                              \
    return #name;
    ST_STATUS_MAP(XX)
#undef XX
  }
  return "UNKNOWN";
}

const char *st_status_str(st_status status) {
  switch (status) {
#define XX(name, val, msg)                                                     \
  case ST_##name:                                                              \
    return msg;
    ST_STATUS_MAP(XX)
#undef XX
  }
  return "unknown status";
}

static void one_line(char *s) {
  for (; *s; s++)
    if (*s == '\n' || *s == '\r')
      *s = ' ';
}

/* Records the error unless err already holds one (the first cause wins). */
static void vset(st_error *err /* OUT: may be NULL */, st_status code,
                 const char *file /* IN: may be NULL */, int line, int column,
                 const char *fmt /* IN */, va_list ap) {
  if (err == NULL || err->code != ST_OK)
    return;
  err->code = code;
  err->line = line;
  err->column = column;
  snprintf(err->file, sizeof err->file, "%s", file ? file : "");
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  one_line(err->message);
}

st_status st_error_set(st_error *err, st_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset(err, code, NULL, 0, 0, fmt, ap);
  va_end(ap);
  return code;
}

st_status st_error_set_at(st_error *err, st_status code, const char *file,
                          int line, int column, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset(err, code, file, line, column, fmt, ap);
  va_end(ap);
  return code;
}

void st_error_clear(st_error *err) {
  if (err == NULL)
    return;
  /* Not a memset of the whole struct (2 KiB, several times a case):
   * "no error" is the code and two empty strings. */
  err->code = ST_OK;
  err->line = 0;
  err->column = 0;
  err->file[0] = '\0';
  err->message[0] = '\0';
}

const char *st_error_format(const st_error *err, char *buf, size_t size) {
  if (size == 0)
    return buf;
  if (err->file[0] != '\0')
    snprintf(buf, size, "%s:%d:%d: error: %s", err->file, err->line,
             err->column, err->message);
  else
    snprintf(buf, size, "error: %s", err->message);
  return buf;
}

void st_error_list_init(st_error_list *list) { memset(list, 0, sizeof *list); }

st_status st_error_list_add(st_error_list *list, const st_error *err) {
  st_error *items = st__array_grow(list->items, &list->capacity, list->count,
                                   sizeof *items, 8);
  if (items == NULL)
    return ST_ENOMEM;
  list->items = items;
  list->items[list->count++] = *err;
  return ST_OK;
}

void st_error_list_free(st_error_list *list) {
  if (list == NULL)
    return;
  free(list->items);
  memset(list, 0, sizeof *list);
}
