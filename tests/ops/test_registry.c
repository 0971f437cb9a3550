/* SPDX-License-Identifier: MIT */
/* The registry: idempotent registration, repair before fallback, repairs
 * marked only on success and retried, loading cycles, concurrent lookups
 * waiting for one repair, a lazy plugin declared while a repair runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <scenetest/scenetest.h>

#include "ops/registry_internal.h"

static st_status impl_a(st_op_call *c) {
  (void)c;
  return ST_OK;
}
static st_status impl_b(st_op_call *c) {
  (void)c;
  return ST_OK;
}
static st_status impl_common(st_op_call *c) {
  (void)c;
  return ST_OK;
}

static st_registry *fresh(void) {
  st_registry *reg = NULL;
  assert_int_equal(st_registry_new(&reg), ST_OK);
  st_log_set_level(ST_LOG_NULL);
  return reg;
}

static void st_registry_register__same_function_is_noop(void **state) {
  st_registry *reg = fresh();
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_registry_register(reg, "m", "op", "bk", impl_a, &err),
                   ST_OK);
  assert_int_equal(st_registry_register(reg, "m2", "op", "bk", impl_a, &err),
                   ST_OK);
  assert_int_equal(
      st_registry_lookup(reg, "op", "bk", ST_LOOKUP_KERNEL, &fn, &err), ST_OK);
  assert_ptr_equal(fn, impl_a);
  st_registry_free(reg);
}

static void st_registry_register__different_function_conflicts(void **state) {
  st_registry *reg = fresh();
  st_error err;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_registry_register(reg, "first", "op", "bk", impl_a, &err),
                   ST_OK);
  assert_int_equal(
      st_registry_register(reg, "second", "op", "bk", impl_b, &err),
      ST_ECONFLICT);
  assert_string_equal(err.message,
                      "conflicting registration of op 'op' on backend 'bk': "
                      "module 'second' registers a different implementation "
                      "than module 'first'");
  st_registry_free(reg);
}

static st_status init_noop(st_registry *reg, st_error *err) {
  (void)reg;
  (void)err;
  return ST_OK;
}

static void st_registry_add_module__abi_mismatch_names_both(void **state) {
  static const st_module bad = {99, sizeof(st_module), "future", NULL,
                                init_noop};
  st_registry *reg = fresh();
  st_error err;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_registry_add_module(reg, &bad, &err), ST_EABI);
  assert_string_equal(err.message, "module descriptor has ABI version 99, "
                                   "this scenetest has ABI version 2");
  st_registry_free(reg);
}

/* ABI 1's layout: no size; its name (at the same offset) is named. */
static void st_registry_add_module__abi1_named(void **state) {
  static const struct {
    uint32_t abi_version;
    const char *name;
    const char *const *platforms;
    void *init;
  } v1 = {1, "old", NULL, NULL};
  st_registry *reg = fresh();
  st_error err;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(
      st_registry_add_module(reg, (const st_module *)(const void *)&v1, &err),
      ST_EABI);
  assert_string_equal(err.message, "module 'old' has ABI version 1, this "
                                   "scenetest has ABI version 2");
  st_registry_free(reg);
}

static void st_registry_add_module__size_and_name_checked(void **state) {
  static const st_module zero = {ST_ABI_VERSION, 0, "zero", NULL, init_noop};
  static const st_module noname = {ST_ABI_VERSION, sizeof(st_module), NULL,
                                   NULL, init_noop};
  st_registry *reg = fresh();
  st_error err;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_registry_add_module(reg, &zero, &err), ST_EINVAL);
  assert_non_null(strstr(err.message, "module descriptor has size 0, less "
                                      "than the"));
  st_error_clear(&err);
  assert_int_equal(st_registry_add_module(reg, &noname, &err), ST_EINVAL);
  assert_string_equal(err.message, "module without a name");
  st_error_clear(&err);
  assert_int_equal(st_registry_add_module(reg, NULL, &err), ST_EINVAL);
  st_registry_free(reg);
}

/* D8 of issue 13: a descriptor with a NULL name used to crash the
 * registry (strcmp(NULL)). Each invalid field is a refusal with its own
 * message, the registry unchanged and usable. */
