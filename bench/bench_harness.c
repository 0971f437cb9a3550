/* SPDX-License-Identifier: MIT */
/* The harness benchmark: in one run, the machine's memcpy and memset
 * bandwidth as baselines, then the harness's hot loops (uniform float32
 * fill, float32 allclose compare) and scene loading against a raw libyaml
 * event parse of the same text, each with its ratio to its baseline. Every
 * figure is the best of several repetitions, on buffers whose pages were
 * touched before timing, so page faults and a cold first pass do not count.
 * Bandwidth is "bytes of one buffer / seconds" for every row, so the ratios
 * compare like with like (memcpy reads and writes that many bytes, fill only
 * writes them, compare reads two tensors of that size). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The benchmark includes <yaml.h> although only the loader should: the raw
 * event-parse loop is the baseline the loader is measured against, and it
 * must be libyaml itself, not something the harness wraps. */
#include <yaml.h>

#include <scenetest/scene.h>

#include "case/args.h"
#include "case/compare.h"
#include "ops/ops_impl.h"

#define BUF_BYTES ((size_t)64 << 20)
#define MEM_REPS 9
#define LOAD_REPS 5
#define SCENE_TEXT_BYTES ((size_t)5 << 20)

/* Keeps the compiler from dropping a store to a buffer nobody reads. */
static void clobber(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *alloc_touched(size_t bytes) {
  void *p = aligned_alloc(4096, bytes);
  if (p == NULL) {
    fprintf(stderr, "bench_harness: cannot allocate %zu bytes\n", bytes);
    exit(3);
  }
  /* Pre-fault every page with non-zero bytes, so no zero-page mapping is
   * shared and the first timed pass does not pay for faults. */
  memset(p, 0x5a, bytes);
  return p;
}

typedef struct bench_ctx {
  unsigned char *src;
  unsigned char *dst;
  st_tensor a, b;
  const char *text;
  size_t text_len;
  int failed;
} bench_ctx;

typedef void (*bench_fn)(bench_ctx *ctx);

static double best_of(bench_fn fn, bench_ctx *ctx, int reps) {
  double best = 1e300;
  int r;
  for (r = 0; r < reps; r++) {
    double t0 = now_s(), dt;
    fn(ctx);
    dt = now_s() - t0;
    if (dt < best)
      best = dt;
  }
  return best;
}

static void run_memcpy(bench_ctx *ctx) {
  memcpy(ctx->dst, ctx->src, BUF_BYTES);
  clobber(ctx->dst);
}

static void run_memset(bench_ctx *ctx) {
  memset(ctx->dst, 0x33, BUF_BYTES);
  clobber(ctx->dst);
}

static void run_fill(bench_ctx *ctx) {
  uint64_t key = st__rng_key("bench", "fill", "x", 0);
  st__fill_uniform_f32((float *)(void *)ctx->dst, BUF_BYTES / sizeof(float),
                       key, 0, -1.0, 1.0);
  clobber(ctx->dst);
}

static void run_compare(bench_ctx *ctx) {
  char msg[512];
  /* Equal tensors: every element is checked and none mismatches, which is
   * the common case the compare loop is built for. */
  st_status s =
      st__compare_close(&ctx->a, &ctx->b, 1.3e-6, 1e-5, msg, sizeof msg);
  if (s != ST_OK) {
    fprintf(stderr, "bench_harness: compare: %s: %s\n", st_status_name(s), msg);
    ctx->failed = 1;
  }
}

/* The ceiling of any compare: the two tensors' bytes read and XOR-ed
 * together, nothing else, split between two threads as compare splits a
 * large tensor. compare/read-two is how close compare comes to reading
 * memory as fast as this machine can; read-two/memcpy is the most any
 * compare could reach against the memcpy baseline. */
typedef struct read_half {
  const uint64_t *a, *b;
  size_t n;
  uint64_t r;
} read_half;

static uint64_t xor_reduce(const uint64_t *restrict a,
                           const uint64_t *restrict b, size_t n) {
  uint64_t r = 0;
  for (size_t i = 0; i < n; i++)
    r |= a[i] ^ b[i];
  return r;
}

static void *read_half_thread(void *arg) {
  read_half *h = arg;
  h->r = xor_reduce(h->a, h->b, h->n);
  return NULL;
}

static void run_read_two(bench_ctx *ctx) {
  const size_t n = BUF_BYTES / 8;
  const uint64_t *a = (const uint64_t *)(const void *)ctx->src;
  const uint64_t *b = (const uint64_t *)(const void *)ctx->dst;
  read_half hi = {a + n / 2, b + n / 2, n - n / 2, 0};
  pthread_t th;
  uint64_t r;
  if (pthread_create(&th, NULL, read_half_thread, &hi) != 0) {
    r = xor_reduce(a, b, n);
  } else {
    r = xor_reduce(a, b, n / 2);
    pthread_join(th, NULL);
    r |= hi.r;
  }
  if (r != 0)
    ctx->failed = 1; /* the two buffers are equal copies */
}

/* The reference backend's add (the golden of a float32 add) over 1M
 * elements: the issue-14 target is >= 0.5x memcpy's bandwidth. */
#define REF_N ((size_t)1 << 20)
static void run_ref_add(bench_ctx *ctx) {
  st_tensor t[3];
  st_op_call call;
  for (int i = 0; i < 3; i++) {
    memset(&t[i], 0, sizeof t[i]);
    t[i].dtype = ST_DTYPE_FLOAT32;
    t[i].ndim = 1;
    t[i].shape[0] = (int64_t)REF_N;
    t[i].numel = REF_N;
    t[i].nbytes = REF_N * sizeof(float);
  }
  t[0].data = ctx->src;
  t[1].data = ctx->src + REF_N * sizeof(float);
  t[2].data = ctx->dst;
  t[2].role = ST_ROLE_OUTPUT;
  st_op_call_init(&call);
  call.op = "add";
  call.backend = "reference";
  call.tensors = t;
  call.n_tensors = 3;
  call.shard_count = 1;
  call.max_threads = 1;
  st__ref_elementwise(ST__EW_ADD, &call, 0, REF_N);
  clobber(ctx->dst);
}

/* The reference matmul of two 256x256 float32 matrices, blocked and typed
 * (what the golden runs) against the generic accessor-per-element path it
 * replaced, and reduce_sum's block sums over 1M float32 / int32 elements
 * the same two ways: "after/before" ratios from one run. */
#define MM_N 256
#define SUM_N ((size_t)1 << 20)

static void mm_tensors(bench_ctx *ctx, st_tensor t[3], st_op_call *call) {
  for (int i = 0; i < 3; i++) {
    memset(&t[i], 0, sizeof t[i]);
    t[i].dtype = ST_DTYPE_FLOAT32;
    t[i].ndim = 2;
    t[i].shape[0] = MM_N;
    t[i].shape[1] = MM_N;
    t[i].numel = (size_t)MM_N * MM_N;
    t[i].nbytes = t[i].numel * sizeof(float);
  }
  t[0].data = ctx->src;
  t[1].data = ctx->src + t[0].nbytes;
  t[2].data = ctx->dst;
  t[2].role = ST_ROLE_OUTPUT;
  st_op_call_init(call);
  call->op = "matmul";
  call->backend = "reference";
  call->tensors = t;
  call->n_tensors = 3;
  call->shard_count = 1;
  call->max_threads = 1;
}

static void run_mm_typed(bench_ctx *ctx) {
  st_tensor t[3];
  st_op_call call;
  mm_tensors(ctx, t, &call);
  st__ref_matmul_rows(&call, 0, MM_N);
  clobber(ctx->dst);
}

static void run_mm_generic(bench_ctx *ctx) {
  st_tensor t[3];
  st_op_call call;
  mm_tensors(ctx, t, &call);
  st__ref_matmul_rows_generic(&call, 0, MM_N);
  clobber(ctx->dst);
}

static void sum_tensor(bench_ctx *ctx, st_tensor *x, st_dtype dt) {
  memset(x, 0, sizeof *x);
  x->dtype = dt;
  x->ndim = 1;
  x->shape[0] = (int64_t)SUM_N;
  x->numel = SUM_N;
  x->nbytes = SUM_N * st_dtype_size(dt);
  x->data = ctx->src;
}

/* Block by block, as reduce_sum sums (ST__REDUCE_BLOCK elements each). */
static volatile double sum_sink_f;
static volatile uint64_t sum_sink_u;

static void run_sum_f32(bench_ctx *ctx, int generic) {
  st_tensor x;
  double total = 0.0;
  sum_tensor(ctx, &x, ST_DTYPE_FLOAT32);
  for (size_t b = 0; b < SUM_N; b += ST__REDUCE_BLOCK)
    total += generic ? st__ref_sum_f64_generic(&x, b, b + ST__REDUCE_BLOCK)
                     : st__ref_sum_f64(&x, b, b + ST__REDUCE_BLOCK);
  sum_sink_f = total;
}

static void run_sum_i32(bench_ctx *ctx, int generic) {
  st_tensor x;
  uint64_t total = 0;
  sum_tensor(ctx, &x, ST_DTYPE_INT32);
  for (size_t b = 0; b < SUM_N; b += ST__REDUCE_BLOCK)
    total += generic ? st__ref_sum_u64_generic(&x, b, b + ST__REDUCE_BLOCK)
                     : st__ref_sum_u64(&x, b, b + ST__REDUCE_BLOCK);
  sum_sink_u = total;
}

static void run_sum_f32_typed(bench_ctx *ctx) { run_sum_f32(ctx, 0); }
static void run_sum_f32_generic(bench_ctx *ctx) { run_sum_f32(ctx, 1); }
static void run_sum_i32_typed(bench_ctx *ctx) { run_sum_i32(ctx, 0); }
static void run_sum_i32_generic(bench_ctx *ctx) { run_sum_i32(ctx, 1); }

/* memcpy of one 1M-element float32 tensor (4 MiB), the size the reference
 * add works on: the cache-resident baseline beside the 64 MiB one. */
static void run_memcpy_ref(bench_ctx *ctx) {
  memcpy(ctx->dst, ctx->src, REF_N * sizeof(float));
  clobber(ctx->dst);
}

static void run_load(bench_ctx *ctx) {
  st_scene_set *set = NULL;
  st_error_list errors;
  st_status s;
  st_error_list_init(&errors);
  s = st_scene_set_new(&set);
  if (s == ST_OK)
    s = st_scene_set_load_string(set, "bench.yaml", ctx->text, ctx->text_len,
                                 NULL, &errors);
  if (s != ST_OK) {
    char buf[ST_ERROR_FILE_MAX + ST_ERROR_MESSAGE_MAX + 32];
    fprintf(stderr, "bench_harness: load: %s\n", st_status_name(s));
    if (errors.count > 0)
      fprintf(stderr, "%s\n",
              st_error_format(&errors.items[0], buf, sizeof buf));
    ctx->failed = 1;
  }
  st_error_list_free(&errors);
  st_scene_set_free(set);
}

static void run_raw_parse(bench_ctx *ctx) {
  yaml_parser_t parser;
  yaml_event_t event;
  int done = 0;
  if (!yaml_parser_initialize(&parser)) {
    ctx->failed = 1;
    return;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)ctx->text,
                               ctx->text_len);
  while (!done) {
    if (!yaml_parser_parse(&parser, &event)) {
      fprintf(stderr, "bench_harness: raw parse: %s\n",
              parser.problem ? parser.problem : "error");
      ctx->failed = 1;
      break;
    }
    done = event.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&event);
  }
  yaml_parser_delete(&parser);
}

