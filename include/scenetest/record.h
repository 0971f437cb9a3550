/* SPDX-License-Identifier: MIT */
/* The autoload record: one diagnostic line per process saying how torch
 * reads TORCH_DEVICE_BACKEND_AUTOLOAD and which watched modules the dynamic
 * loader has loaded at the moment of the record. */
#ifndef SCENETEST_RECORD_H
#define SCENETEST_RECORD_H

#include <scenetest/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ST_AUTOLOAD_ENV "TORCH_DEVICE_BACKEND_AUTOLOAD"

typedef enum st_autoload_setting {
  ST_AUTOLOAD_UNSET = 0,
  ST_AUTOLOAD_ZERO = 1,
  ST_AUTOLOAD_ONE = 2,
  ST_AUTOLOAD_INVALID = 3
} st_autoload_setting;

/* Classifies a value of the variable (NULL = unset). Thread-safety: any. */
ST_EXTERN st_autoload_setting st_autoload_classify(const char *value /* IN */);
/* "unset", "0", "1", "invalid". */
ST_EXTERN const char *st_autoload_setting_name(st_autoload_setting s);
/* 1 iff torch would enable device-backend autoload for this value
 * (NULL = unset). Thread-safety: any thread. */
ST_EXTERN int st_autoload_effective(const char *value /* IN */);
/* The `raw` field: "-" for NULL, else the double-quoted, truncated,
 * escaped value. Thread-safety: any thread. */
ST_EXTERN void st_autoload_format_raw(const char *value /* IN */,
                                      char *buf /* OUT */, size_t size);

/* A watched module: a name and the basename globs of its shared objects. */
typedef struct st_watch st_watch;

/* Parses "NAME=GLOB[,GLOB...]" and appends it to *list (malloc'd array of
 * *count entries; free with st_watch_list_free). Thread-safety: any. */
ST_EXTERN st_status st_watch_parse(const char *spec /* IN */,
                                   st_watch **list /* IN/OUT */,
                                   size_t *count /* IN/OUT */,
                                   st_error *err /* OUT */) ST_WUR;
/* Accepts NULL. */
ST_EXTERN void st_watch_list_free(st_watch *list /* IN, owned */, size_t count);
/* 1 if the object path's basename matches a glob of the built-in watched
 * modules (torch, torch_npu) or of list; *name gets the module name
 * (static or list-owned storage). */
ST_EXTERN int st_watch_match(const st_watch *list /* IN */, size_t count,
                             const char *path /* IN */,
                             const char **name /* OUT, may be NULL */);

/* Formats the record line (without the "[TIMING] " prefix) from the
 * environment and the loader's list now. Thread-safety: any thread. */
ST_EXTERN void st_record_format(const st_watch *list /* IN */, size_t count,
                                char *buf /* OUT */, size_t size);
/* Logs the record at TIMING if this process has not emitted one yet.
 * Returns 1 if this call was the process's emission. A forked child has
 * not emitted (the state is keyed by pid). Thread-safety: any thread. */
ST_EXTERN int st_record_emit(const st_watch *list /* IN */, size_t count);
/* st_record_reset(), which forgets the emission, is a test hook: it is in
 * <scenetest/testing_hooks.h>. */

#ifdef __cplusplus
}
#endif
#endif