static void d8__invalid_descriptor_fields_refused(void **state) {
  static const char *const plats[] = {"p8", NULL};
  static const st_module noname = {ST_ABI_VERSION, sizeof(st_module), NULL,
                                   plats, init_noop};
  static const st_module empty = {ST_ABI_VERSION, sizeof(st_module), "", plats,
                                  init_noop};
  static const st_module nohooks = {
      ST_ABI_VERSION, sizeof(st_module), "nh", plats, init_noop, NULL, 2};
  static const st_platform_hooks nullplat = {sizeof(st_platform_hooks), NULL,
                                             NULL, NULL};
  static const st_module hooknull = {
      ST_ABI_VERSION, sizeof(st_module), "hn", plats, init_noop, &nullplat, 1};
  static const st_module good = {ST_ABI_VERSION, sizeof(st_module), "g8", plats,
                                 init_noop};
  const st_module *bad[] = {&noname, &empty, &nohooks, &hooknull};
  const char *why[] = {"module without a name", "module with an empty name",
                       "module 'nh': n_hooks is 2 but hooks is NULL",
                       ("module 'hn': hooks entry 0 is for platform '(null)', "
                        "which the module does not provide")};
  st_registry *reg = fresh();
  st_error err;
  size_t i;
  (void)state;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    st_error_clear(&err);
    assert_int_equal(st_registry_add_module(reg, bad[i], &err), ST_EINVAL);
    assert_string_equal(err.message, why[i]);
  }
  st_error_clear(&err);
  assert_int_equal(st_registry_add_module(reg, &good, &err), ST_OK);
  st_registry_free(reg);
}

static st_status hook_prepare(st_op_call *call, void **state) {
  (void)call;
  *state = NULL;
  return ST_OK;
}

static const char *const hp_platforms[] = {"hp", NULL};

/* A module of a smaller, first-layout size (no hooks fields) is read
 * without its hooks; one of the full size gets them; the hooks array is
 * stepped by each entry's size. */
static void st_registry_add_module__hooks_read_within_size(void **state) {
  /* A "newer" hooks entry: ours plus a field this library does not know. */
  static const struct {
    st_platform_hooks h;
    void *future;
  } newer[2] = {{{sizeof newer[0], "hp", hook_prepare, NULL}, NULL},
                {{sizeof newer[0], "hp2", NULL, NULL}, NULL}};
  static const char *const two[] = {"hp", "hp2", NULL};
  st_module small = {
      ST_ABI_VERSION,
      (uint32_t)(offsetof(st_module, init) + sizeof(void (*)(void))),
      "small",
      hp_platforms,
      init_noop,
      (const st_platform_hooks *)(const void *)newer,
      2};
  st_module full = {ST_ABI_VERSION,
                    sizeof(st_module),
                    "full",
                    two,
                    init_noop,
                    (const st_platform_hooks *)(const void *)newer,
                    2};
  st_registry *reg = fresh();
  st_error err;
  const st_platform_hooks *h;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_registry_add_module(reg, &small, &err), ST_OK);
  assert_null(st_registry_platform_hooks(reg, "hp"));
  st_registry_free(reg);
  reg = fresh();
  assert_int_equal(st_registry_add_module(reg, &full, &err), ST_OK);
  h = st_registry_platform_hooks(reg, "hp");
  assert_non_null(h);
  assert_ptr_equal(h->prepare, hook_prepare);
  assert_int_equal(h->size, sizeof(st_platform_hooks));
  h = st_registry_platform_hooks(reg, "hp2");
  assert_non_null(h);
  assert_string_equal(h->platform, "hp2");
  assert_null(h->prepare);
  st_registry_free(reg);
}

/* Bad hooks are refused before the module is added, each with its
 * reason; a second module's hooks for the same platform conflict. */
static void st_registry_add_module__bad_hooks_refused(void **state) {
  static const st_platform_hooks zero_size[] = {{0, "hp", NULL, NULL}};
  static const st_platform_hooks other[] = {
      {sizeof(st_platform_hooks), "elsewhere", NULL, NULL}};
  static const st_platform_hooks twice[] = {
      {sizeof(st_platform_hooks), "hp", NULL, NULL},
      {sizeof(st_platform_hooks), "hp", NULL, NULL}};
  static const st_platform_hooks ok[] = {
      {sizeof(st_platform_hooks), "hp", hook_prepare, NULL}};
  static const struct {
    const st_platform_hooks *hooks;
    size_t n;
    const char *msg;
  } cases[] = {
      {zero_size, 1, "module 'm': hooks entry 0 has size 0, less than the"},
      {other, 1,
       "module 'm': hooks entry 0 is for platform 'elsewhere', "
       "which the module does not provide"},
      {twice, 2, "module 'm': two hooks entries for platform 'hp'"},
      {NULL, 1, "module 'm': n_hooks is 1 but hooks is NULL"},
  };
  st_registry *reg = fresh();
  st_error err;
  size_t i;
  (void)state;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    st_module m = {ST_ABI_VERSION, sizeof(st_module), "m",       hp_platforms,
                   init_noop,      cases[i].hooks,    cases[i].n};
    st_error_clear(&err);
    assert_int_equal(st_registry_add_module(reg, &m, &err), ST_EINVAL);
    assert_non_null(strstr(err.message, cases[i].msg));
    assert_false(st__registry_has_module(reg, &m));
  }
  {
    static const st_module first = {ST_ABI_VERSION,
                                    sizeof(st_module),
                                    "one",
                                    hp_platforms,
                                    init_noop,
                                    ok,
                                    1};
    static const st_module second = {ST_ABI_VERSION,
                                     sizeof(st_module),
                                     "two",
                                     hp_platforms,
                                     init_noop,
                                     ok,
                                     1};
    st_error_clear(&err);
    assert_int_equal(st_registry_add_module(reg, &first, &err), ST_OK);
    assert_int_equal(st_registry_add_module(reg, &second, &err), ST_ECONFLICT);
    assert_string_equal(err.message, "module 'two' gives hooks for platform "
                                     "'hp', which module 'one' already "
                                     "gives");
  }
  st_registry_free(reg);
}

