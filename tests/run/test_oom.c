/* SPDX-License-Identifier: MIT */
/* Allocation-failure injection, as SQLite tests its malloc failures: this
 * program interposes malloc and its relatives (the library, libyaml and
 * libc all allocate through them), makes the Nth allocation made while
 * "armed" fail, for N = 1, 2, ... until an operation completes without
 * meeting a failure, and checks every time that the operation either
 * succeeded with the right result or failed cleanly (ST_ENOMEM, or a case
 * error saying "out of memory"), and that nothing leaked: the interposer
 * keeps the set of live blocks, so no sanitizer is needed (and none may
 * run: sanitizers replace malloc themselves, so meson builds this test only
 * without them). Each scenario runs twice: with one failure (the allocator
 * recovers at once, which finds wrong successes) and with every allocation
 * failing from the Nth on (which finds cleanup code that allocates). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#include "base/buf.h"
#include "base/loadwatch.h"
#include "ops/registry_internal.h"

/* ------------------------------------------------------------------ */
/* The interposer                                                      */

/* glibc's own allocator, under the names it exports for exactly this. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t size);

/* Live blocks: open addressing with linear probing and backward-shift
 * deletion, in static storage (it must not allocate). Only the pages in
 * use are ever touched. */
#define SET_BITS 21
#define SET_SLOTS ((size_t)1 << SET_BITS)

static pthread_mutex_t oom_lock = PTHREAD_MUTEX_INITIALIZER;
static void *set_slots[SET_SLOTS]; /* guarded by: oom_lock */
static size_t set_live;            /* guarded by: oom_lock */
static int oom_armed;              /* guarded by: oom_lock */
static int oom_persistent;         /* guarded by: oom_lock */
static long oom_countdown;         /* guarded by: oom_lock */
static long oom_failures;          /* guarded by: oom_lock */

static size_t slot_of(const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p;
  h ^= h >> 29;
  h *= UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(h >> (64 - SET_BITS));
}

/* Requires oom_lock. */
static void set_insert(void *p) {
  size_t i = slot_of(p);
  while (set_slots[i] != NULL) {
    /* A block freed behind our back (inside libc) whose address came
     * back: it is one block, not two. */
    if (set_slots[i] == p)
      return;
    i = (i + 1) & (SET_SLOTS - 1);
  }
  if (set_live + 1 >= SET_SLOTS / 2)
    abort();
  set_slots[i] = p;
  set_live++;
}

/* Requires oom_lock. */
static void set_remove(const void *p) {
  size_t i = slot_of(p), j;
  while (set_slots[i] != p) {
    if (set_slots[i] == NULL)
      return; /* allocated before we looked, or by ld.so */
    i = (i + 1) & (SET_SLOTS - 1);
  }
  /* Backward shift: pull later members of the probe run into the hole
   * when their home slot is not between the hole and them. */
  for (j = i;;) {
    size_t k;
    j = (j + 1) & (SET_SLOTS - 1);
    if (set_slots[j] == NULL)
      break;
    k = slot_of(set_slots[j]);
    if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
      set_slots[i] = set_slots[j];
      i = j;
    }
  }
  set_slots[i] = NULL;
  set_live--;
}

/* 1 if this allocation is to fail. */
static int oom_should_fail(void) {
  int fail = 0;
  pthread_mutex_lock(&oom_lock);
  if (oom_armed) {
    if (oom_countdown > 0 && --oom_countdown == 0)
      fail = 1;
    else if (oom_countdown == 0 && oom_persistent && oom_failures > 0)
      fail = 1;
    if (fail)
      oom_failures++;
  }
  pthread_mutex_unlock(&oom_lock);
  return fail;
}

static void *oom_track(void *p) {
  if (p != NULL) {
    pthread_mutex_lock(&oom_lock);
    set_insert(p);
    pthread_mutex_unlock(&oom_lock);
  }
  return p;
}

static void oom_untrack(const void *p) {
  if (p != NULL) {
    pthread_mutex_lock(&oom_lock);
    set_remove(p);
    pthread_mutex_unlock(&oom_lock);
  }
}

void *malloc(size_t size) {
  if (oom_should_fail()) {
    errno = ENOMEM;
    return NULL;
  }
  return oom_track(__libc_malloc(size));
}

void *calloc(size_t n, size_t size) {
  if (oom_should_fail()) {
    errno = ENOMEM;
    return NULL;
  }
  return oom_track(__libc_calloc(n, size));
}

void *realloc(void *p, size_t size) {
  void *q;
  if (p != NULL && size == 0) {
    /* glibc frees the block and returns NULL. */
    oom_untrack(p);
    return __libc_realloc(p, 0);
  }
  if (oom_should_fail()) {
    errno = ENOMEM;
    return NULL;
  }
  q = __libc_realloc(p, size);
  if (q != NULL) {
    oom_untrack(p);
    oom_track(q);
  }
  return q;
}

void *reallocarray(void *p, size_t n, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return NULL;
  }
  return realloc(p, bytes);
}