/* A scene file of about `target` bytes: many small scenes shaped like the
 * ones in scenes/ (tensors with params, several inits, a scalar, cases with
 * params), so the loader's per-node work is what gets measured. */
static char *make_scene_text(size_t target, size_t *len) {
  size_t cap = target + 4096, n = 0;
  char *text = malloc(cap);
  unsigned i = 0;
  if (text == NULL)
    exit(3);
  while (n < target) {
    int w = snprintf(
        text + n, cap - n,
        "---\n"
        "scene: bench_%u\n"
        "kernel: axpy\n"
        "rtol: 1.0e-5\n"
        "args:\n"
        "  - {tensor: x, dtype: float32, shape: [N], init: {uniform: [-1, "
        "1]}}\n"
        "  - {tensor: y, dtype: T, shape: [N], init: {normal: [0, 1]}, "
        "role: inout}\n"
        "  - {scalar: alpha, dtype: float32, value: 2.5}\n"
        "cases:\n"
        "  - name: small\n"
        "    params: {N: 1024, T: float32}\n"
        "  - name: large\n"
        "    params: {N: %u, T: float32}\n"
        "    manual: true\n"
        "    rounds: 3\n",
        i, 65536u + i);
    if (w < 0 || (size_t)w >= cap - n)
      break;
    n += (size_t)w;
    i++;
  }
  *len = n;
  return text;
}

