/* SPDX-License-Identifier: MIT */
/* Registry internals shared with the plugin loader and tests: lazy plugins
 * and repair accounting. */
#ifndef SCENETEST_HARNESS_REGISTRY_INTERNAL_H
#define SCENETEST_HARNESS_REGISTRY_INTERNAL_H

#include <scenetest/registry.h>

/* Loads a lazy plugin for real (dlopen + st_registry_add_module). Called by
 * the repair of a backend the plugin declares, with the repair lock held
 * and the registry lock not held (the load adds modules). */
typedef st_status (*st__lazy_load_fn)(st_registry *reg /* IN/OUT */,
                                      const char *path /* IN */,
                                      st_error *err /* OUT */);

/* Declares a lazy plugin: path is loaded by load() when a lookup misses on
 * one of platforms (n entries). Strings are copied.
 * Thread-safety: any thread. */
st_status st__registry_add_lazy(st_registry *reg /* IN/OUT */,
                                const char *path /* IN: copied */,
                                const char *const *platforms /* IN: copied */,
                                size_t n, st__lazy_load_fn load,
                                st_error *err /* OUT: may be NULL */) ST_WUR;

/* An eager plugin deferred (docs/reliability.md#the-process-model: the process
 * that forks case children loads no plugin): declared like a lazy plugin for
 * platforms, and loaded by st__registry_load_deferred in each process that
 * dispatches cases (else by the first lookup that misses, as a lazy
 * one). */
st_status st__registry_add_deferred(
    st_registry *reg /* IN/OUT */, const char *path /* IN: copied */,
    const char *const *platforms /* IN */, size_t n, st__lazy_load_fn load,
    st_error *err /* OUT: may be NULL */) ST_WUR;
/* st__registry_add_deferred for the eager --plugin spec (resolved as
 * st_plugin_load resolves it), platforms one a line (what a probe that
 * loaded it saw it provide). */
st_status st__plugin_defer(st_registry *reg /* IN/OUT */,
                           const char *spec /* IN */,
                           const char *platforms /* IN */,
                           st_error *err /* OUT */) ST_WUR;
/* Loads every deferred plugin not loaded yet (a failure is a WARNING);
 * returns how many it loaded. Thread-safety: any thread. */
int st__registry_load_deferred(st_registry *reg /* IN/OUT */);
/* How many of the modules added are not built in (plugins', an API
 * user's), plus the functions st_registry_register took other than from
 * a built-in module's init: 0 means that every function a case can call is the
 * harness's own, which prints nothing on fd 1 or 2, leaves those open and
 * starts no process (run/supervise.c skips its checks for them then). A count
 * that only grows, read without a lock. Thread-safety: any thread. */
unsigned st__registry_foreign(const st_registry *reg /* IN */);
/* How many modules are added. Thread-safety: any thread. */
size_t st__registry_module_count(st_registry *reg /* IN */);
/* A malloc'd list, one name a line (NULL when out of memory): ops set,
 * every op pattern registered; else the platforms and backends of the
 * modules from index first_module on. Thread-safety: any thread. */
char *st__registry_describe(st_registry *reg /* IN */, size_t first_module,
                            int ops);
/* Op names (one a line) that st__registry_has_op knows without an
 * implementation: what a deferred plugin registers. Copied. */
st_status st__registry_declare_ops(st_registry *reg /* IN/OUT */,
                                   const char *list /* IN */) ST_WUR;

/* st_registry_add_module for a module of the harness's own (the table of
 * ops/builtin.c): its init and what it registers do not count as foreign
 * (st__registry_foreign). Thread-safety: any thread. */
st_status st__registry_add_builtin(st_registry *reg /* IN/OUT */,
                                   const st_module *mod /* IN */,
                                   st_error *err /* OUT: may be NULL */) ST_WUR;

/* Checks what must hold before anything but the version is read from a
 * descriptor: abi_version (read first: it is at offset 0 in every ABI;
 * ABI 1 is named as such), a size that covers ABI 2's first layout, a
 * name. ST_EABI or ST_EINVAL with a message. Thread-safety: any thread. */
st_status st__module_check(const st_module *mod /* IN */,
                           st_error *err /* OUT */) ST_WUR;

/* How many repairs of backend have run to completion (successful or not);
 * for tests. Thread-safety: any thread. */
unsigned st__registry_repair_count(st_registry *reg /* IN */,
                                   const char *backend /* IN */);
/* 1 if backend carries the repaired mark. Thread-safety: any thread. */
int st__registry_is_repaired(st_registry *reg /* IN */,
                             const char *backend /* IN */);
/* 1 if the descriptor mod is added (its init may have failed).
 * Thread-safety: any thread. */
int st__registry_has_module(st_registry *reg /* IN */,
                            const st_module *mod /* IN */);
/* 1 if module name's init has completed. Thread-safety: any thread. */
int st__registry_module_complete(st_registry *reg /* IN */,
                                 const char *module /* IN */);

/* 1 if some module registered op for some backend (the load-time check
 * of docs/scene-format.md#load-errors asks whether an op exists at all).
 * Thread-safety: any thread. */
int st__registry_has_op(st_registry *reg /* IN/OUT */, const char *op /* IN */);

#endif
