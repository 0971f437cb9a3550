/* SPDX-License-Identifier: MIT */
/* The backend registry: op implementations keyed by (op, backend), modules
 * that register them, and the lookup with repair-before-fallback. */
#ifndef SCENETEST_REGISTRY_H
#define SCENETEST_REGISTRY_H

#include <scenetest/op.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The backend name of the fallback implementations. */
#define ST_BACKEND_COMMON "common"
/* The backend the golden op runs on. */
#define ST_BACKEND_REFERENCE "reference"

/* The plugin ABI this scenetest speaks. A descriptor of any other version
 * is refused, naming both versions
 * (docs/plugins.md#plugin-abi-2-the-descriptor). Version 2 added the size
 * field, the per-platform hooks, and st_op_call's size, platform_state,
 * device_ns and copy_ns. */
#define ST_ABI_VERSION 2u

typedef struct st_registry st_registry;

/* A platform's ceilings for `scenetest bench` (docs/bench.md#ceilings):
 * bytes a second of its memory and FLOPs a second per dtype class (index:
 * 0 float64, 1 float32, 2 half, 3 float8, 4 int); 0 where it has none. */
typedef struct st_platform_ceilings {
  double bytes_per_s;
  double flops_per_s[5];
} st_platform_ceilings;

/* The per-platform hooks of plugin ABI 2
 * (docs/plugins.md#platform-hooks-prepare-and-release). A module lists them in
 * st_module.hooks; the registry copies them when the module is added. The
 * strings and functions must outlive the registry. */
typedef struct st_platform_hooks {
  uint32_t size;        /* sizeof(st_platform_hooks) */
  const char *platform; /* the platform these hooks serve */
  /* Optional. At the end of `args`, after the kernel is resolved and bound
   * (docs/plugins.md#the-lookup-order): device context, allocation, upload of
   * inputs. call holds the host tensors. *state is handed to every run of the
   * case as call->platform_state and to release. An error ends the case as an
   * `args` error; ST_ESKIP declines the case. */
  st_status (*prepare)(st_op_call *call /* IN/OUT */, void **state /* OUT */);
  /* Optional. After the last round (also when a round failed), whenever
   * prepare succeeded. */
  void (*release)(st_op_call *call /* IN */, void *state /* IN, owned */);
  /* Appended for `scenetest bench` (docs/bench.md); each read only when
   * `size` covers it, so a module built before them still loads. All
   * optional. ceilings: the platform's own ceilings, measured or known,
   * once per process before the first benched case; an error means none.
   * flush: empties the device's cache (--cold-cache), before each timed
   * round, not timed. describe: the platform's part of the environment
   * fingerprint as `KEY="VALUE" ...` into buf (NUL-terminated, at most
   * size bytes; keys without the platform prefix, which the harness adds). */
  st_status (*ceilings)(st_platform_ceilings *out /* OUT */);
  st_status (*flush)(void);
  st_status (*describe)(char *buf /* OUT */, size_t size);
} st_platform_hooks;

/* A module: a named set of registrations, built in or from a plugin.
 * A plugin exports one as the symbol `scenetest_module` (from C++: declare
 * it `extern "C"`, or the symbol is mangled or, for a namespace-scope const
 * object, not exported at all).
 *
 * abi_version comes first and stays at offset 0 in every ABI, with size
 * right after it: whatever else a later (or earlier) ABI changes, the
 * loader can read the version of any descriptor and refuse it naming that
 * version, instead of misreading the rest. Fields after `init` are read
 * only when `size` covers them. */
typedef struct st_module {
  uint32_t abi_version;         /* ST_ABI_VERSION */
  uint32_t size;                /* sizeof(st_module) */
  const char *name;             /* module name, unique */
  const char *const *platforms; /* NULL-terminated platforms it provides */
  /* Registers the module's implementations. May be called again after it
   * failed (repair): registration is idempotent. */
  st_status (*init)(st_registry *reg /* IN */, st_error *err /* OUT */);
  /* Optional (NULL/0): hooks for some of the module's platforms, an array
   * of n_hooks entries stepped by each entry's size field; at most one
   * entry per platform. Owned by the plugin. */
  const st_platform_hooks *hooks;
  size_t n_hooks;
} st_module;