static void st_registry_lookup__missing_names_implementers(void **state) {
  st_registry *reg = fresh();
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(
      st_registry_register(reg, "m", "matmul", "cpu", impl_a, &err), ST_OK);
  assert_int_equal(
      st_registry_register(reg, "m", "matmul", "threads", impl_a, &err), ST_OK);
  assert_int_equal(
      st_registry_register(reg, "m", "matmul", "reference", impl_a, &err),
      ST_OK);
  assert_int_equal(
      st_registry_lookup(reg, "matmul", "example", ST_LOOKUP_KERNEL, &fn, &err),
      ST_EMISSING);
  assert_null(fn);
  assert_string_equal(err.message,
                      "BackendImplementationMissing: backend 'example' is "
                      "missing required implementation: kernel for op "
                      "'matmul' (implemented by: cpu, reference, threads)");
  st_error_clear(&err);
  assert_int_equal(st_registry_lookup(reg, "softmax", "reference",
                                      ST_LOOKUP_GOLDEN, &fn, &err),
                   ST_EMISSING);
  assert_string_equal(err.message,
                      "BackendImplementationMissing: backend 'reference' is "
                      "missing required implementation: golden for op "
                      "'softmax' (implemented by: none)");
  st_registry_free(reg);
}

/* A module whose init registers op1, then fails the first `failures`
 * times before registering op2. */
static int partial_calls, partial_failures;
static const char *const bk_platforms[] = {"bk", NULL};

static st_status partial_init(st_registry *reg, st_error *err) {
  st_status rc;
  partial_calls++;
  rc = st_registry_register(reg, "partial", "op1", "bk", impl_a, err);
  if (rc != ST_OK)
    return rc;
  if (partial_calls <= partial_failures)
    return st_error_set(err, ST_EKERNEL, "interrupted (call %d)",
                        partial_calls);
  return st_registry_register(reg, "partial", "op2", "bk", impl_b, err);
}
static const st_module partial_module = {ST_ABI_VERSION, sizeof(st_module),
                                         "partial", bk_platforms, partial_init};

static void st_registry_lookup__repairs_partial_init(void **state) {
  st_registry *reg = fresh();
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  partial_calls = 0;
  partial_failures = 1;
  st_error_clear(&err);
  assert_int_equal(st_registry_add_module(reg, &partial_module, &err),
                   ST_EKERNEL);
  assert_int_equal(st__registry_module_complete(reg, "partial"), 0);
  assert_int_equal(partial_calls, 1);
  st_error_clear(&err);
  assert_int_equal(
      st_registry_lookup(reg, "op2", "bk", ST_LOOKUP_KERNEL, &fn, &err), ST_OK);
  assert_ptr_equal(fn, impl_b);
  /* The init re-ran once; its repeated op1 registration did not
   * conflict. */
  assert_int_equal(partial_calls, 2);
  assert_int_equal(st__registry_repair_count(reg, "bk"), 1);
  assert_int_equal(st__registry_is_repaired(reg, "bk"), 1);
  assert_int_equal(st__registry_module_complete(reg, "partial"), 1);
  /* A later miss on a repaired backend does not repair again. */
  assert_int_equal(
      st_registry_lookup(reg, "op3", "bk", ST_LOOKUP_KERNEL, &fn, &err),
      ST_EMISSING);
  assert_int_equal(partial_calls, 2);
  assert_int_equal(st__registry_repair_count(reg, "bk"), 1);
  st_registry_free(reg);
}

