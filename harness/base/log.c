/* SPDX-License-Identifier: MIT */
/* The logger: level threshold, "[LEVEL] message" lines, one write(2) each
 * to the terminal side; the --log-file sink, buffered per process (then
 * stderr gets only warnings and errors); and the hook a terminal reporter
 * draws log lines through. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include <scenetest/log.h>

#include "base/log_sink.h"
#include "base/proc.h"
#include "base/safe_text.h"

static atomic_int log_level = ST_LOG_TIMING;
static atomic_int log_fd = 2;
static atomic_int file_fd = -1;
static atomic_long file_pid; /* the process that set file_fd */
/* The terminal rule (docs/cli.md): below the floor, off stderr. */
static atomic_int terminal_floor;
static atomic_ulong terminal_held;

/* The --log-file buffer (issue 14: a write(2) per TIMING line cost a
 * quarter of a small case). Whole lines only, so processes appending to
 * the one O_APPEND file still interleave by line. It is written out when
 * the next line would not fit, at every warning or error, when the file
 * is set or unset, before fork() (so a child never inherits lines to
 * write twice), at exit, and by st__log_flush, which the case layer calls
 * before a kernel runs and after each case: a crash loses no line. */
#define FILE_BUF_CAP ((size_t)16384)
static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;
static char file_buf[FILE_BUF_CAP]; /* guarded by: file_lock */
static size_t file_len;             /* guarded by: file_lock */
static pthread_once_t file_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static st__log_hook hook_fn; /* guarded by: hook_lock */
static void *hook_data;      /* guarded by: hook_lock */
/* The process that set the hook, read before taking the lock: a child
 * forked while another thread held the lock must not wait for it. */
static atomic_long hook_pid;
/* Set only in a supervised or isolated child, before its first case and
 * while no other thread runs; read by every st_log after. */
static st__log_sink_fn log_sink;
static void *log_sink_data;