typedef enum st_lookup_kind {
  ST_LOOKUP_KERNEL = 0,
  ST_LOOKUP_GOLDEN = 1
} st_lookup_kind;

/* Creates a registry with nothing registered. Caller has ownership; free
 * with st_registry_free(). Thread-safety: any thread. */
ST_EXTERN st_status st_registry_new(st_registry **out /* OUT */) ST_WUR;
/* Creates a registry holding the built-in modules (reference, cpu,
 * threads, common). Caller has ownership; free with st_registry_free().
 * Thread-safety: any thread. */
ST_EXTERN st_status st_registry_new_builtin(st_registry **out /* OUT */) ST_WUR;
/* Accepts NULL. Thread-safety: no other call on reg may be running. */
ST_EXTERN void st_registry_free(st_registry *reg /* IN, owned */);

/* Adds a module and runs its init. An init that fails leaves the module
 * marked incomplete (its backend's repair re-runs it) and returns the
 * init's error; the module stays added. The module descriptor must outlive
 * the registry. Thread-safety: any thread. */
ST_EXTERN st_status st_registry_add_module(st_registry *reg /* IN */,
                                           const st_module *mod /* IN */,
                                           st_error *err /* OUT */) ST_WUR;

/* Registers fn for (op, backend) on behalf of module. Idempotent: the same
 * fn again is a no-op; a different fn is ST_ECONFLICT naming both modules.
 * An op ending in '*' registers a family: "aten::*" covers every op name
 * that starts with "aten::" (fn reads call->op to know which). A lookup
 * takes the op's own registration first, else the covering family with the
 * longest prefix, on that backend, before any repair or fallback.
 * Strings are copied. Thread-safety: any thread. */
ST_EXTERN st_status st_registry_register(st_registry *reg /* IN */,
                                         const char *module /* IN */,
                                         const char *op /* IN */,
                                         const char *backend /* IN */,
                                         st_op_fn fn,
                                         st_error *err /* OUT */) ST_WUR;

/* Looks up (op, backend): exact registration; else repair the backend once
 * and retry; else the op's `common` implementation; else ST_EMISSING with
 * the message "BackendImplementationMissing: backend 'B' is missing
 * required implementation: kernel for op 'O' (implemented by: A, C)".
 * Thread-safety: any thread; a lookup from inside a module init during a
 * repair does not wait. */
ST_EXTERN st_status st_registry_lookup(st_registry *reg /* IN */,
                                       const char *op /* IN */,
                                       const char *backend /* IN */,
                                       st_lookup_kind kind,
                                       st_op_fn *out /* OUT */,
                                       st_error *err /* OUT */) ST_WUR;

/* 1 if some module lists platform among its platforms, or a lazy plugin
 * declares it; a backend that implementations were registered under is
 * not a platform by that alone ("reference" is not). Thread-safety: any
 * thread. */
ST_EXTERN int st_registry_has_platform(st_registry *reg /* IN */,
                                       const char *platform /* IN */);
/* The hooks of platform, or NULL when no module gives it any. Owned by
 * the registry (a copy of the module's entry, at this header's layout),
 * valid while reg lives. Does not trigger a repair: a lazy plugin's hooks
 * appear once it has been loaded. Thread-safety: any thread. */
ST_EXTERN const st_platform_hooks *
st_registry_platform_hooks(st_registry *reg /* IN */,
                           const char *platform /* IN */);

/* Writes the known platforms, ", "-separated and sorted, into buf.
 * Thread-safety: any thread. */
ST_EXTERN void st_registry_platforms(st_registry *reg /* IN */,
                                     char *buf /* OUT */, size_t size);

#ifdef __cplusplus
}
#endif
#endif