static void st_registry_lookup__failed_repair_is_retried(void **state) {
  st_registry *reg = fresh();
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  partial_calls = 0;
  partial_failures = 2;
  st_error_clear(&err);
  assert_int_equal(st_registry_add_module(reg, &partial_module, &err),
                   ST_EKERNEL);
  st_error_clear(&err);
  /* The repair's init fails again: missing, and not marked repaired. */
  assert_int_equal(
      st_registry_lookup(reg, "op2", "bk", ST_LOOKUP_KERNEL, &fn, &err),
      ST_EMISSING);
  assert_string_equal(err.message,
                      "BackendImplementationMissing: backend 'bk' is missing "
                      "required implementation: kernel for op 'op2' "
                      "(implemented by: none)");
  assert_int_equal(partial_calls, 2);
  assert_int_equal(st__registry_is_repaired(reg, "bk"), 0);
  assert_int_equal(st__registry_repair_count(reg, "bk"), 1);
  /* The next lookup retries, and this time the init completes. */
  st_error_clear(&err);
  assert_int_equal(
      st_registry_lookup(reg, "op2", "bk", ST_LOOKUP_KERNEL, &fn, &err), ST_OK);
  assert_ptr_equal(fn, impl_b);
  assert_int_equal(partial_calls, 3);
  assert_int_equal(st__registry_repair_count(reg, "bk"), 2);
  assert_int_equal(st__registry_is_repaired(reg, "bk"), 1);
  st_registry_free(reg);
}

static void st_registry_lookup__repair_before_common(void **state) {
  st_registry *reg = fresh();
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  partial_calls = 0;
  partial_failures = 1;
  st_error_clear(&err);
  assert_int_equal(st_registry_register(reg, "common", "op2", ST_BACKEND_COMMON,
                                        impl_common, &err),
                   ST_OK);
  assert_int_equal(st_registry_add_module(reg, &partial_module, &err),
                   ST_EKERNEL);
  st_error_clear(&err);
  assert_int_equal(
      st_registry_lookup(reg, "op2", "bk", ST_LOOKUP_KERNEL, &fn, &err), ST_OK);
  /* The backend's own implementation, found by the repair: not common. */
  assert_ptr_equal(fn, impl_b);
  /* An op the backend really lacks falls back to common. */
  assert_int_equal(st_registry_register(reg, "common", "op9", ST_BACKEND_COMMON,
                                        impl_common, &err),
                   ST_OK);
  assert_int_equal(
      st_registry_lookup(reg, "op9", "bk", ST_LOOKUP_KERNEL, &fn, &err), ST_OK);
  assert_ptr_equal(fn, impl_common);
  st_registry_free(reg);
}

/* Loading cycle: A's init adds module B; B's init looks up an op of A
 * while A is initialising (and fails); that interrupts A. A's init also
 * looks up on its own backend every time, which during a repair (under the
 * repair lock) must neither wait nor repair. */
static int a_calls, b_calls;
static st_op_fn b_saw;
static const char *const a_platforms[] = {"back_a", NULL};
static const char *const b_platforms[] = {"back_b", NULL};
static st_status b_init(st_registry *reg, st_error *err);
static const st_module module_b = {ST_ABI_VERSION, sizeof(st_module), "mod_b",
                                   b_platforms, b_init};

static st_status a_init(st_registry *reg, st_error *err) {
  st_op_fn fn = NULL;
  st_error inner;
  st_status rc;
  a_calls++;
  st_error_clear(&inner);
  /* Misses on the first init; must not wait or repair during a repair. */
  if (st_registry_lookup(reg, "a_later", "back_a", ST_LOOKUP_KERNEL, &fn,
                         &inner) == ST_OK &&
      fn != impl_b)
    return st_error_set(err, ST_EINTERNAL, "wrong implementation");
  rc = st_registry_register(reg, "mod_a", "a_first", "back_a", impl_a, err);
  if (rc != ST_OK)
    return rc;
  rc = st_registry_add_module(reg, &module_b, err);
  if (rc != ST_OK && rc != ST_ECONFLICT)
    return rc;
  return st_registry_register(reg, "mod_a", "a_later", "back_a", impl_b, err);
}
static const st_module module_a = {ST_ABI_VERSION, sizeof(st_module), "mod_a",
                                   a_platforms, a_init};

static st_status b_init(st_registry *reg, st_error *err) {
  st_error inner;
  b_calls++;
  st_error_clear(&inner);
  b_saw = NULL;
  if (st_registry_lookup(reg, "a_later", "back_a", ST_LOOKUP_KERNEL, &b_saw,
                         &inner) != ST_OK)
    return st_error_set(err, ST_EKERNEL, "mod_b: %s", inner.message);
  return st_registry_register(reg, "mod_b", "b_op", "back_b", impl_a, err);
}

