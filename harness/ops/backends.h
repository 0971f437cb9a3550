/* SPDX-License-Identifier: MIT */
/* The built-in modules: reference (golden), cpu, threads and the `common`
 * fallbacks. */
#ifndef SCENETEST_HARNESS_BACKENDS_H
#define SCENETEST_HARNESS_BACKENDS_H

#include <scenetest/registry.h>

extern const st_module st__module_reference;
extern const st_module st__module_cpu;
extern const st_module st__module_threads;
extern const st_module st__module_common;

/* Names of the built-in ops, NULL-terminated. */
extern const char *const st__builtin_ops[];

#endif
