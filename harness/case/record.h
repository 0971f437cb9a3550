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

#endif