static void st_registry_lookup__loading_cycle_no_deadlock(void **state) {
  st_registry *reg = fresh();
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  a_calls = b_calls = 0;
  st_error_clear(&err);
  assert_int_equal(st_registry_add_module(reg, &module_a, &err), ST_EKERNEL);
  assert_int_equal(a_calls, 1);
  assert_int_equal(b_calls, 1);
  assert_int_equal(st__registry_module_complete(reg, "mod_a"), 0);
  assert_int_equal(st__registry_module_complete(reg, "mod_b"), 0);
  /* The lookups made from inside the inits did not repair anything. */
  assert_int_equal(st__registry_repair_count(reg, "back_a"), 0);
  st_error_clear(&err);
  assert_int_equal(
      st_registry_lookup(reg, "a_later", "back_a", ST_LOOKUP_KERNEL, &fn, &err),
      ST_OK);
  assert_ptr_equal(fn, impl_b);
  assert_int_equal(a_calls, 2);
  assert_int_equal(st__registry_module_complete(reg, "mod_a"), 1);
  assert_int_equal(st__registry_repair_count(reg, "back_a"), 1);
  /* B is repaired through its own backend: its lookup now finds A's op. */
  assert_int_equal(
      st_registry_lookup(reg, "b_op", "back_b", ST_LOOKUP_KERNEL, &fn, &err),
      ST_OK);
  assert_ptr_equal(b_saw, impl_b);
  assert_int_equal(b_calls, 2);
  assert_int_equal(st__registry_module_complete(reg, "mod_b"), 1);
  st_registry_free(reg);
}

/* Concurrency: N threads released together look up a missing op while the
 * repair is slow (the repairing init waits until every thread has
 * started its lookup). All get the repaired implementation; one repair. */
#define N_THREADS 8
static pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slow_cond = PTHREAD_COND_INITIALIZER;
static int slow_started, slow_calls;
static pthread_barrier_t slow_barrier;

static st_status slow_init(st_registry *reg, st_error *err) {
  pthread_mutex_lock(&slow_lock);
  slow_calls++;
  if (slow_calls == 1) {
    pthread_mutex_unlock(&slow_lock);
    return st_error_set(err, ST_EKERNEL, "first init interrupted");
  }
  while (slow_started < N_THREADS)
    pthread_cond_wait(&slow_cond, &slow_lock);
  pthread_mutex_unlock(&slow_lock);
  return st_registry_register(reg, "slow", "slow_op", "slow_bk", impl_b, err);
}
static const char *const slow_platforms[] = {"slow_bk", NULL};
static const st_module slow_module = {ST_ABI_VERSION, sizeof(st_module), "slow",
                                      slow_platforms, slow_init};

typedef struct lookup_arg {
  st_registry *reg;
  st_op_fn fn;
  st_status rc;
} lookup_arg;

static void *lookup_thread(void *p) {
  lookup_arg *a = p;
  st_error err;
  st_error_clear(&err);
  pthread_barrier_wait(&slow_barrier);
  pthread_mutex_lock(&slow_lock);
  slow_started++;
  pthread_cond_broadcast(&slow_cond);
  pthread_mutex_unlock(&slow_lock);
  a->rc = st_registry_lookup(a->reg, "slow_op", "slow_bk", ST_LOOKUP_KERNEL,
                             &a->fn, &err);
  return NULL;
}

static void
st_registry_lookup__concurrent_lookups_wait_for_repair(void **state) {
  st_registry *reg = fresh();
  st_error err;
  pthread_t th[N_THREADS];
  lookup_arg args[N_THREADS];
  int i;
  (void)state;
  slow_started = slow_calls = 0;
  st_error_clear(&err);
  assert_int_equal(st_registry_add_module(reg, &slow_module, &err), ST_EKERNEL);
  pthread_barrier_init(&slow_barrier, NULL, N_THREADS);
  for (i = 0; i < N_THREADS; i++) {
    args[i].reg = reg;
    args[i].fn = NULL;
    args[i].rc = ST_EINTERNAL;
    assert_int_equal(pthread_create(&th[i], NULL, lookup_thread, &args[i]), 0);
  }
  for (i = 0; i < N_THREADS; i++)
    pthread_join(th[i], NULL);
  pthread_barrier_destroy(&slow_barrier);
  for (i = 0; i < N_THREADS; i++) {
    assert_int_equal(args[i].rc, ST_OK);
    assert_ptr_equal(args[i].fn, impl_b);
  }
  assert_int_equal(slow_calls, 2);
  assert_int_equal(st__registry_repair_count(reg, "slow_bk"), 1);
  st_registry_free(reg);
}