static const struct {
  const char *name;
  int level;
} level_names[] = {
    {"debug", ST_LOG_DEBUG},   {"info", ST_LOG_INFO},
    {"timing", ST_LOG_TIMING}, {"warning", ST_LOG_WARNING},
    {"error", ST_LOG_ERROR},   {"null", ST_LOG_NULL},
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

/* The first error writing the --log-file, of this process or of any
 * child forked after the file was set (each writes its own lines): an
 * errno in a MAP_SHARED page they all inherit, 0 while every write
 * succeeded (docs/reliability.md: a torn log is never a green run). */
static atomic_int *file_errno_shared;
static atomic_int file_errno_local;

static void file_failed(int err) {
  int expected = 0;
  if (file_errno_shared != NULL)
    atomic_compare_exchange_strong(file_errno_shared, &expected,
                                   err != 0 ? err : EIO);
}

/* Caller holds file_lock. */
static void file_flush_locked(void) {
  int fd = atomic_load(&file_fd);
  if (file_len > 0 && fd >= 0 && st__log_write_fd(fd, file_buf, file_len) != 0)
    file_failed(errno);
  file_len = 0;
}

void st__log_flush(void) {
  if (atomic_load(&file_fd) < 0)
    return;
  pthread_mutex_lock(&file_lock);
  file_flush_locked();
  pthread_mutex_unlock(&file_lock);
}

static void file_append(const char *line, size_t len, int urgent) {
  pthread_mutex_lock(&file_lock);
  if (file_len + len > FILE_BUF_CAP)
    file_flush_locked();
  if (len > FILE_BUF_CAP) {
    if (st__log_write_fd(atomic_load(&file_fd), line, len) != 0)
      file_failed(errno);
  } else {
    memcpy(file_buf + file_len, line, len);
    file_len += len;
  }
  if (urgent)
    file_flush_locked();
  pthread_mutex_unlock(&file_lock);
}

/* Flushing in prepare and holding the lock across fork() gives the child
 * an empty buffer that no thread was halfway through changing. */
static void file_atfork_prepare(void) {
  pthread_mutex_lock(&file_lock);
  file_flush_locked();
}

static void file_atfork_parent(void) { pthread_mutex_unlock(&file_lock); }

static void file_atfork_child(void) {
  file_len = 0;
  pthread_mutex_unlock(&file_lock);
}

static void file_register(void) {
  (void)pthread_atfork(file_atfork_prepare, file_atfork_parent,
                       file_atfork_child);
  (void)atexit(st__log_flush);
}

void st__log_set_file(int fd) {
  pthread_once(&file_once, file_register);
  pthread_mutex_lock(&file_lock);
  file_flush_locked();
  if (fd >= 0 && file_errno_shared == NULL) {
    void *page = mmap(NULL, sizeof *file_errno_shared, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    /* Without the page this process still sees its own errors. */
    file_errno_shared = page != MAP_FAILED ? page : &file_errno_local;
  }
  if (fd >= 0)
    atomic_store(file_errno_shared, 0);
  atomic_store(&file_pid, (long)st__proc_pid());
  atomic_store(&file_fd, fd);
  pthread_mutex_unlock(&file_lock);
}

int st__log_file_error(void) {
  int err;
  st__log_flush();
  err = file_errno_shared != NULL ? atomic_load(file_errno_shared) : 0;
  return err;
}

void st__log_set_hook(st__log_hook fn, void *data) {
  pthread_mutex_lock(&hook_lock);
  hook_fn = fn;
  hook_data = data;
  atomic_store(&hook_pid, fn != NULL ? (long)st__proc_pid() : 0L);
  pthread_mutex_unlock(&hook_lock);
}

int st__log_write_fd(int fd, const char *buf, size_t len) {
  return st__proc_write_all(fd, buf, len) == ST_OK ? 0 : -1;
}

/* Sends a line to the terminal side: through the hook when this process
 * set one, else to the log fd. Returns 1 when a hook took it. */
static int to_hook(int level, const char *buf, size_t len, int to_terminal) {
  int taken = 0;
  if (atomic_load(&hook_pid) != (long)st__proc_pid())
    return 0;
  pthread_mutex_lock(&hook_lock);
  if (hook_fn != NULL) {
    hook_fn(hook_data, level, buf, len, to_terminal);
    taken = 1;
  }
  pthread_mutex_unlock(&hook_lock);
  return taken;
}

void st__log_set_terminal_floor(int level) {
  atomic_store(&terminal_floor, level);
  atomic_store(&terminal_held, 0);
}

unsigned long st__log_held_count(void) { return atomic_load(&terminal_held); }

/* Whether a line bound for the terminal is held back instead (counted). */
static int held_back(int level) {
  if (level >= atomic_load(&terminal_floor))
    return 0;
  atomic_fetch_add(&terminal_held, 1);
  return 1;
}

void st__log_emit(const char *line, size_t len) {
  (void)st__log_write_fd(atomic_load(&log_fd), line, len);
}

int st__log_fd(void) { return atomic_load(&log_fd); }

/* A passed-through line's level, from its prefix. */
static int line_level(const char *line, size_t len) {
  size_t i;
  for (i = 0; i < sizeof level_names / sizeof level_names[0]; i++) {
    const char *label = level_label(level_names[i].level);
    size_t k = strlen(label);
    if (len > k + 1 && line[0] == '[' && memcmp(line + 1, label, k) == 0 &&
        line[k + 1] == ']')
      return level_names[i].level;
  }
  return ST_LOG_WARNING;
}

void st__log_passthrough(const char *line, size_t len) {
  /* With a --log-file a child has written its lines there itself; of
   * those it also sends us, the terminal gets warnings and errors, and a
   * hook may look at the rest (the record, to show it in words). */
  int level = line_level(line, len);
  int to_terminal = atomic_load(&file_fd) < 0 || level >= ST_LOG_WARNING;
  if (to_terminal && held_back(level))
    to_terminal = 0;
  if (!to_hook(level, line, len, to_terminal) && to_terminal)
    (void)st__log_write_fd(atomic_load(&log_fd), line, len);
}

/* Writes the line "[LABEL] " + note + msg[0..mlen) + "\n" where the
 * level sends it. */
static void log_line(int level, const char *note, const char *msg,
                     size_t mlen) {
  char buf[4096];
  int n;
  size_t len;
  int ffd, to_terminal;

  n = snprintf(buf, sizeof buf, "[%s] %s", level_label(level), note);
  len = (size_t)n;
  if (mlen > sizeof buf - 1 - len)
    mlen = sizeof buf - 1 - len;
  memcpy(buf + len, msg, mlen);
  len += mlen;
  buf[len++] = '\n';
  ffd = atomic_load(&file_fd);
  /* With a --log-file the whole log goes there, and the terminal (the log
   * fd) keeps only warnings and errors (docs/cli.md#logs). The file is buffered
   * by whole lines, the terminal side gets one write per line: both keep
   * lines from threads and processes whole. */
  if (ffd >= 0)
    file_append(buf, len, level >= ST_LOG_WARNING);
  to_terminal = ffd < 0 || level >= ST_LOG_WARNING;
  /* A supervised or isolated child hands every line to its sink, which
   * sends it to its parent over the wire
   * (docs/reliability.md#the-process-model: never by a prefix convention on fd
   * 2); the parent passes it through. */
  if (log_sink != NULL) {
    log_sink(log_sink_data, buf, len);
    return;
  }
  /* A forked child (under --isolate) also sends every line to its log
   * fd, which its parent reads and passes through (st__log_passthrough):
   * so the parent's terminal can still show its record in words. */
  if (ffd >= 0 && atomic_load(&file_pid) != (long)st__proc_pid()) {
    (void)st__log_write_fd(atomic_load(&log_fd), buf, len);
    return;
  }
  if (to_terminal && held_back(level))
    to_terminal = 0;
  if (to_hook(level, buf, len, to_terminal) || !to_terminal)
    return;
  (void)st__log_write_fd(atomic_load(&log_fd), buf, len);
}

/* docs/reliability.md: a message is anyone's text (a kernel's failure
 * message, a library's path), so it is escaped for the person who reads
 * it (base/safe_text.h) and never holds the [TIMING] token; a line break
 * stays one only in an error, whose message may be a table. Phase and
 * record lines are the harness's own (st__log_timing): a message logged
 * here at the TIMING level is a note, "[TIMING] note: ...", which no
 * reader of a log takes for one of them. vlog writes the line of both:
 * raw (st__log_timing's phase and record lines) goes out as formatted. */
static void vlog(int level, int raw, const char *fmt, va_list ap) {
  char text[4096], msg[4096];
  size_t len;

  if (!st_log_enabled(level))
    return;
  if (vsnprintf(text, sizeof text, fmt, ap) < 0)
    text[0] = '\0';
  if (raw) {
    log_line(level, "", text, strnlen(text, sizeof text));
    return;
  }
  len = st__safe_text(msg, sizeof msg, text, strnlen(text, sizeof text),
                      level >= ST_LOG_ERROR ? ST__SAFE_KEEP_LINES : 0);
  log_line(level,
           level >= ST_LOG_TIMING && level < ST_LOG_WARNING ? "note: " : "",
           msg, len);
}

void st_log(int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(level, 0, fmt, ap);
  va_end(ap);
}

void st__log_timing(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(ST_LOG_TIMING, 1, fmt, ap);
  va_end(ap);
}

void st__log_set_sink(st__log_sink_fn fn, void *data) {
  log_sink_data = data;
  log_sink = fn;
}
