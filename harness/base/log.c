/* SPDX-License-Identifier: MIT */
/* The logger: level threshold, "[LEVEL] message" lines, one write(2) each. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <scenetest/log.h>

static atomic_int log_level = ST_LOG_TIMING;
static atomic_int log_fd = 2;

static const struct {
  const char *name;
  int level;
} level_names[] = {
    {"debug", ST_LOG_DEBUG},     {"info", ST_LOG_INFO},
    {"timing", ST_LOG_TIMING},   {"warning", ST_LOG_WARNING},
    {"error", ST_LOG_ERROR},     {"null", ST_LOG_NULL},
};

void st_log_set_level(int level) { atomic_store(&log_level, level); }
int st_log_get_level(void) { return atomic_load(&log_level); }
void st_log_set_fd(int fd) { atomic_store(&log_fd, fd); }
int st_log_enabled(int level) {
  return level >= atomic_load(&log_level) && level < ST_LOG_NULL;
}

st_status st_log_level_parse(const char *text, int *out) {
  size_t i;
  char *end;
  long v;
  for (i = 0; i < sizeof level_names / sizeof level_names[0]; i++) {
    if (strcasecmp(text, level_names[i].name) == 0) {
      *out = level_names[i].level;
      return ST_OK;
    }
  }
  if (!isdigit((unsigned char)text[0]))
    return ST_EINVAL;
  errno = 0;
  v = strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0 || v > 100)
    return ST_EINVAL;
  *out = (int)v;
  return ST_OK;
}

static const char *level_label(int level) {
  if (level >= ST_LOG_ERROR)
    return "ERROR";
  if (level >= ST_LOG_WARNING)
    return "WARNING";
  if (level >= ST_LOG_TIMING)
    return "TIMING";
  if (level >= ST_LOG_INFO)
    return "INFO";
  return "DEBUG";
}

void st_log(int level, const char *fmt, ...) {
  char buf[4096];
  int n;
  size_t len, off = 0;
  va_list ap;
  int fd;

  if (!st_log_enabled(level))
    return;
  n = snprintf(buf, sizeof buf, "[%s] ", level_label(level));
  va_start(ap, fmt);
  vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
  va_end(ap);
  len = strlen(buf);
  buf[len++] = '\n';
  fd = atomic_load(&log_fd);
  /* One write per line keeps lines from threads and processes whole. */
  while (off < len) {
    ssize_t w = write(fd, buf + off, len - off);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    off += (size_t)w;
  }
}