/* A lazy plugin declared by another thread while a repair is loading one:
 * the declaration grows (moves) the registry's array of lazy plugins under
 * the repair's feet. The repair must neither touch the old array (a heap
 * use after free that ThreadSanitizer and AddressSanitizer report) nor miss
 * the plugin declared for its backend meanwhile. The adder declares more
 * plugins than the array's first capacity, so the array moves. */
#define RACE_LAZIES 40
/* 0: nothing yet; 1: the repair is inside the first plugin's load; 2: the
 * adder has declared all its plugins. The adder waits for 1 with acquire;
 * the repair waits for 2 with a relaxed load on purpose: in a run the two
 * threads do not synchronise with each other, so the test must not give
 * ThreadSanitizer a happens-before edge the registry's own locks do not. */
static atomic_int race_phase;
static int race_first_loads, race_late_loads, race_other_loads;

static st_status race_load_first(st_registry *reg, const char *path,
                                 st_error *err) {
  (void)reg, (void)path, (void)err;
  race_first_loads++;
  atomic_store_explicit(&race_phase, 1, memory_order_release);
  while (atomic_load_explicit(&race_phase, memory_order_relaxed) != 2)
    sched_yield();
  return ST_OK; /* registers nothing: the late plugin provides the op */
}

static st_status race_load_late(st_registry *reg, const char *path,
                                st_error *err) {
  (void)path;
  race_late_loads++;
  return st_registry_register(reg, "late", "race_op", "race_bk", impl_a, err);
}

static st_status race_load_other(st_registry *reg, const char *path,
                                 st_error *err) {
  (void)reg, (void)path, (void)err;
  race_other_loads++;
  return ST_OK;
}

static void *race_adder(void *p) {
  st_registry *reg = p;
  static const char *const other[] = {"other_bk"};
  static const char *const race[] = {"race_bk"};
  st_error err;
  int i;
  while (atomic_load_explicit(&race_phase, memory_order_acquire) != 1)
    sched_yield();
  for (i = 0; i < RACE_LAZIES; i++) {
    char path[32];
    snprintf(path, sizeof path, "other%d.so", i);
    st_error_clear(&err);
    if (st__registry_add_lazy(reg, path, other, 1, race_load_other, &err) !=
        ST_OK)
      return "add_lazy failed";
  }
  st_error_clear(&err);
  if (st__registry_add_lazy(reg, "late.so", race, 1, race_load_late, &err) !=
      ST_OK)
    return "add_lazy failed";
  atomic_store_explicit(&race_phase, 2, memory_order_relaxed);
  return NULL;
}

static void st_registry_lookup__lazy_added_during_repair(void **state) {
  static const char *const race[] = {"race_bk"};
  st_registry *reg = fresh();
  st_error err;
  st_op_fn fn = NULL;
  pthread_t th;
  void *adder_rc = "not joined";
  (void)state;
  atomic_store(&race_phase, 0);
  race_first_loads = race_late_loads = race_other_loads = 0;
  st_error_clear(&err);
  assert_int_equal(
      st__registry_add_lazy(reg, "first.so", race, 1, race_load_first, &err),
      ST_OK);
  assert_int_equal(pthread_create(&th, NULL, race_adder, reg), 0);
  assert_int_equal(st_registry_lookup(reg, "race_op", "race_bk",
                                      ST_LOOKUP_KERNEL, &fn, &err),
                   ST_OK);
  pthread_join(th, &adder_rc);
  assert_null(adder_rc);
  assert_ptr_equal(fn, impl_a);
  assert_int_equal(race_first_loads, 1);
  assert_int_equal(race_late_loads, 1);
  assert_int_equal(race_other_loads, 0);
  assert_int_equal(st__registry_is_repaired(reg, "race_bk"), 1);
  assert_int_equal(st_registry_has_platform(reg, "other_bk"), 1);
  /* A later miss does not repair (and load) again. */
  assert_int_equal(st_registry_lookup(reg, "nothing", "race_bk",
                                      ST_LOOKUP_KERNEL, &fn, &err),
                   ST_EMISSING);
  assert_int_equal(race_first_loads, 1);
  assert_int_equal(st__registry_repair_count(reg, "race_bk"), 1);
  st_registry_free(reg);
}

static int deferred_loads;

