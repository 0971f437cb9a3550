/* SPDX-License-Identifier: MIT */
/* Logging: "[LEVEL] message" lines on standard error, filtered by level. */
#ifndef SCENETEST_LOG_H
#define SCENETEST_LOG_H

#include <scenetest/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum st_log_level {
  ST_LOG_DEBUG = 10,
  ST_LOG_INFO = 20,
  ST_LOG_TIMING = 25,
  ST_LOG_WARNING = 30,
  ST_LOG_ERROR = 40,
  ST_LOG_NULL = 60
} st_log_level;

/* Sets the threshold: messages below it are dropped. Default TIMING.
 * Thread-safety: any thread (atomic). */
ST_EXTERN void st_log_set_level(int level);
ST_EXTERN int st_log_get_level(void);
/* Parses "debug".."null" (any case) or a number 0..100.
 * Thread-safety: any thread. */
ST_EXTERN st_status st_log_level_parse(const char *text /* IN */,
                                       int *out /* OUT */) ST_WUR;
/* 1 if a message at level would be written. Thread-safety: any thread. */
ST_EXTERN int st_log_enabled(int level);
/* Writes "[LEVEL] message\n" to the log fd with one write(2), so lines from
 * threads and processes do not interleave. Thread-safety: any thread. */
ST_EXTERN void st_log(int level, const char *fmt /* IN */, ...) ST_PRINTF(2, 3);
/* The fd logs go to (default 2). For tests. Thread-safety: any thread. */
ST_EXTERN void st_log_set_fd(int fd);

#ifdef __cplusplus
}
#endif
#endif
