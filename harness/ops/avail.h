/* SPDX-License-Identifier: MIT */
/* What a run has and what a case needs of it (docs/cli.md, "Cases that
 * need what the run lacks"): which backend computes a case's golden, and
 * whether the run has it. A case whose golden backend the run lacks is
 * skipped with a reason that says how to get it; `--strict-platforms`
 * makes that an error. */
#ifndef SCENETEST_HARNESS_AVAIL_H
#define SCENETEST_HARNESS_AVAIL_H

#include <stddef.h>

#include <scenetest/registry.h>

#include "scene/scene.h"

/* Every such skip's message starts with this; the short reason follows,
 * up to the first ';' (what the run's summary warning counts). */
#define ST__UNAVAILABLE_PREFIX "not available: "

/* The backend that computes golden for case ci of scene: an `aten::`
 * golden is torch's (the CLI's --golden-platform does not apply to it;
 * a golden_platform written in the scene does), else cli_golden (the
 * CLI's --golden-platform; NULL when not given), the case's
 * golden_platform, the scene's, or "reference". Borrowed from its
 * arguments or static. Thread-safety: any thread. */
const char *st__golden_backend(const char *cli_golden /* IN, may be NULL */,
                               const st_scene *scene /* IN */, size_t ci);

/* 1 when backend is available to a run through reg: the built-in
 * reference backend, a built-in platform, a --plugin (eager, lazy or
 * deferred), or a declared default plugin.
 * Thread-safety: any thread. */
int st__backend_available(st_registry *reg /* IN */,
                          const char *backend /* IN */);

/* The reason a case that needs backend is skipped, as one line
 * ST__UNAVAILABLE_PREFIX "SHORT; HOW" (what is missing, then the plugin
 * to pass and the meson option that builds it). Thread-safety: any
 * thread. */
void st__backend_missing(const char *backend /* IN */, char *buf /* OUT */,
                         size_t size);

#endif
