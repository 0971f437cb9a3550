/* SPDX-License-Identifier: MIT */
/* Building case and run results (the accessors are public, in run.h). */
#ifndef SCENETEST_HARNESS_RESULT_H
#define SCENETEST_HARNESS_RESULT_H

#include <scenetest/run.h>

#include "case/bench_measured.h"

struct st__quarantine;

/* A new result with status pass and no events; strings are copied. NULL
 * when out of memory. Thread-safety: any thread. */
st_case_result *st__case_result_new(const char *scene /* IN */,
                                    const char *kase /* IN */,
                                    const char *file /* IN */, int line,
                                    const char *platform /* IN */,
                                    uint64_t seed);
/* Appends a deep copy of ev. Thread-safety: one thread per result. */
st_status st__case_result_add_event(st_case_result *res /* IN/OUT */,
                                    const st_event *ev /* IN */) ST_WUR;
/* Sets the status and message, the first cause winning for both: a case
 * that already did not pass keeps its status and message; the message is
 * set only if none was set before. fmt may be NULL.
 * Thread-safety: one thread per result. */
void st__case_result_set_status(st_case_result *res /* IN/OUT */,
                                st_case_status status,
                                const char *fmt /* IN: printf format */, ...)
    ST_PRINTF(3, 4);
/* Replaces the status and message (for verdicts that override an earlier
 * one on purpose: --strict-record on a passing case, a child that died
 * or timed out after reporting part of its result). message may be NULL.
 * Thread-safety: one thread per result. */
void st__case_result_override(st_case_result *res /* IN/OUT */,
                              st_case_status status,
                              const char *message /* IN */);
/* For a case marked `expect: fail`: fail becomes xfail (the message
 * kept), pass becomes xpass; error and skip stay
 * (docs/scene-format.md#expected-failures). */
void st__case_result_apply_expect(st_case_result *res /* IN/OUT */);
/* For a case marked `expect: error` (docs/scene-format.md): kernel_error
 * is the message of the error the kernel's call reported (NULL: none did).
 * An error the kernel reported whose message contains text (any, when
 * text is NULL) passes; another message fails naming both; a pass or a
 * fail becomes a fail, "expected an error"; a skip and any other error
 * (a crash, bad arguments, a write out of bounds) stay. */
void st__case_result_apply_expect_error(st_case_result *res /* IN/OUT */,
                                        const char *kernel_error /* IN */,
                                        const char *text /* IN */);
/* Quarantine (docs/scene-format.md#quarantine), when q applies to the
 * run (applies: st__quarantine_applies): fail becomes xfail; pass becomes
 * xpass when q is strict, else stays a pass with the warning "passes:
 * remove the quarantine"; error and skip stay. When q has expired
 * (expired_on non-NULL: its date), a fail's or an error's message starts
 * with "quarantine expired on DATE: REASON". q NULL: nothing. */
void st__case_result_apply_quarantine(st_case_result *res /* IN/OUT */,
                                      const struct st__quarantine *q /* IN */,
                                      int applies, int expired);
/* The case's quarantine for the reports, copied (out of memory drops the
 * copy); applies: whether it applied to this run. */
void st__case_result_set_quarantine(st_case_result *res /* IN/OUT */,
                                    const struct st__quarantine *q /* IN */,
                                    int applies);
/* The quarantine set above or NULL; *applies (may be NULL) whether it
 * applied. Borrowed from res. */
const struct st__quarantine *
st__case_result_quarantine(const st_case_result *res /* IN */,
                           int *applies /* OUT */);
/* Adds a warning line (docs/reports.md), copied; out of memory drops it. */
void st__case_result_add_warning(st_case_result *res /* IN/OUT */,
                                 const char *text /* IN */);
/* The warnings, one a line (no final newline), or NULL. Borrowed. */
const char *st__case_result_warnings(const st_case_result *res /* IN */);
/* Marks the case mistrusted (docs/cli.md#mistrust) for reason,
 * copied, and adds the warning "mistrusted: REASON". */
