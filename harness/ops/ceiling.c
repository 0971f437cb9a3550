/* SPDX-License-Identifier: MIT */
/* The host's ceilings (ceiling.h): memcpy and a STREAM triad for memory
 * bandwidth, a vector FMA loop per dtype class, on one thread (`cpu`) or
 * on as many threads as cores (`threads`), best of several repetitions. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/llc.h"
#include "ops/ceiling.h"

#define REPS 3
#define LANES 8 /* independent accumulators: the FMA latency hidden */

/* 16-byte vectors: what the default build's SSE2 code has. */
typedef double vf64 __attribute__((vector_size(16)));
typedef float vf32 __attribute__((vector_size(16)));
/* Unsigned: the integer loop wraps by design (signed overflow would be
 * undefined). */
typedef unsigned vu32 __attribute__((vector_size(16)));

st__dclass st__dclass_of(st_dtype d) {
  switch (d) {
  case ST_DTYPE_FLOAT64:
    return ST__DCLASS_FLOAT64;
  case ST_DTYPE_FLOAT32:
    return ST__DCLASS_FLOAT32;
  case ST_DTYPE_FLOAT16:
  case ST_DTYPE_BFLOAT16:
    return ST__DCLASS_HALF;
  case ST_DTYPE_FLOAT8_E4M3FN:
  case ST_DTYPE_FLOAT8_E5M2:
    return ST__DCLASS_FLOAT8;
  default:
    return ST__DCLASS_INT;
  }
}

const char *st__dclass_name(st__dclass c) {
  static const char *const names[] = {"float64", "float32", "half", "float8",
                                      "int"};
  return (unsigned)c < ST__DCLASS_COUNT ? names[c] : "?";
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct job {
  int kind; /* 0 memcpy, 1 triad, 2 + dclass: FMA */
  double *a, *b, *c;
  size_t n;    /* doubles per buffer (this thread's slice) */
  long iters;  /* FMA */
  double sink; /* keeps the FMA results alive */
} job;

/* Eight independent vector accumulators, written out so that they stay
 * in registers: acc = acc * m + x, 2 FLOPs a lane. */
#define FMA_LOOP(T, init_m, init_x)                                            \
  T m = init_m, x = init_x, a0 = x, a1 = x + x, a2 = a1 + x, a3 = a2 + x,      \
    a4 = a3 + x, a5 = a4 + x, a6 = a5 + x, a7 = a6 + x;                        \
  for (long i = 0; i < iters; i++) {                                           \
    a0 = a0 * m + x;                                                           \
    a1 = a1 * m + x;                                                           \
    a2 = a2 * m + x;                                                           \
    a3 = a3 * m + x;                                                           \
    a4 = a4 * m + x;                                                           \
    a5 = a5 * m + x;                                                           \
    a6 = a6 * m + x;                                                           \
    a7 = a7 * m + x;                                                           \
  }                                                                            \
  a0 = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7

static double fma_f64(long iters) {
  FMA_LOOP(vf64, ((vf64){0.999, 0.999}), ((vf64){1e-3, 1e-3}));
  return a0[0] + a0[1];
}

static double fma_f32(long iters) {
  FMA_LOOP(vf32, ((vf32){0.999f, 0.999f, 0.999f, 0.999f}),
           ((vf32){1e-3f, 1e-3f, 1e-3f, 1e-3f}));
  return (double)(a0[0] + a0[3]);
}

static double fma_i32(long iters) {
  FMA_LOOP(vu32, ((vu32){3, 3, 3, 3}), ((vu32){1, 2, 3, 4}));
  return (double)(a0[0] & 1);
}

static void *run_job(void *arg) {
  job *j = arg;
  size_t i;
  switch (j->kind) {
  case 0:
    memcpy(j->a, j->b, j->n * sizeof(double));
    break;
  case 1:
    for (i = 0; i < j->n; i++)
      j->a[i] = j->b[i] + 3.0 * j->c[i];
    break;
  case 2 + ST__DCLASS_FLOAT64:
    j->sink = fma_f64(j->iters);
    break;
  case 2 + ST__DCLASS_INT:
    j->sink = fma_i32(j->iters);
    break;
  default:
    j->sink = fma_f32(j->iters);
    break;
  }
  return NULL;
}

/* The best rate over REPS of the kind on nt threads: per_unit FLOPs or
 * bytes each of n units (per thread for FMA, in all for memory). */
static double best_rate(int kind, unsigned nt, double *a, double *b, double *c,
                        size_t n, long iters, double work) {
  job jobs[64];
  pthread_t tid[64];
  int started[64];
  double best = 0;
  int rep;
  unsigned t;
  if (nt > 64)
    nt = 64;
  for (rep = 0; rep < REPS; rep++) {
    double t0, dt;
    for (t = 0; t < nt; t++) {
      size_t lo = n * t / nt, hi = n * (t + 1) / nt;
      memset(&jobs[t], 0, sizeof jobs[t]);
      jobs[t].kind = kind;
      if (a != NULL) {
        jobs[t].a = a + lo;
        jobs[t].b = b + lo;
        jobs[t].c = c + lo;
      }
      jobs[t].n = hi - lo;
      jobs[t].iters = iters;
    }
    t0 = now_s();
    for (t = 1; t < nt; t++)
      started[t] = pthread_create(&tid[t], NULL, run_job, &jobs[t]) == 0;
    run_job(&jobs[0]);
    for (t = 1; t < nt; t++)
      if (started[t])
        pthread_join(tid[t], NULL);
      else
        run_job(&jobs[t]); /* no thread: its share on this one */
    dt = now_s() - t0;
    if (dt > 0 && work / dt > best)
      best = work / dt;
  }
  return best;
}

static size_t buffer_bytes(void) {
  const char *v = getenv("SCENETEST_BENCH_CEILING_BYTES");
  uint64_t llc = st__llc_bytes(), size;
  if (v != NULL && v[0] != '\0') {
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end == '\0' && n >= 4096 && n <= (1ull << 30))
      return (size_t)n;
  }
  size = llc != 0 ? 4 * llc : (uint64_t)256 << 20;
  return (size_t)(size > (1ull << 30) ? 1ull << 30 : size);
}

