/* SPDX-License-Identifier: MIT */
/* The autoload record's once-per-process emission, with the line kept
 * for the reports (the public half is include/scenetest/record.h). */
#ifndef SCENETEST_HARNESS_RECORD_H
#define SCENETEST_HARNESS_RECORD_H

#include <stddef.h>

#include <scenetest/record.h>

/* st_record_emit that, when this call is the process's emission, also
 * formats the record line (without "[TIMING] ", pid included) into
 * keep[0..size) whatever the log level; keep is "" otherwise. keep may be
 * NULL (then it is st_record_emit). Returns 1 for the emission.
 * Thread-safety: any thread. */
int st__record_emit_line(const st_watch *list /* IN */, size_t count,
                         char *keep /* OUT, may be NULL */, size_t size);
/* st__record_emit_line for a case that runs under env_key, its
 * environment ("NAME=VALUE\n...", NULL or "" for none; docs/
 * scene-format.md `env`): one line per process per distinct environment.
 * Beyond the process's first emission, a case emits again when its
 * env_key differs from that of the last emission and the record (every
 * field but pid) differs from the last line emitted: a case whose env
 * changes TORCH_DEVICE_BACKEND_AUTOLOAD (or what a watched module
 * reads) emits, and so does the next case without it. track is 1 when
 * the run has cases with an env (every emission is then formatted, to be
 * compared); with 0 this is st__record_emit_line.
 * Thread-safety: any thread. */
int st__record_emit_env(const st_watch *list /* IN */, size_t count, int track,
                        const char *env_key /* IN, may be NULL */,
                        char *keep /* OUT, may be NULL */, size_t size);

/* Escapes len bytes of value as the record's `raw` does (\\ \" \n \t \r,
 * \ooo for every other byte below 0x20 or from 0x7f) into out, which has
 * room for 4 * len + 1 bytes; returns the bytes written (out is
 * NUL-terminated). Thread-safety: any thread. */
size_t st__timing_escape(const char *value /* IN */, size_t len,
                         char *out /* OUT */);

/* A TIMING `scene=` or `case=` value (docs/measuring.md#the-phase-line): name
 * as it is, or, when it holds a space, '"', '\\' or a byte outside 0x20..0x7e,
 * double-quoted and escaped as `raw` (never truncated; a matrix case's
 * name may hold spaces). Returns name itself or *heap (malloc'd; free
 * it), or NULL when out of memory. Thread-safety: any thread. */
const char *st__timing_name(const char *name /* IN */,
                            char **heap /* OUT: owned by the caller */);

#endif