void st__case_result_set_mistrust(st_case_result *res /* IN/OUT */,
                                  const char *reason /* IN */);
/* Sets the warnings (as st__case_result_warnings returns them) and the
 * mistrust reason as they are, copied: a result read from a child. */
void st__case_result_set_trust(st_case_result *res /* IN/OUT */,
                               const char *warnings /* IN */,
                               const char *mistrust /* IN */);
/* The reason the case is mistrusted, or NULL. Borrowed. */
const char *st__case_result_mistrust(const st_case_result *res /* IN */);
void st__case_result_set_output(st_case_result *res /* IN/OUT */,
                                const char *text /* IN */, size_t length);
void st__case_result_set_duration(st_case_result *res /* IN/OUT */,
                                  uint64_t ns);
void st__case_result_set_pid(st_case_result *res /* IN/OUT */, long pid);
void st__case_result_set_record_stale(st_case_result *res /* IN/OUT */,
                                      int stale);
void st__case_result_set_iteration(st_case_result *res /* IN/OUT */,
                                   unsigned iteration);
/* The autoload record line (without "[TIMING] ") of the process's one
 * emission, kept by the case whose `record` phase emitted it (docs/cli.md#json:
 * the JSON and JUnit reports carry the distinct records). Copied; NULL
 * clears it. */
void st__case_result_set_record(st_case_result *res /* IN/OUT */,
                                const char *line /* IN */);
/* NULL unless this case's record phase emitted the record. */
const char *st__case_result_record(const st_case_result *res /* IN */);
/* What `scenetest bench` measured for the case (docs/bench.md), copied;
 * NULL clears it. ST_ENOMEM leaves none. */
st_status
st__case_result_set_bench(st_case_result *res /* IN/OUT */,
                          const st__bench_measured *m /* IN */) ST_WUR;
/* NULL unless the case was benched. Borrowed. */
const st__bench_measured *
st__case_result_bench(const st_case_result *res /* IN */);
/* The case's env (docs/scene-format.md) for the reports: n pairs kv[2i] =
 * kv[2i+1], copied (out of memory drops the copy). */
void st__case_result_set_env(st_case_result *res /* IN/OUT */,
                             const char *const *kv /* IN */, size_t n);
/* Pair i of the case's env into *name and *value (when i < the count);
 * returns the count of pairs. */
size_t st__case_result_env(const st_case_result *res /* IN */, size_t i,
                           const char **name /* OUT */,
                           const char **value /* OUT */);

/* The case's tags (docs/scene-format.md#tags) for the reports, copied
 * (out of memory drops the copy); tag i into *name (when i < the count),
 * returning the count. */
void st__case_result_set_tags(st_case_result *res /* IN/OUT */,
                              const char *const *tags /* IN */, size_t n);
size_t st__case_result_tag(const st_case_result *res /* IN */, size_t i,
                           const char **name /* OUT */);

/* A run result with room for count cases (all NULL). */
st_run_result *st__run_result_new(size_t count);
/* The result at index (NULL if unset); owned by run. */
st_case_result *st__run_result_at(st_run_result *run /* IN */, size_t index);
/* Takes ownership of res. */
void st__run_result_set(st_run_result *run /* IN/OUT */, size_t index,
                        st_case_result *res /* IN/OUT */);

/* The run was stopped by signal sig (SIGINT, SIGTERM). */
void st__run_result_set_interrupted(st_run_result *run /* IN/OUT */, int sig);

/* The status named s (st_case_status_name, st_phase_status_name read
 * back; s may be NULL): 1 with *out, or 0. Thread-safety: any thread. */
int st__case_status_parse(const char *s /* IN */,
                          st_case_status *out /* OUT */);
int st__phase_status_parse(const char *s /* IN */,
                           st_phase_status *out /* OUT */);

#endif
