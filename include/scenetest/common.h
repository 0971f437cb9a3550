/* SPDX-License-Identifier: MIT */
/* Status codes, the error record and the export macro: the vocabulary every
 * other public header uses. */
#ifndef SCENETEST_COMMON_H
#define SCENETEST_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ST_BUILDING_LIBRARY) && defined(__GNUC__)
#define ST_EXTERN __attribute__((visibility("default")))
#else
#define ST_EXTERN
#endif

#if defined(__GNUC__)
#define ST_WUR __attribute__((warn_unused_result))
#define ST_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ST_WUR
#define ST_PRINTF(f, a)
#endif

/* The version of the library actually loaded, as ST_VERSION_HEX and
 * ST_VERSION_STRING give it for the headers a program was built with
 * (they differ when a program runs against another build). Static
 * storage. Thread-safety: any thread. */
ST_EXTERN unsigned st_version(void);
ST_EXTERN const char *st_version_string(void);

/* Status codes. Numbered, append-only: a code is never renumbered or
 * reused (as curl does with CURLcode). 0 is success, failures are negative.
 * The one list yields the enum, st_status_name() and st_status_str(). */
#define ST_STATUS_MAP(XX)                                                      \
  XX(OK, 0, "ok")                                                              \
  XX(ENOMEM, -1, "out of memory")                                              \
  XX(EINVAL, -2, "invalid argument")                                           \
  XX(ELOAD, -3, "scene load error")                                            \
  XX(EIO, -4, "input/output error")                                            \
  XX(EUSAGE, -5, "usage error")                                                \
  XX(EBIND, -6, "argument binding error")                                      \
  XX(EMISSING, -7, "backend implementation missing")                           \
  XX(ESKIP, -8, "kernel declined the case")                                    \
  XX(EKERNEL, -9, "kernel reported an error")                                  \
  XX(ECONFLICT, -10, "conflicting registration")                               \
  XX(EABI, -11, "ABI version mismatch")                                        \
  XX(EPLUGIN, -12, "plugin cannot be loaded")                                  \
  XX(ELIMIT, -13, "limit exceeded")                                            \
  XX(EINTERNAL, -14, "internal error")                                         \
  XX(ENOTFOUND, -15, "not found")                                              \
  XX(EMISMATCH, -16, "results do not match golden")

typedef enum st_status {
#define ST_STATUS_ENUM(name, val, msg) ST_##name = (val),
  ST_STATUS_MAP(ST_STATUS_ENUM)
#undef ST_STATUS_ENUM
} st_status;

/* "ENOMEM" for ST_ENOMEM; "UNKNOWN" for a value not in the list.
 * Static storage. Thread-safety: any thread. */
ST_EXTERN const char *st_status_name(st_status status /* IN */);
/* A short English description ("out of memory"). Static storage.
 * Thread-safety: any thread. */
ST_EXTERN const char *st_status_str(st_status status /* IN */);

#define ST_ERROR_FILE_MAX 1024
#define ST_ERROR_MESSAGE_MAX 1024

/* One error. For input errors file/line/column locate the problem (line and
 * column are 1-based, the column counts characters); otherwise file is ""
 * and line == column == 0. message is one line, no trailing newline. */
typedef struct st_error {
  st_status code;
  int line;
  int column;
  char file[ST_ERROR_FILE_MAX];
  char message[ST_ERROR_MESSAGE_MAX];
} st_error;

/* A list of errors, for callers that want every problem at once (the
 * loader). Owned by whoever called st_error_list_init(); free with
 * st_error_list_free(). */
typedef struct st_error_list {
  st_error *items; /* owned by the list */
  size_t count;
  size_t capacity;
} st_error_list;

/* Sets *err (if err is not NULL and err->code is still ST_OK: the first
 * cause wins, as SQLite keeps its first error). Returns code.
 * Not ST_WUR, like st_op_call_fail: the status returned is the code passed
 * in (for `return st_error_set(...)`), so a call for the record alone
 * loses nothing. Thread-safety: one thread per err. */
ST_EXTERN st_status st_error_set(st_error *err /* OUT, may be NULL */,
                                 st_status code /* IN */,
                                 const char *fmt /* IN */, ...) ST_PRINTF(3, 4);
/* Like st_error_set, with a location. */
ST_EXTERN st_status st_error_set_at(st_error *err /* OUT, may be NULL */,
                                    st_status code /* IN */,
                                    const char *file /* IN */, int line,
                                    int column, const char *fmt /* IN */, ...)
    ST_PRINTF(6, 7);
/* Resets *err to "no error". Thread-safety: one thread per err. */
ST_EXTERN void st_error_clear(st_error *err /* OUT */);
/* Formats "FILE:LINE:COL: error: MESSAGE" (or "error: MESSAGE" without a
 * file) into buf. Returns buf. Thread-safety: any thread. */
ST_EXTERN const char *st_error_format(const st_error *err /* IN */,
                                      char *buf /* OUT */, size_t size);

ST_EXTERN void st_error_list_init(st_error_list *list /* OUT */);
/* Appends a copy of *err. Thread-safety: one thread per list. */
ST_EXTERN st_status st_error_list_add(st_error_list *list /* IN/OUT */,
                                      const st_error *err /* IN */) ST_WUR;
/* Frees the items; accepts a zeroed or NULL list. */
ST_EXTERN void st_error_list_free(st_error_list *list /* IN/OUT */);

#ifdef __cplusplus
}
#endif
#endif