static st_status deferred_load_ok(st_registry *reg, const char *path,
                                  st_error *err) {
  (void)path;
  deferred_loads++;
  return st_registry_register(reg, "dmod", "dop", "dplat", impl_a, err);
}

static st_status deferred_load_fails(st_registry *reg, const char *path,
                                     st_error *err) {
  (void)reg;
  deferred_loads++;
  return st_error_set(err, ST_EPLUGIN, "plugin '%s': gone", path);
}

/* A deferred eager plugin (the CLI's probe,
 * docs/reliability.md#the-process-model): its platforms are known and its
 * declared ops pass the load-time check before it is loaded;
 * st__registry_load_deferred loads it once (a lookup then finds its op without
 * a repair); one that fails to load is counted out, marked not loaded, and a
 * lazy plugin is not loaded by it. */
static void st_registry_deferred__declared_then_loaded_once(void **state) {
  static const char *const plat[] = {"dplat"};
  static const char *const other[] = {"oplat"};
  st_registry *reg = fresh();
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  deferred_loads = 0;
  st_error_clear(&err);
  assert_int_equal(
      st__registry_add_deferred(reg, "d.so", plat, 1, deferred_load_ok, &err),
      ST_OK);
  assert_int_equal(st__registry_add_lazy(reg, "lazy.so", other, 1,
                                         deferred_load_fails, &err),
                   ST_OK);
  assert_int_equal(st_registry_has_platform(reg, "dplat"), 1);
  assert_int_equal(st__registry_has_op(reg, "dop"), 0);
  assert_int_equal(st__registry_declare_ops(reg, "dop\nfam::*\n"), ST_OK);
  assert_int_equal(st__registry_has_op(reg, "dop"), 1);
  assert_int_equal(st__registry_has_op(reg, "fam::x"), 1);
  assert_int_equal(st__registry_has_op(reg, "nope"), 0);
  /* Declaring loaded nothing. */
  assert_int_equal(deferred_loads, 0);
  assert_int_equal(st__registry_load_deferred(reg), 1);
  assert_int_equal(deferred_loads, 1);
  assert_int_equal(st__registry_load_deferred(reg), 0);
  assert_int_equal(deferred_loads, 1);
  assert_int_equal(
      st_registry_lookup(reg, "dop", "dplat", ST_LOOKUP_KERNEL, &fn, &err),
      ST_OK);
  assert_ptr_equal(fn, impl_a);
  st_registry_free(reg);

  reg = fresh();
  deferred_loads = 0;
  assert_int_equal(st__registry_add_deferred(reg, "gone.so", plat, 1,
                                             deferred_load_fails, &err),
                   ST_OK);
  assert_int_equal(st__registry_load_deferred(reg), 0);
  assert_int_equal(deferred_loads, 1);
  /* Not loaded: the lookup's repair tries it again, and says why. */
  assert_int_equal(
      st_registry_lookup(reg, "dop", "dplat", ST_LOOKUP_KERNEL, &fn, &err),
      ST_EMISSING);
  assert_int_equal(deferred_loads, 2);
  assert_non_null(strstr(err.message, "gone"));
  st_registry_free(reg);
}

static void st_registry_new_builtin__platforms(void **state) {
  st_registry *reg = NULL;
  char buf[256];
  st_op_fn fn = NULL;
  st_error err;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_registry_new_builtin(&reg), ST_OK);
  st_registry_platforms(reg, buf, sizeof buf);
  assert_string_equal(buf, "cpu, threads");
  assert_int_equal(st_registry_has_platform(reg, "cpu"), 1);
  assert_int_equal(st_registry_has_platform(reg, "reference"), 0);
  /* copy has a common implementation any backend falls back to. */
  assert_int_equal(
      st_registry_lookup(reg, "copy", "nowhere", ST_LOOKUP_KERNEL, &fn, &err),
      ST_OK);
  assert_non_null(fn);
  st_registry_free(reg);
}

/* The built-in modules register only the harness's own code: nothing
 * foreign (run/supervise.c then skips its per-case checks); a module
 * added by a caller, or a function registered outside a built-in init,
 * counts, and the count only grows. */
static st_status foreign_init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "fx", "fx_op", "cpu", impl_a, err);
}