static void host_ceilings(unsigned nt, st__ceilings *out) {
  size_t bytes = buffer_bytes(), n = bytes / sizeof(double), i;
  double *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  const long iters = 1 << 20;
  if (a != NULL && b != NULL && c != NULL) {
    double cp, tr;
    for (i = 0; i < n; i++) {
      a[i] = 0;
      b[i] = (double)i;
      c[i] = 1.0;
    }
    cp = best_rate(0, nt, a, b, c, n, 0, 2.0 * (double)bytes);
    tr = best_rate(1, nt, a, b, c, n, 0, 3.0 * (double)bytes);
    out->bytes_per_s = cp > tr ? cp : tr;
  }
  free(a);
  free(b);
  free(c);
  /* Per thread: iters x LANES vectors x lanes x 2 FLOPs. */
  out->flops_per_s[ST__DCLASS_FLOAT64] =
      best_rate(2 + ST__DCLASS_FLOAT64, nt, NULL, NULL, NULL, 0, iters,
                (double)nt * iters * LANES * 2 * 2);
  out->flops_per_s[ST__DCLASS_FLOAT32] =
      best_rate(2 + ST__DCLASS_FLOAT32, nt, NULL, NULL, NULL, 0, iters,
                (double)nt * iters * LANES * 4 * 2);
  /* The host computes half and float8 through float32. */
  out->flops_per_s[ST__DCLASS_HALF] = out->flops_per_s[ST__DCLASS_FLOAT32];
  out->flops_per_s[ST__DCLASS_FLOAT8] = out->flops_per_s[ST__DCLASS_FLOAT32];
  out->flops_per_s[ST__DCLASS_INT] =
      best_rate(2 + ST__DCLASS_INT, nt, NULL, NULL, NULL, 0, iters,
                (double)nt * iters * LANES * 4 * 2);
}

void st__ceilings_measure(st_registry *reg, const char *platform,
                          st__ceilings *out) {
  const st_platform_hooks *h = st_registry_platform_hooks(reg, platform);
  memset(out, 0, sizeof *out);
  if (h != NULL && h->ceilings != NULL) {
    st_platform_ceilings pc;
    int k;
    memset(&pc, 0, sizeof pc);
    if (h->ceilings(&pc) == ST_OK) {
      out->bytes_per_s = pc.bytes_per_s > 0 ? pc.bytes_per_s : 0;
      for (k = 0; k < ST__DCLASS_COUNT; k++)
        out->flops_per_s[k] = pc.flops_per_s[k] > 0 ? pc.flops_per_s[k] : 0;
    }
  } else if (strcmp(platform, "cpu") == 0) {
    host_ceilings(1, out);
  } else if (strcmp(platform, "threads") == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    host_ceilings(n > 0 ? (unsigned)n : 1, out);
  }
}