void free(void *p) {
  oom_untrack(p);
  __libc_free(p);
}

void *memalign(size_t align, size_t size) {
  if (oom_should_fail()) {
    errno = ENOMEM;
    return NULL;
  }
  return oom_track(__libc_memalign(align, size));
}

void *aligned_alloc(size_t align, size_t size) { return memalign(align, size); }

int posix_memalign(void **out, size_t align, size_t size) {
  void *p;
  if (align < sizeof(void *) || (align & (align - 1)) != 0)
    return EINVAL;
  p = memalign(align, size);
  if (p == NULL)
    return ENOMEM;
  *out = p;
  return 0;
}

char *strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p != NULL)
    memcpy(p, s, n);
  return p;
}

char *strndup(const char *s, size_t max) {
  size_t n = strnlen(s, max);
  char *p = malloc(n + 1);
  if (p != NULL) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

/* Makes the nth allocation from now fail (and, persistent, every one
 * after it). */
static void oom_arm(long nth, int persistent) {
  pthread_mutex_lock(&oom_lock);
  oom_countdown = nth;
  oom_persistent = persistent;
  oom_failures = 0;
  oom_armed = 1;
  pthread_mutex_unlock(&oom_lock);
}

/* Returns how many allocations failed since oom_arm. */
static long oom_disarm(void) {
  long n;
  pthread_mutex_lock(&oom_lock);
  oom_armed = 0;
  n = oom_failures;
  pthread_mutex_unlock(&oom_lock);
  return n;
}

static size_t oom_live(void) {
  size_t n;
  pthread_mutex_lock(&oom_lock);
  n = set_live;
  pthread_mutex_unlock(&oom_lock);
  return n;
}

/* ------------------------------------------------------------------ */
/* The driver                                                          */

/* What an operation run under injection came to. It must not use cmocka's
 * asserts while armed (their failure path allocates): it says why in
 * why[]. */
typedef enum outcome {
  OUT_OK = 0,    /* succeeded, and the result is the right one */
  OUT_NOMEM = 1, /* failed cleanly, saying out of memory */
  OUT_WRONG = 2  /* anything else: a wrong result or a wrong error */
} outcome;

typedef outcome (*oom_op)(void *ctx, char *why, size_t size);

/* Far more than any scenario here allocates: a loop that gets there is a
 * loop that does not end. */
#define MAX_STEPS 20000

static void oom_loop(const char *what, oom_op op, void *ctx) {
  int persistent;
  char why[1024];
  for (persistent = 0; persistent <= 1; persistent++) {
    long nth;
    for (nth = 1;; nth++) {
      size_t before = oom_live(), after;
      long failed;
      outcome o;
      why[0] = '\0';
      oom_arm(nth, persistent);
      o = op(ctx, why, sizeof why);
      failed = oom_disarm();
      after = oom_live();
      if (after != before)
        fail_msg("%s: allocation %ld failing%s: %zu blocks leaked (%s)", what,
                 nth, persistent ? " (and every later one)" : "",
                 after - before, why);
      if (o == OUT_WRONG)
        fail_msg("%s: allocation %ld failing%s: %s", what, nth,
                 persistent ? " (and every later one)" : "", why);
      if (failed == 0) {
        /* Every allocation of the operation has been failed once. */
        if (o != OUT_OK)
          fail_msg("%s: failed with no allocation failing: %s", what, why);
        break;
      }
      if (nth >= MAX_STEPS)
        fail_msg("%s: still allocating after %ld steps", what, nth);
    }
    if (nth < 2)
      fail_msg("%s: the operation made no allocation: the interposer is not "
               "in the path",
               what);
    if (getenv("ST_OOM_VERBOSE") != NULL)
      fprintf(stderr, "%s: %ld allocations failed in turn%s\n", what, nth - 1,
              persistent ? " (persistently)" : "");
  }
}

/* Writes why a step went wrong. A function of its own rather than
 * snprintf: the reason may be cut short (the messages it quotes are up to
 * 1 KiB), and gcc's -Wformat-truncation at -O3 flags every snprintf whose
 * output can be cut, which here is the intended behaviour. */
static void say(char *why, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, size, fmt, ap);
  va_end(ap);
}

