/* SPDX-License-Identifier: MIT */
/* Loading scene files and enumerating their scenes and cases. */
#ifndef SCENETEST_SCENE_H
#define SCENETEST_SCENE_H

#include <scenetest/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct st_scene_set st_scene_set;
typedef struct st_scene st_scene;

/* Default limits (docs/scene-format.md#shapes-and-limits). */
#define ST_DEFAULT_MAX_ARG_BYTES (UINT64_C(2) << 30)
#define ST_DEFAULT_MAX_NODES ((size_t)1000000)
#define ST_DEFAULT_MAX_FILE_BYTES (UINT64_C(1) << 30)

/* Initialise with st_load_options_init(), which sets size to the sizeof
 * this program was compiled with; the library reads only the fields that
 * size covers. */
typedef struct st_load_options {
  size_t size;            /* sizeof(st_load_options); set by _init */
  uint64_t max_arg_bytes; /* cap on the sum of one case's tensor bytes */
  size_t max_nodes;       /* budget of YAML nodes reached through aliases
                             (alias-expanded) per file; plain nodes do not
                             count */
  /* Later fields (an older caller's size leaves them at the defaults). */
  uint64_t max_file_bytes; /* a scene file larger than this is a load
                              error, before it is read */
} st_load_options;

/* Sets size and the defaults. Thread-safety: any thread. */
ST_EXTERN void st_load_options_init(st_load_options *opts /* OUT */);

/* Creates an empty set. Caller has ownership; free with st_scene_set_free.
 * Thread-safety: any thread. */
ST_EXTERN st_status st_scene_set_new(st_scene_set **out /* OUT */) ST_WUR;
/* Accepts NULL. */
ST_EXTERN void st_scene_set_free(st_scene_set *set /* IN, owned */);

/* Loads a scene file, or a directory searched recursively for *.yaml and
 * *.yml (names starting with '.' skipped, bytewise-sorted path order).
 * Every error found is appended to errors (one per problem, with file,
 * line and column); returns ST_ELOAD if there was any, and then nothing of
 * that file is added. A file the set has already loaded (the same device
 * and inode, whatever the path) is skipped: ST_OK, nothing added. opts may
 * be NULL (defaults); opts with a size below its first layout is ST_EINVAL
 * (one error in errors).
 * Thread-safety: one thread per set. */
ST_EXTERN st_status st_scene_set_load_path(
    st_scene_set *set /* IN/OUT */, const char *path /* IN */,
    const st_load_options *opts /* IN */,
    st_error_list *errors /* OUT, may be NULL */) ST_WUR;
/* Loads scenes from a string (length bytes; it need not be NUL-terminated),
 * with the same rules and error reporting as st_scene_set_load_path; name
 * is used as the file name in errors and as the base for `file:` inits
 * (relative to its directory). The text is not kept.
 * Thread-safety: one thread per set. */
ST_EXTERN st_status
st_scene_set_load_string(st_scene_set *set /* IN/OUT */,
                         const char *name /* IN */, const char *text /* IN */,
                         size_t length, const st_load_options *opts /* IN */,
                         st_error_list *errors /* OUT, may be NULL */) ST_WUR;

/* Enumeration. Returned pointers are owned by the set and live as long as
 * it. Thread-safety: any thread, while nobody loads into the set. */
ST_EXTERN size_t st_scene_set_count(const st_scene_set *set /* IN */);
ST_EXTERN const st_scene *st_scene_set_get(const st_scene_set *set /* IN */,
                                           size_t index);
ST_EXTERN const char *st_scene_name(const st_scene *scene /* IN */);
ST_EXTERN const char *st_scene_file(const st_scene *scene /* IN */);
ST_EXTERN int st_scene_line(const st_scene *scene /* IN */);
ST_EXTERN int st_scene_level(const st_scene *scene /* IN */);
ST_EXTERN const char *st_scene_kernel(const st_scene *scene /* IN */);
ST_EXTERN const char *st_scene_golden(const st_scene *scene /* IN */);
ST_EXTERN size_t st_scene_case_count(const st_scene *scene /* IN */);
ST_EXTERN const char *st_scene_case_name(const st_scene *scene /* IN */,
                                         size_t index);
ST_EXTERN int st_scene_case_line(const st_scene *scene /* IN */, size_t index);
/* 1 if the case is manual on platform. */
ST_EXTERN int st_scene_case_is_manual(const st_scene *scene /* IN */,
                                      size_t index,
                                      const char *platform /* IN */);
/* 1 if the case runs on platform (its `platforms` list, or all). */
ST_EXTERN int st_scene_case_runs_on(const st_scene *scene /* IN */,
                                    size_t index,
                                    const char *platform /* IN */);

#ifdef __cplusplus
}
#endif
#endif