static void tensor_init(st_tensor *t, const char *name, void *data) {
  memset(t, 0, sizeof *t);
  t->name = name;
  t->dtype = ST_DTYPE_FLOAT32;
  t->role = ST_ROLE_OUTPUT;
  t->ndim = 1;
  t->shape[0] = (int64_t)(BUF_BYTES / sizeof(float));
  t->numel = BUF_BYTES / sizeof(float);
  t->nbytes = BUF_BYTES;
  t->data = data;
}

static double gbps(size_t bytes, double s) { return (double)bytes / s / 1e9; }

int main(void) {
  bench_ctx ctx;
  double t_memcpy, t_memset, t_fill, t_compare, t_load, t_raw, t_ref, t_read2;
  double t_memcpy_ref, t_mm, t_mm_gen, t_sf, t_sf_gen, t_si, t_si_gen;
  double memcpy_gbps, fill_gbps, compare_gbps, load_mbps, raw_mbps;
  char *text;

  memset(&ctx, 0, sizeof ctx);
  ctx.src = alloc_touched(BUF_BYTES);
  ctx.dst = alloc_touched(BUF_BYTES);

  t_memcpy = best_of(run_memcpy, &ctx, MEM_REPS);
  t_memset = best_of(run_memset, &ctx, MEM_REPS);
  t_fill = best_of(run_fill, &ctx, MEM_REPS);

  /* Two equal float32 tensors of BUF_BYTES each: the last fill's output
   * and a copy of it. */
  memcpy(ctx.src, ctx.dst, BUF_BYTES);
  tensor_init(&ctx.a, "out", ctx.dst);
  tensor_init(&ctx.b, "out", ctx.src);
  t_compare = best_of(run_compare, &ctx, MEM_REPS);
  t_read2 = best_of(run_read_two, &ctx, MEM_REPS);

  t_ref = best_of(run_ref_add, &ctx, MEM_REPS);
  t_memcpy_ref = best_of(run_memcpy_ref, &ctx, MEM_REPS);

  /* Small, finite operands for matmul and the float sums (the compare
   * input above is uniform in [-1, 1]); int32 sums over the same bytes. */
  t_mm = best_of(run_mm_typed, &ctx, MEM_REPS);
  t_mm_gen = best_of(run_mm_generic, &ctx, 3);
  t_sf = best_of(run_sum_f32_typed, &ctx, MEM_REPS);
  t_sf_gen = best_of(run_sum_f32_generic, &ctx, 3);
  t_si = best_of(run_sum_i32_typed, &ctx, MEM_REPS);
  t_si_gen = best_of(run_sum_i32_generic, &ctx, 3);

  text = make_scene_text(SCENE_TEXT_BYTES, &ctx.text_len);
  ctx.text = text;
  t_raw = best_of(run_raw_parse, &ctx, LOAD_REPS);
  t_load = best_of(run_load, &ctx, LOAD_REPS);

  memcpy_gbps = gbps(BUF_BYTES, t_memcpy);
  fill_gbps = gbps(BUF_BYTES, t_fill);
  compare_gbps = gbps(BUF_BYTES, t_compare);
  load_mbps = (double)ctx.text_len / t_load / 1e6;
  raw_mbps = (double)ctx.text_len / t_raw / 1e6;

  printf("buffers: %zu MiB, best of %d; scene text: %.2f MB, best of %d\n",
         BUF_BYTES >> 20, MEM_REPS, (double)ctx.text_len / 1e6, LOAD_REPS);
  printf("memcpy              %8.2f GB/s\n", memcpy_gbps);
  printf("memset              %8.2f GB/s\n", gbps(BUF_BYTES, t_memset));
  printf("fill uniform f32    %8.2f GB/s\n", fill_gbps);
  printf("compare close f32   %8.2f GB/s\n", compare_gbps);
  printf("read two buffers    %8.2f GB/s (XOR only, 2 threads: any "
         "compare's ceiling)\n",
         gbps(BUF_BYTES, t_read2));
  printf("reference add f32   %8.2f GB/s (1M elements, bytes of one tensor)\n",
         gbps(REF_N * sizeof(float), t_ref));
  printf("scene load          %8.2f MB/s\n", load_mbps);
  printf("raw libyaml parse   %8.2f MB/s\n", raw_mbps);
  printf("ratio fill/memcpy        %6.2fx (target >= 1.0)\n",
         fill_gbps / memcpy_gbps);
  printf("ratio compare/memcpy     %6.2fx (target >= 1.5)\n",
         compare_gbps / memcpy_gbps);
  printf("ratio read-two/memcpy    %6.2fx (the most a compare can reach "
         "here)\n",
         t_memcpy / t_read2);
  printf("ratio compare/read-two   %6.2fx (compare's share of read "
         "bandwidth)\n",
         t_read2 / t_compare);
  printf("ratio ref-add/memcpy     %6.2fx (target >= 0.5)\n",
         gbps(REF_N * sizeof(float), t_ref) / memcpy_gbps);
  printf("ratio ref-add/memcpy-4MiB %6.2fx (memcpy of one 1M-element "
         "tensor, %.2f GB/s)\n",
         t_memcpy_ref / t_ref, gbps(REF_N * sizeof(float), t_memcpy_ref));
  printf("reference matmul 256 f32 %8.3f ms blocked, %8.3f ms generic\n",
         t_mm * 1e3, t_mm_gen * 1e3);
  printf("ratio matmul generic/blocked %6.2fx (speed-up)\n", t_mm_gen / t_mm);
  printf("reduce_sum 1M f32        %8.3f ms typed, %8.3f ms generic\n",
         t_sf * 1e3, t_sf_gen * 1e3);
  printf("ratio sum-f32 generic/typed  %6.2fx (speed-up)\n", t_sf_gen / t_sf);
  printf("reduce_sum 1M i32        %8.3f ms typed, %8.3f ms generic\n",
         t_si * 1e3, t_si_gen * 1e3);
  printf("ratio sum-i32 generic/typed  %6.2fx (speed-up)\n", t_si_gen / t_si);
  printf("ratio load/raw-parse     %6.2fx (target >= 0.5)\n",
         load_mbps / raw_mbps);

  free(text);
  free(ctx.src);
  free(ctx.dst);
  if (ctx.failed) {
    fprintf(stderr, "bench_harness: a measured operation failed\n");
    return 1;
  }
  return 0;
}