static int contains(const char *s, const char *needle) {
  return s != NULL && strstr(s, needle) != NULL;
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  char *buf;
  long n;
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  n = ftell(f);
  assert_true(n >= 0);
  assert_int_equal(fseek(f, 0, SEEK_SET), 0);
  buf = malloc((size_t)n + 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* ------------------------------------------------------------------ */
/* The interposer itself                                               */

/* Called through volatile pointers: the compiler knows what malloc means
 * and may drop an allocation whose result is only tested. */
static void *(*volatile p_malloc)(size_t) = malloc;
static void *(*volatile p_calloc)(size_t, size_t) = calloc;
static void *(*volatile p_realloc)(void *, size_t) = realloc;
static char *(*volatile p_strdup)(const char *) = strdup;
static void (*volatile p_free)(void *) = free;

static void oom_interposer__fails_nth_and_counts_live(void **state) {
  size_t before = oom_live();
  void *a, *b, *c;
  (void)state;
  a = p_malloc(32);
  assert_non_null(a);
  assert_int_equal(oom_live(), before + 1);
  oom_arm(2, 0);
  b = p_malloc(32);
  c = p_malloc(32);
  assert_int_equal(oom_disarm(), 1);
  assert_non_null(b);
  assert_null(c);
  b = p_realloc(b, 4096);
  assert_non_null(b);
  assert_int_equal(oom_live(), before + 2);
  oom_arm(1, 1);
  c = p_strdup("x");
  assert_null(c);
  assert_null(p_calloc(1, 8));
  assert_int_equal(oom_disarm(), 2);
  p_free(a);
  p_free(b);
  assert_int_equal(oom_live(), before);
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */

typedef struct load_ctx {
  const char *name;
  const char *text;
  st_status want;       /* ST_OK or ST_ELOAD */
  size_t n_scenes;      /* on success */
  st_error_list errors; /* the reference run's errors */
  int from_path;        /* load the file `name` (text unused) */
} load_ctx;

/* The load the context asks for: of the text, or of the file. */
static st_status load_ctx_run(const load_ctx *c, st_scene_set *set,
                              st_error_list *errors) {
  if (c->from_path)
    return st_scene_set_load_path(set, c->name, NULL, errors);
  return st_scene_set_load_string(set, c->name, c->text, strlen(c->text), NULL,
                                  errors);
}

/* Loads ctx->text into a fresh set: the same scenes, or the same errors,
 * as the reference run, or ST_ENOMEM with nothing added. */
static outcome load_op(void *data, char *why, size_t size) {
  load_ctx *c = data;
  st_scene_set *set = NULL;
  st_error_list errors;
  st_status rc;
  outcome o = OUT_OK;
  size_t i;

  st_error_list_init(&errors);
  if (st_scene_set_new(&set) != ST_OK)
    return OUT_NOMEM;
  rc = load_ctx_run(c, set, &errors);
  if (rc == ST_ENOMEM) {
    o = OUT_NOMEM;
    if (st_scene_set_count(set) != 0) {
      say(why, size, "ST_ENOMEM, yet %zu scenes were added",
          st_scene_set_count(set));
      o = OUT_WRONG;
    }
  } else if (rc != c->want) {
    say(why, size, "returned %s, expected %s", st_status_name(rc),
        st_status_name(c->want));
    o = OUT_WRONG;
  } else if (rc == ST_OK && st_scene_set_count(set) != c->n_scenes) {
    say(why, size, "%zu scenes loaded, expected %zu", st_scene_set_count(set),
        c->n_scenes);
    o = OUT_WRONG;
  } else if (errors.count != c->errors.count) {
    say(why, size, "%zu errors, expected %zu (first: %s)", errors.count,
        c->errors.count, errors.count ? errors.items[0].message : "-");
    o = OUT_WRONG;
  } else {
    for (i = 0; i < errors.count && o == OUT_OK; i++)
      if (errors.items[i].line != c->errors.items[i].line ||
          errors.items[i].column != c->errors.items[i].column ||
          strcmp(errors.items[i].message, c->errors.items[i].message) != 0) {
        say(why, size, "error %zu is %d:%d: %s, expected %d:%d: %s", i,
            errors.items[i].line, errors.items[i].column,
            errors.items[i].message, c->errors.items[i].line,
            c->errors.items[i].column, c->errors.items[i].message);
        o = OUT_WRONG;
      }
    for (i = 0; i < st_scene_set_count(set) && o == OUT_OK; i++) {
      const st_scene *s = st_scene_set_get(set, i);
      if (st_scene_case_count(s) == 0 || st_scene_name(s) == NULL ||
          st_scene_kernel(s) == NULL || st_scene_golden(s) == NULL) {
        say(why, size, "scene %zu is incomplete", i);
        o = OUT_WRONG;
      }
    }
  }
  st_error_list_free(&errors);
  st_scene_set_free(set);
  return o;
}

/* Runs the reference load, then the loop. */
static void load_check(const char *what, load_ctx *c) {
  st_scene_set *set = NULL;
  st_status rc;
  st_error_list_init(&c->errors);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  rc = load_ctx_run(c, set, &c->errors);
  assert_int_equal(rc, c->want);
  if (rc == ST_OK)
    assert_int_equal(st_scene_set_count(set), c->n_scenes);
  else
    assert_true(c->errors.count >= 3);
  st_scene_set_free(set);
  oom_loop(what, load_op, c);
  st_error_list_free(&c->errors);
}

static void st_scene_set_load_string__oom_rich_scene(void **state) {
  char *multi = read_text(ST_SOURCE_ROOT "/tests/scenes/good/multi.yaml");
  char *anchors = read_text(ST_SOURCE_ROOT "/tests/scenes/good/anchors.yml");
  size_t n = strlen(multi) + strlen(anchors) + 8;
  char *text = malloc(n);
  load_ctx c;
  (void)state;
  assert_non_null(text);
  /* Three documents: every init form, params (dtype by param too), level
   * 3, a `file:` init (relative to the name's directory), aliases. */
  strcpy(text, multi);
  strcat(text, "\n---\n");
  strcat(text, anchors);
  memset(&c, 0, sizeof c);
  c.name = ST_SOURCE_ROOT "/tests/scenes/good/multi.yaml";
  c.text = text;
  c.want = ST_OK;
  c.n_scenes = 3;
  load_check("load of a rich scene", &c);
  free(text);
  free(anchors);
  free(multi);
}

/* The same through the file: reading it (a growing buffer) fails too. */
static void st_scene_set_load_path__oom_file(void **state) {
  load_ctx c;
  (void)state;
  memset(&c, 0, sizeof c);
  c.name = ST_SOURCE_ROOT "/tests/scenes/good/multi.yaml";
  c.from_path = 1;
  c.want = ST_OK;
  c.n_scenes = 2;
  load_check("load of a scene file", &c);
}

static void st_scene_set_load_string__oom_bad_scene(void **state) {
  static const char text[] =
      "scene: s\n"
      "kernel: add\n"
      "args:\n"
      "  - {tensor: a, dtype: float32, shape: [4]}\n"
      "  - {tensor: a, dtype: float32, shape: [4], role: output}\n"
      "  - {scalar: s, dtype: float32, value: 1}\n"
      "  - {tensor: b, dtype: uint8, shape: [4], init: {fill: 300}}\n"
      "  - {tensor: c, dtype: float32, shape: [-1], colour: red}\n"
      "cases:\n"
      "  - name: c\n"
      "---\n"
      "scene: t\n"
      "kernel: add\n"
      "kernel: sub\n"
      "args:\n"
      "  - {tensor: a, dtype: T, shape: [N], init: {fill: 300}}\n"
      "  - {tensor: o, dtype: T, shape: [N], init: *nowhere, role: output}\n"
      "cases:\n"
      "  - {name: ok, params: {N: 4, T: int32}}\n"
      "  - {name: narrow, params: {N: 4, T: uint8}}\n"
      "  - {name: also_narrow, params: {N: 8, T: int8}, rounds: x}\n"
      "---\n"
      "scene: s\n"
      "kernel: copy\n"
      "args: [{tensor: x, dtype: float32, shape: [2], init: {values: [1]}}]\n"
      "cases: [{name: a}, {name: a}]\n";
  load_ctx c;
  (void)state;
  memset(&c, 0, sizeof c);
  c.name = ST_SOURCE_ROOT "/tests/scenes/bad/oom.yaml";
  c.text = text;
  c.want = ST_ELOAD;
  load_check("load of a bad scene", &c);
}

/* ------------------------------------------------------------------ */
/* Running                                                             */

static const char run_text[] =
    "scene: oom_add\n"
    "kernel: add\n"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}\n"
    "  - {tensor: b, dtype: float32, shape: [N], init: {range: {start: 1, "
    "step: 2}}}\n"
    "  - {tensor: out, dtype: float32, shape: [N], role: output}\n"
    "cases:\n"
    "  - {name: two_rounds, params: {N: 300}, rounds: 2}\n"
    "---\n"
    "scene: oom_axpy\n"
    "kernel: axpy\n"
    "args:\n"
    "  - {tensor: x, dtype: float64, shape: [N], init: {normal: [0, 1]}}\n"
    "  - {tensor: y, dtype: float64, shape: [N], init: ones, role: inout}\n"
    "  - {scalar: alpha, dtype: float64, value: A}\n"
    "cases:\n"
    "  - {name: one, params: {N: 257, A: 0.5}}\n"
    "---\n"
    "scene: oom_matmul\n"
    "kernel: matmul\n"
    "rtol: 1.0e-4\n"
    "atol: 1.0e-4\n"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [M, K], init: {uniform: [-1, 1]}}\n"
    "  - {tensor: b, dtype: float32, shape: [K, N], init: {fill: 0.25}}\n"
    "  - {tensor: c, dtype: float32, shape: [M, N], role: output}\n"
    "cases:\n"
    "  - {name: small, params: {M: 9, K: 17, N: 5}}\n"
    "---\n"
    "scene: oom_softmax\n"
    "kernel: softmax\n"
    "args:\n"
    "  - {tensor: x, dtype: float32, shape: [R, C], init: {normal: [0, 3]}}\n"
    "  - {tensor: y, dtype: float32, shape: [R, C], role: output, rtol: "
    "1.0e-5, atol: 1.0e-6}\n"
    "cases:\n"
    "  - {name: rows, params: {R: 32, C: 4096}}\n"
    "---\n"
    "scene: oom_reduce\n"
    "kernel: reduce_sum\n"
    "atol: 1.0e-3\n"
    "args:\n"
    "  - {tensor: x, dtype: float32, shape: [N], init: {randint: [-9, 9]}}\n"
    "  - {tensor: s, dtype: float32, shape: [1], role: output}\n"
    "cases:\n"
    "  - {name: one, params: {N: 5000}}\n"
    "---\n"
    "scene: oom_int\n"
    "kernel: mul\n"
    "args:\n"
    "  - {tensor: a, dtype: int32, shape: [4], init: {values: [1, -2, 3, "
    "-4]}}\n"
    "  - {tensor: b, dtype: int32, shape: [4], init: {fill: 7}}\n"
    "  - {tensor: out, dtype: int32, shape: [4], role: output}\n"
    "cases:\n"
    "  - {name: small}\n";

typedef struct run_ctx {
  const st_scene *scene;
  st_run_options opts;
  size_t n_events;       /* the reference run's */
  const char *names[64]; /* the reference run's event names */
} run_ctx;

static outcome run_op(void *data, char *why, size_t size) {
  run_ctx *c = data;
  st_case_result *res = NULL;
  st_error err;
  st_status rc;
  outcome o = OUT_OK;
  size_t i;

  st_error_clear(&err);
  rc = st_run_case(c->scene, 0, &c->opts, &res, &err);
  if (rc == ST_ENOMEM) {
    o = OUT_NOMEM;
    if (res != NULL || err.code != ST_ENOMEM) {
      say(why, size, "ST_ENOMEM with a result, or err %s: %s",
          st_status_name(err.code), err.message);
      o = OUT_WRONG;
    }
  } else if (rc != ST_OK || res == NULL) {
    say(why, size, "st_run_case returned %s: %s", st_status_name(rc),
        err.message);
    o = OUT_WRONG;
  } else if (st_case_result_status(res) == ST_CASE_ERROR &&
             contains(st_case_result_message(res), "out of memory")) {
    o = OUT_NOMEM;
  } else if (st_case_result_status(res) != ST_CASE_PASS) {
    say(why, size, "case %s: %s",
        st_case_status_name(st_case_result_status(res)),
        st_case_result_message(res) ? st_case_result_message(res)
                                    : "(no message)");
    o = OUT_WRONG;
  } else if (st_case_result_event_count(res) != c->n_events) {
    say(why, size, "case passed with %zu events, expected %zu",
        st_case_result_event_count(res), c->n_events);
    o = OUT_WRONG;
  } else {
    for (i = 0; i < c->n_events && o == OUT_OK; i++)
      if (strcmp(st_case_result_event(res, i)->name, c->names[i]) != 0) {
        say(why, size, "event %zu is '%s', expected '%s'", i,
            st_case_result_event(res, i)->name, c->names[i]);
        o = OUT_WRONG;
      }
  }
  st_case_result_free(res);
  return o;
}

static void run_all(const char *platform) {
  st_scene_set *set = NULL;
  st_error_list errors;
  size_t i, j;
  char what[256];

  st_log_set_level(ST_LOG_NULL);
  st_error_list_init(&errors);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(st_scene_set_load_string(set, "oom_run.yaml", run_text,
                                            strlen(run_text), NULL, &errors),
                   ST_OK);
  for (i = 0; i < st_scene_set_count(set); i++) {
    run_ctx c;
    st_case_result *res = NULL;
    st_error err;
    memset(&c, 0, sizeof c);
    c.scene = st_scene_set_get(set, i);
    st_run_options_init(&c.opts);
    c.opts.platform = platform;
    c.opts.golden_threads = 2;
    /* The warm-up: it creates the thread pool (pthread internals allocate
     * once per thread), emits the process's record and lets the loader
     * watch see what is loaded, none of which a later run repeats. */
    st_error_clear(&err);
    assert_int_equal(st_run_case(c.scene, 0, &c.opts, &res, &err), ST_OK);
    if (st_case_result_status(res) != ST_CASE_PASS)
      fail_msg("%s on %s: %s", st_scene_name(c.scene), platform,
               st_case_result_message(res));
    c.n_events = st_case_result_event_count(res);
    assert_true(c.n_events > 3 && c.n_events <= 64);
    for (j = 0; j < c.n_events; j++)
      c.names[j] = st_case_result_event(res, j)->name;
    snprintf(what, sizeof what, "st_run_case of %s on %s",
             st_scene_name(c.scene), platform);
    oom_loop(what, run_op, &c);
    st_case_result_free(res);
  }
  st_scene_set_free(set);
  st_error_list_free(&errors);
}

static void st_run_case__oom_cpu(void **state) {
  (void)state;
  run_all("cpu");
}

static void st_run_case__oom_threads(void **state) {
  (void)state;
  run_all("threads");
}

/* A whole run of every scene: selection, -j scheduling, results. Each
 * case passes, or is an error saying out of memory; or the run is
 * ST_ENOMEM. Never a case missing from the results, never a verdict that
 * memory made up. */
typedef struct runall_ctx {
  const st_scene_set *set;
  st_run_options opts;
  size_t n_cases;
} runall_ctx;

static outcome runall_op(void *data, char *why, size_t size) {
  runall_ctx *c = data;
  st_run_result *run = NULL;
  st_error err;
  st_status rc;
  outcome o = OUT_OK;
  size_t i;

  st_error_clear(&err);
  rc = st_run(c->set, &c->opts, NULL, 0, &run, &err);
  if (rc == ST_ENOMEM) {
    o = OUT_NOMEM;
    if (run != NULL || err.code != ST_ENOMEM) {
      say(why, size, "ST_ENOMEM with a result, or err %s: %s",
          st_status_name(err.code), err.message);
      o = OUT_WRONG;
    }
  } else if (rc != ST_OK || run == NULL) {
    say(why, size, "st_run returned %s: %s", st_status_name(rc), err.message);
    o = OUT_WRONG;
  } else if (st_run_result_count(run) != c->n_cases) {
    say(why, size, "%zu results for %zu cases", st_run_result_count(run),
        c->n_cases);
    o = OUT_WRONG;
  } else {
    for (i = 0; i < c->n_cases && o != OUT_WRONG; i++) {
      const st_case_result *r = st_run_result_get(run, i);
      if (r == NULL) {
        say(why, size, "case %zu has no result", i);
        o = OUT_WRONG;
      } else if (st_case_result_status(r) == ST_CASE_ERROR &&
                 contains(st_case_result_message(r), "out of memory")) {
        o = OUT_NOMEM;
      } else if (st_case_result_status(r) != ST_CASE_PASS) {
        say(why, size, "case %s::%s: %s: %s", st_case_result_scene(r),
            st_case_result_case(r),
            st_case_status_name(st_case_result_status(r)),
            st_case_result_message(r) ? st_case_result_message(r)
                                      : "(no message)");
        o = OUT_WRONG;
      }
    }
    if (o == OUT_NOMEM && st_run_result_exit_code(run) != 1) {
      say(why, size, "a case ran out of memory, yet the exit code is 0");
      o = OUT_WRONG;
    }
  }
  st_run_result_free(run);
  return o;
}

static void runall(unsigned jobs) {
  st_scene_set *set = NULL;
  st_error_list errors;
  runall_ctx c;
  st_run_result *run = NULL;
  st_error err;
  char what[64];

  st_log_set_level(ST_LOG_NULL);
  st_error_list_init(&errors);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(st_scene_set_load_string(set, "oom_run.yaml", run_text,
                                            strlen(run_text), NULL, &errors),
                   ST_OK);
  memset(&c, 0, sizeof c);
  c.set = set;
  c.n_cases = st_scene_set_count(set);
  st_run_options_init(&c.opts);
  c.opts.platform = "threads";
  c.opts.jobs = jobs;
  c.opts.golden_threads = 2;
  st_error_clear(&err);
  assert_int_equal(st_run(set, &c.opts, NULL, 0, &run, &err), ST_OK);
  assert_int_equal(st_run_result_count(run), c.n_cases);
  assert_int_equal(st_run_result_count_status(run, ST_CASE_PASS), c.n_cases);
  st_run_result_free(run);
  snprintf(what, sizeof what, "st_run with -j %u", jobs);
  oom_loop(what, runall_op, &c);
  st_scene_set_free(set);
  st_error_list_free(&errors);
}

static void st_run__oom_one_job(void **state) {
  (void)state;
  runall(1);
}

static void st_run__oom_three_jobs(void **state) {
  (void)state;
  runall(3);
}

/* ------------------------------------------------------------------ */
/* The registry                                                        */

static int flaky_calls;

static st_status impl_flaky(st_op_call *c) {
  (void)c;
  return ST_OK;
}
static st_status impl_common(st_op_call *c) {
  (void)c;
  return ST_OK;
}
static st_status impl_mine(st_op_call *c) {
  (void)c;
  return ST_OK;
}

/* Fails its first init without registering anything; the repair's second
 * init registers its op. */
static st_status flaky_init(st_registry *reg, st_error *err) {
  if (flaky_calls++ == 0)
    return st_error_set(err, ST_EKERNEL, "flaky: not yet");
  return st_registry_register(reg, "flaky", "flaky_op", "flaky_plat",
                              impl_flaky, err);
}

static const char *const flaky_platforms[] = {"flaky_plat", NULL};
static const st_module flaky_module = {ST_ABI_VERSION, sizeof(st_module),
                                       "flaky", flaky_platforms, flaky_init};

typedef struct reg_ctx {
  char missing[ST_ERROR_MESSAGE_MAX]; /* the reference miss message */
} reg_ctx;

#define REG_STEP(call)                                                         \
  do {                                                                         \
    st_error_clear(&err);                                                      \
    rc = (call);                                                               \
    if (rc == ST_ENOMEM) {                                                     \
      o = OUT_NOMEM;                                                           \
      goto out;                                                                \
    }                                                                          \
  } while (0)

static outcome registry_op(void *data, char *why, size_t size) {
  reg_ctx *c = data;
  st_registry *reg = NULL;
  st_error err;
  st_status rc;
  st_op_fn fn = NULL;
  outcome o = OUT_OK;

  flaky_calls = 0;
  REG_STEP(st_registry_new_builtin(&reg));
  if (rc != ST_OK) {
    say(why, size, "st_registry_new_builtin: %s", st_status_name(rc));
    return OUT_WRONG;
  }
  REG_STEP(st_registry_register(reg, "mine", "flaky_op", ST_BACKEND_COMMON,
                                impl_common, &err));
  REG_STEP(st_registry_register(reg, "mine", "my_op", "cpu", impl_mine, &err));
  REG_STEP(st_registry_add_module(reg, &flaky_module, &err));
  if (rc != ST_EKERNEL || strcmp(err.message, "flaky: not yet") != 0) {
    say(why, size, "add_module: %s: %s", st_status_name(rc), err.message);
    o = OUT_WRONG;
    goto out;
  }
  REG_STEP(
      st_registry_lookup(reg, "my_op", "cpu", ST_LOOKUP_KERNEL, &fn, &err));
  if (rc != ST_OK || fn != impl_mine) {
    say(why, size, "lookup of my_op: %s: %s", st_status_name(rc), err.message);
    o = OUT_WRONG;
    goto out;
  }
  /* The miss repairs flaky_plat: its module's init runs again and
   * registers the op, which must win over the `common` one. */
  REG_STEP(st_registry_lookup(reg, "flaky_op", "flaky_plat", ST_LOOKUP_KERNEL,
                              &fn, &err));
  if (rc != ST_OK || fn != impl_flaky) {
    say(why, size, "lookup of flaky_op: %s, %s: %s", st_status_name(rc),
        fn == impl_common ? "the common fallback" : "not the plugin's",
        err.message);
    o = OUT_WRONG;
    goto out;
  }
  /* A miss names who does implement the op. */
  REG_STEP(
      st_registry_lookup(reg, "my_op", "threads", ST_LOOKUP_GOLDEN, &fn, &err));
  if (rc != ST_EMISSING || strcmp(err.message, c->missing) != 0) {
    say(why, size, "lookup of my_op on threads: %s: %s", st_status_name(rc),
        err.message);
    o = OUT_WRONG;
  }
out:
  if (o == OUT_NOMEM && err.code != ST_OK && err.code != ST_ENOMEM) {
    say(why, size, "ST_ENOMEM returned, error says %s: %s",
        st_status_name(err.code), err.message);
    o = OUT_WRONG;
  }
  st_registry_free(reg);
  return o;
}

static void st_registry_lookup__oom_with_repair(void **state) {
  reg_ctx c;
  st_registry *reg = NULL;
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  st_log_set_level(ST_LOG_NULL);
  assert_int_equal(st_registry_new_builtin(&reg), ST_OK);
  st_error_clear(&err);
  assert_int_equal(
      st_registry_register(reg, "mine", "my_op", "cpu", impl_mine, &err),
      ST_OK);
  assert_int_equal(
      st_registry_lookup(reg, "my_op", "threads", ST_LOOKUP_GOLDEN, &fn, &err),
      ST_EMISSING);
  assert_non_null(strstr(err.message, "(implemented by: cpu)"));
  snprintf(c.missing, sizeof c.missing, "%s", err.message);
  st_registry_free(reg);
  oom_loop("registry", registry_op, &c);
}

/* ------------------------------------------------------------------ */
/* --watch                                                             */

static outcome watch_op(void *data, char *why, size_t size) {
  st_watch *list = NULL;
  size_t count = 0;
  st_error err;
  st_status rc;
  const char *name = NULL;
  outcome o = OUT_OK;
  (void)data;

  st_error_clear(&err);
  rc = st_watch_parse("jax=libjax*.so,libxla.so.*,libtpu.so", &list, &count,
                      &err);
  if (rc == ST_OK) {
    st_error_clear(&err);
    rc = st_watch_parse("tf=libtensorflow*.so*", &list, &count, &err);
  }
  if (rc == ST_ENOMEM) {
    o = OUT_NOMEM;
    if (err.code != ST_ENOMEM) {
      say(why, size, "ST_ENOMEM, error says %s", err.message);
      o = OUT_WRONG;
    }
  } else if (rc != ST_OK || count != 2) {
    say(why, size, "%s with %zu modules: %s", st_status_name(rc), count,
        err.message);
    o = OUT_WRONG;
  } else if (!st_watch_match(list, count, "/opt/lib/libxla.so.3", &name) ||
             strcmp(name, "jax") != 0 ||
             !st_watch_match(list, count, "/x/libtensorflow_cc.so.2", &name) ||
             strcmp(name, "tf") != 0) {
    say(why, size, "the parsed globs do not match");
    o = OUT_WRONG;
  }
  st_watch_list_free(list, count);
  return o;
}

static void st_watch_parse__oom(void **state) {
  (void)state;
  oom_loop("st_watch_parse", watch_op, NULL);
}

/* ------------------------------------------------------------------ */
/* The growable buffer                                                 */

/* 64 additions of 1000 bytes: ST_ENOMEM leaves what was added before it
 * intact, and capped additions keep a prefix. */
static outcome buf_op(void *ctx, char *why, size_t size) {
  char chunk[1000];
  st__buf b;
  outcome o = OUT_OK;
  size_t k, i;
  (void)ctx;
  st__buf_init(&b, SIZE_MAX);
  for (k = 0; k < 64 && o == OUT_OK; k++) {
    size_t before = b.len;
    memset(chunk, (int)k, sizeof chunk);
    st_status rc = st__buf_add(&b, chunk, sizeof chunk);
    if (rc == ST_ENOMEM && b.len == before) {
      o = OUT_NOMEM;
    } else if (rc != ST_OK) {
      snprintf(why, size, "add %zu: %s, length %zu -> %zu", k,
               st_status_name(rc), before, b.len);
      o = OUT_WRONG;
    }
  }
  for (i = 0; i < b.len && o != OUT_WRONG; i++)
    if (b.data[i] != (char)(i / 1000)) {
      snprintf(why, size, "byte %zu changed", i);
      o = OUT_WRONG;
    }
  if (o == OUT_OK) {
    size_t kept = st__buf_add_capped(&b, chunk, sizeof chunk);
    if (kept != sizeof chunk && kept > b.cap) {
      snprintf(why, size, "capped add kept %zu", kept);
      o = OUT_WRONG;
    } else if (kept != sizeof chunk) {
      o = OUT_NOMEM;
    }
  }
  st__buf_free(&b);
  return o;
}

static void st__buf_add__oom_keeps_contents(void **state) {
  (void)state;
  oom_loop("st__buf_add", buf_op, NULL);
}

/* ------------------------------------------------------------------ */
/* The loader watch                                                    */

static void copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  char buf[8192];
  size_t n;
  assert_non_null(in);
  assert_non_null(out);
  while ((n = fread(buf, 1, sizeof buf, in)) > 0)
    assert_int_equal(fwrite(buf, 1, n, out), n);
  fclose(in);
  assert_int_equal(fclose(out), 0);
}

