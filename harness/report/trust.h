/* SPDX-License-Identifier: MIT */
/* What every reporter writes of a case's trust (docs/reports.md, "Trust"):
 * its warnings, its mistrust and its quarantine, and the end-of-run list
 * of quarantined cases. CLI-private. */
#ifndef SCENETEST_HARNESS_REPORT_TRUST_H
#define SCENETEST_HARNESS_REPORT_TRUST_H

#include <stdio.h>

#include <scenetest/run.h>

/* Each warning line of res as PREFIX "warning: S::C: LINE" and a newline,
 * the mistrust's as PREFIX "mistrusted: S::C: REASON"; the text as ASCII
 * (st__ascii_line). Nothing without warnings. */
void st__report_warnings(FILE *out /* IN */, const char *prefix /* IN */,
                         const st_case_result *res /* IN */);
/* The case's quarantine in words: "REASON (until DATE, platforms: a, b,
 * not strict, expired)", or nothing when it has none. */
void st__report_quarantine_words(FILE *out /* IN */,
                                 const st_case_result *res /* IN */);
/* The quarantined cases of run, once each (the first iteration), each as
 * PREFIX S::C: WORDS and a newline, after header (when any, and header
 * non-NULL). Returns how many. */
size_t st__report_quarantine_list(FILE *out /* IN */,
                                  const char *header /* IN, may be NULL */,
                                  const char *prefix /* IN */,
                                  const st_run_result *run /* IN */);
/* The JSON members `"mistrusted": B, "warnings": [...], "quarantine":
 * {...} | null`, each after ", ". */
void st__report_trust_json(FILE *out /* IN */,
                           const st_case_result *res /* IN */);
/* JUnit's <system-out> lines of res: "mistrusted: REASON", "warning:
 * LINE" for the others, "quarantine: WORDS"; XML-escaped. Returns 1 if it
 * wrote any. */
int st__report_trust_junit(FILE *out /* IN */,
                           const st_case_result *res /* IN */);
/* 1 if res has anything st__report_trust_junit writes. */
int st__report_trust_any(const st_case_result *res /* IN */);

#endif