static void st__registry_foreign__counts_what_is_not_built_in(void **state) {
  static const char *const plats[] = {"fxp", NULL};
  static const st_module mod = {ST_ABI_VERSION, sizeof(st_module), "fx", plats,
                                foreign_init};
  st_registry *reg = NULL;
  st_error err;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_registry_new_builtin(&reg), ST_OK);
  assert_int_equal(st__registry_foreign(reg), 0);
  assert_int_equal(st_registry_add_module(reg, &mod, &err), ST_OK);
  /* The module and the function its init registered. */
  assert_int_equal(st__registry_foreign(reg), 2);
  assert_int_equal(
      st_registry_register(reg, "api", "api_op", "cpu", impl_b, &err), ST_OK);
  assert_int_equal(st__registry_foreign(reg), 3);
  /* The same registration again adds nothing. */
  assert_int_equal(
      st_registry_register(reg, "api", "api_op", "cpu", impl_b, &err), ST_OK);
  assert_int_equal(st__registry_foreign(reg), 3);
  st_registry_free(reg);
}

static st_status impl_c(st_op_call *c) {
  (void)c;
  return ST_OK;
}

/* A family registration ("PREFIX*") covers every op with the prefix on its
 * backend; the op's own registration wins over it, and the longest
 * covering prefix over a shorter one. */
static void st_registry_lookup__family_registration(void **state) {
  st_registry *reg = fresh();
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(
      st_registry_register(reg, "m", "aten::*", "torch", impl_a, &err), ST_OK);
  assert_int_equal(
      st_registry_register(reg, "m", "aten::gel*", "torch", impl_b, &err),
      ST_OK);
  assert_int_equal(
      st_registry_register(reg, "m", "aten::gelu", "torch", impl_c, &err),
      ST_OK);
  assert_int_equal(st_registry_lookup(reg, "aten::addmm", "torch",
                                      ST_LOOKUP_GOLDEN, &fn, &err),
                   ST_OK);
  assert_ptr_equal(fn, impl_a);
  assert_int_equal(st_registry_lookup(reg, "aten::gelu_backward", "torch",
                                      ST_LOOKUP_GOLDEN, &fn, &err),
                   ST_OK);
  assert_ptr_equal(fn, impl_b);
  assert_int_equal(st_registry_lookup(reg, "aten::gelu", "torch",
                                      ST_LOOKUP_GOLDEN, &fn, &err),
                   ST_OK);
  assert_ptr_equal(fn, impl_c);
  /* Same function again: a no-op; another: a conflict. */
  assert_int_equal(
      st_registry_register(reg, "m2", "aten::*", "torch", impl_a, &err), ST_OK);
  assert_int_equal(
      st_registry_register(reg, "m2", "aten::*", "torch", impl_b, &err),
      ST_ECONFLICT);
  /* Not another backend's, and not a name without the prefix. */
  st_error_clear(&err);
  assert_int_equal(st_registry_lookup(reg, "aten::addmm", "cpu",
                                      ST_LOOKUP_KERNEL, &fn, &err),
                   ST_EMISSING);
  assert_string_equal(err.message,
                      "BackendImplementationMissing: backend 'cpu' is "
                      "missing required implementation: kernel for op "
                      "'aten::addmm' (implemented by: torch); aten:: ops are "
                      "run by the torch plugin, on backend 'torch' "
                      "(--platform torch or --golden-platform torch; "
                      "docs/torch.md)");
  st_error_clear(&err);
  assert_int_equal(
      st_registry_lookup(reg, "aten", "torch", ST_LOOKUP_KERNEL, &fn, &err),
      ST_EMISSING);
  st_registry_free(reg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st_registry_register__same_function_is_noop),
      cmocka_unit_test(st_registry_register__different_function_conflicts),
      cmocka_unit_test(st_registry_add_module__abi_mismatch_names_both),
      cmocka_unit_test(st_registry_add_module__abi1_named),
      cmocka_unit_test(st_registry_add_module__size_and_name_checked),
      cmocka_unit_test(d8__invalid_descriptor_fields_refused),
      cmocka_unit_test(st_registry_add_module__hooks_read_within_size),
      cmocka_unit_test(st_registry_add_module__bad_hooks_refused),
      cmocka_unit_test(st_registry_lookup__missing_names_implementers),
      cmocka_unit_test(st_registry_lookup__repairs_partial_init),
      cmocka_unit_test(st_registry_lookup__failed_repair_is_retried),
      cmocka_unit_test(st_registry_lookup__repair_before_common),
      cmocka_unit_test(st_registry_lookup__loading_cycle_no_deadlock),
      cmocka_unit_test(st_registry_lookup__concurrent_lookups_wait_for_repair),
      cmocka_unit_test(st_registry_lookup__lazy_added_during_repair),
      cmocka_unit_test(st_registry_deferred__declared_then_loaded_once),
      cmocka_unit_test(st_registry_new_builtin__platforms),
      cmocka_unit_test(st__registry_foreign__counts_what_is_not_built_in),
      cmocka_unit_test(st_registry_lookup__family_registration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