static int has_path(char **list, size_t n, const char *path) {
  size_t i;
  for (i = 0; i < n; i++)
    if (strcmp(list[i], path) == 0)
      return 1;
  return 0;
}

/* Two objects become loaded at once; a poll that runs out of memory must
 * leave both to the next poll (a load event lost would hide a stale
 * record). Each step loads fresh copies: an object is reported once per
 * process. The watch keeps what it has seen, so there is no leak count
 * here; the other scenarios cover the poll's own leaks. */
static void st__loadwatch_poll__oom_loses_no_object(void **state) {
  char dir[] = "/tmp/st_oom_XXXXXX";
  char **list = NULL;
  size_t n = 0;
  int persistent;
  (void)state;
  assert_non_null(mkdtemp(dir));
  assert_int_equal(st__loadwatch_poll(&list, &n), ST_OK);
  st__loadwatch_free(list, n);
  for (persistent = 0; persistent <= 1; persistent++) {
    long nth;
    for (nth = 1;; nth++) {
      char a[128], b[128];
      void *ha, *hb;
      long failed;
      st_status rc;
      snprintf(a, sizeof a, "%s/libw%d_%ld_a.so", dir, persistent, nth);
      snprintf(b, sizeof b, "%s/libw%d_%ld_b.so", dir, persistent, nth);
      copy_file(ST_FIXTURE_RUN, a);
      copy_file(ST_FIXTURE_RUN, b);
      ha = dlopen(a, RTLD_NOW | RTLD_LOCAL);
      hb = dlopen(b, RTLD_NOW | RTLD_LOCAL);
      assert_non_null(ha);
      assert_non_null(hb);
      oom_arm(nth, persistent);
      rc = st__loadwatch_poll(&list, &n);
      failed = oom_disarm();
      if (rc != ST_OK) {
        assert_int_equal(rc, ST_ENOMEM);
        assert_null(list);
        assert_int_equal(st__loadwatch_poll(&list, &n), ST_OK);
      }
      if (!has_path(list, n, a) || !has_path(list, n, b))
        fail_msg("allocation %ld failing%s: %s or %s was not reported", nth,
                 persistent ? " (and every later one)" : "", a, b);
      st__loadwatch_free(list, n);
      dlclose(hb);
      dlclose(ha);
      unlink(a);
      unlink(b);
      if (failed == 0)
        break;
      assert_true(nth < MAX_STEPS);
    }
    assert_true(nth > 2);
  }
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(oom_interposer__fails_nth_and_counts_live),
      cmocka_unit_test(st_scene_set_load_string__oom_rich_scene),
      cmocka_unit_test(st_scene_set_load_string__oom_bad_scene),
      cmocka_unit_test(st_scene_set_load_path__oom_file),
      cmocka_unit_test(st_run_case__oom_cpu),
      cmocka_unit_test(st_run_case__oom_threads),
      cmocka_unit_test(st_run__oom_one_job),
      cmocka_unit_test(st_run__oom_three_jobs),
      cmocka_unit_test(st_registry_lookup__oom_with_repair),
      cmocka_unit_test(st_watch_parse__oom),
      cmocka_unit_test(st__buf_add__oom_keeps_contents),
      cmocka_unit_test(st__loadwatch_poll__oom_loses_no_object),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
