/* SPDX-License-Identifier: MIT */
/* The encodings of st_event and st_case_result (with the bench's figures
 * of the case, case/bench_measured.h) that a case's child (an isolated
 * or a supervised one) sends its parent, on the framing of
 * wire/frame.h, in frames of the types of wire/msg.h: ST__MSG_EVENT (one
 * event) and ST__MSG_RESULT (u32 case index, the result). Both ends are
 * the same build, so the format carries no version. Thread-safety: one
 * thread per buffer. */
#ifndef SCENETEST_HARNESS_WIRE_H
#define SCENETEST_HARNESS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/run.h>

#include "case/bench_measured.h"
#include "wire/frame.h"
#include "wire/msg.h"

/* One event, and its reverse: appends the decoded event to res. */
void st__wire_put_event(st__wbuf *b /* IN/OUT */, const st_event *ev /* IN */);
st_status st__wire_get_event(st__rbuf *r /* IN/OUT */,
                             st_case_result *res /* IN/OUT */) ST_WUR;
/* What `scenetest bench` measured for a case (docs/bench.md), or its
 * absence (m NULL): a u32 0 or 1, then the figures. The reverse sets it
 * on res; ST_EINVAL when malformed (a flag not 0 or 1, a dtype class out
 * of range), ST_ENOMEM. */
void st__wire_put_bench(st__wbuf *b /* IN/OUT */,
                        const st__bench_measured *m /* IN, may be NULL */);
st_status st__wire_get_bench(st__rbuf *r /* IN/OUT */,
                             st_case_result *res /* IN/OUT */) ST_WUR;
/* A whole case result (identity, verdict, output, events, and the bench's
 * figures when it has them). */
void st__wire_put_result(st__wbuf *b /* IN/OUT */,
                         const st_case_result *res /* IN */);
/* A new result (caller frees) or NULL when malformed / out of memory. */
st_case_result *st__wire_get_result(st__rbuf *r /* IN/OUT */);

/* The frames: an ST__MSG_EVENT of one event (what a child sends as a
 * phase ends), an ST__MSG_RESULT of case index's result. Not
 * thread-safe: callers hold their lock. */
void st__wire_event_frame(st__wbuf *b /* IN/OUT */,
                          const st_event *ev /* IN */);
void st__wire_result_frame(st__wbuf *b /* IN/OUT */, uint32_t index,
                           const st_case_result *res /* IN */);
/* An ST__MSG_RESULT frame's payload: its index in *index, its result (the
 * caller frees) or NULL when malformed or out of memory. */
st_case_result *st__wire_get_result_frame(const char *payload /* IN */,
                                          size_t plen,
                                          uint32_t *index /* OUT */);

#endif
