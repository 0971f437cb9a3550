/* SPDX-License-Identifier: MIT */
/* Hooks for tests only: NO ABI PROMISE. What is declared here may change
 * or go in any release, without a version bump; production code must not
 * call it. scenetest.h does not include this header; testing.h (the cmocka
 * assertions) does, and a test that needs only the hooks includes it
 * directly. The functions are exported so that tests of an embedding
 * program (linked against the shared library) can use them. */
#ifndef SCENETEST_TESTING_HOOKS_H
#define SCENETEST_TESTING_HOOKS_H

#include <scenetest/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Forgets that this process emitted its autoload record, so that the next
 * case's `record` event is the emitting one again (cmocka runs every test
 * in one process). Thread-safety: any thread. */
ST_EXTERN void st_record_reset(void);

#ifdef __cplusplus
}
#endif
#endif
