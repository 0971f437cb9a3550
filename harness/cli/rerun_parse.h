/* SPDX-License-Identifier: MIT */
/* The readers behind --rerun-failed (docs/cli.md#selection): the
 * bytes of an earlier report of ours in, the names of its failed cases
 * out. A pure function over a buffer, so that the fuzz target
 * (tests/fuzz/fuzz_rerun.c) drives exactly what the CLI runs. CLI-private. */
#ifndef SCENETEST_HARNESS_RERUN_PARSE_H
#define SCENETEST_HARNESS_RERUN_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* What st__rerun_parse returns besides 0. */
#define ST__RERUN_NOT_A_REPORT (-1)
#define ST__RERUN_NOMEM (-2)

/* Reads text[0..len) (any bytes; text[len] need not exist) as one of our
 * reports, told apart by its first byte past whitespace: '{' the JSON
 * document or --events JSON Lines, '<' JUnit XML, 'T' or '1' TAP. Fills
 * *names with one malloc'd "scene::case" (an "@k" repeat suffix dropped)
 * per case reported fail, error or xpass, in file order; *n their count.
 * Returns 0; ST__RERUN_NOT_A_REPORT when the bytes are none of those (a
 * NUL byte, a value that does not start where one must, a structure left
 * open) or ST__RERUN_NOMEM, both with *names NULL and *n 0. Text that is
 * empty or only spaces, tabs and line ends is a report of no case (the
 * --events file of a run that selected nothing).
 * Caller frees *names with st__names_free. Thread-safety: any thread. */
int st__rerun_parse(const char *text /* IN */, size_t len,
                    char ***names /* OUT, owned */, size_t *n /* OUT */);

/* The same JSON reader for --shard-by durations:FILE: every case object
 * (members "scene", "case", "status" and an integer "duration_ns") of a
 * JSON document or --events file, in file order, as "scene::case" (the
 * "@k" suffix dropped) in *names and its duration in (*durs)[i]. *stop is
 * the byte offset where the reading stopped (the error's place when it
 * failed). 0, ST__RERUN_NOT_A_REPORT (also for a first byte that is not
 * '{', or a NUL byte) or ST__RERUN_NOMEM. Caller frees *names with
 * st__names_free and *durs with free. Thread-safety: any thread. */
int st__durations_parse(const char *text /* IN */, size_t len,
                        char ***names /* OUT, owned */,
                        uint64_t **durs /* OUT, owned */, size_t *n /* OUT */,
                        size_t *stop /* OUT */);

/* Frees n names and the array; names may be NULL. Thread-safety: any
 * thread. */
void st__names_free(char **names /* IN, owned */, size_t n);

#endif
