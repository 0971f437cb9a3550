/* SPDX-License-Identifier: MIT */
/* fakedev: a fake device platform for CI, where there is no GPU. Host
 * memory stands in for device memory, and the plugin does what a real
 * device plugin does with it (docs/accelerators.md): `prepare` (at the end
 * of `args`) allocates one "device" buffer per tensor and uploads the
 * inputs; every `run` uploads the outputs and inouts (the host's truth
 * after the harness's reset), computes on the device buffers, downloads the
 * outputs and inouts of its shard, and reports device_ns (measured around
 * the compute) and copy_ns (around the copies); `release` frees it all.
 *
 * Ops on platform "fakedev": add, copy, scale, axpy (y is an inout: an
 * accumulating kernel, so a device that kept last round's y would drift)
 * and matmul, through the public element accessors (float32, float64 and
 * the integer dtypes); float16 is declined in prepare, as a device without
 * half support would (ST_ESKIP).
 *
 * What the tests observe: fakedev_counts() (prepares, releases, runs in
 * this process), and with FAKEDEV_LOG=PATH one line per hook call appended
 * to PATH ("prepare pid=P shard=I/N", "run ...", "release ..."), which
 * works across isolated children and level-3 workers. Failure injection:
 * FAKEDEV_PREPARE=fail (prepare fails), FAKEDEV_FAIL_RUN=K (the K-th run
 * of a case fails), FAKEDEV_STALE=1 (only a case's first run uploads the
 * outputs/inouts: a device that keeps its own stale copy afterwards; the
 * reset test must then fail), FAKEDEV_FORK_CHECK=1 (behave like a CUDA
 * context: a prepare in a process forked from one that had already
 * prepared fails, naming both pids). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("fakedev");

typedef struct fd_state {
  size_t n;
  unsigned char **dev; /* one "device" buffer per tensor */
  unsigned runs;
  unsigned fail_run; /* 0: none */
  int stale;
} fd_state;

static int n_prepares, n_releases, n_runs;
/* The process that first prepared (FAKEDEV_FORK_CHECK). */
static long device_pid;

/* The counters of this process (the tests dlsym it). */
__attribute__((visibility("default"))) void
fakedev_counts(int *prepares /* OUT */, int *releases /* OUT */,
               int *runs /* OUT */);
void fakedev_counts(int *prepares, int *releases, int *runs) {
  *prepares = __atomic_load_n(&n_prepares, __ATOMIC_SEQ_CST);
  *releases = __atomic_load_n(&n_releases, __ATOMIC_SEQ_CST);
  *runs = __atomic_load_n(&n_runs, __ATOMIC_SEQ_CST);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One line, one write(2) with O_APPEND: lines from several processes do
 * not interleave. */
static void log_hook(const char *what, const st_op_call *call) {
  const char *path = getenv("FAKEDEV_LOG");
  char line[160];
  int fd, n;
  if (path == NULL || path[0] == '\0')
    return;
  fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  n = snprintf(line, sizeof line, "%s pid=%ld shard=%u/%u\n", what,
               (long)getpid(), call->shard_index, call->shard_count);
  if (n > 0 && write(fd, line, (size_t)n) != n)
    n = -1;
  close(fd);
}

static void state_free(fd_state *st) {
  size_t i;
  if (st == NULL)
    return;
  for (i = 0; i < st->n; i++)
    free(st->dev[i]);
  free(st->dev);
  free(st);
}

static st_status fd_prepare(st_op_call *call, void **state) {
  const char *mode = getenv("FAKEDEV_PREPARE");
  const char *fail_run = getenv("FAKEDEV_FAIL_RUN");
  const char *stale = getenv("FAKEDEV_STALE");
  fd_state *st;
  size_t i;

  *state = NULL;
  {
    const char *fc = getenv("FAKEDEV_FORK_CHECK");
    long pid = (long)getpid(),
         first = __atomic_load_n(&device_pid, __ATOMIC_SEQ_CST);
    if (fc != NULL && strcmp(fc, "1") == 0 && first != 0 && first != pid)
      return st_op_call_fail(call, ST_EKERNEL,
                             "fake device: initialised in pid %ld, and this "
                             "process (pid %ld) was forked from it after "
                             "that",
                             first, pid);
    if (first == 0)
      __atomic_store_n(&device_pid, pid, __ATOMIC_SEQ_CST);
  }
  if (mode != NULL && strcmp(mode, "fail") == 0)
    return st_op_call_fail(call, ST_EKERNEL,
                           "fake device: out of device memory");
  for (i = 0; i < call->n_tensors; i++)
    if (call->tensors[i].dtype == ST_DTYPE_FLOAT16)
      return st_op_call_fail(call, ST_ESKIP,
                             "fake device: no float16 support (tensor '%s')",
                             call->tensors[i].name);
  st = calloc(1, sizeof *st);
  if (st == NULL || (st->dev = calloc(call->n_tensors ? call->n_tensors : 1,
                                      sizeof *st->dev)) == NULL) {
    free(st);
    return st_op_call_fail(call, ST_ENOMEM, "fake device: out of memory");
  }
  st->n = call->n_tensors;
  for (i = 0; i < st->n; i++) {
    const st_tensor *t = &call->tensors[i];
    st->dev[i] = malloc(t->nbytes ? t->nbytes : 1);
    if (st->dev[i] == NULL) {
      state_free(st);
      return st_op_call_fail(call, ST_ENOMEM, "fake device: out of memory");
    }
    /* Uploads: the inputs, once per case. */
    if (t->role == ST_ROLE_INPUT && t->nbytes > 0)
      memcpy(st->dev[i], t->data, t->nbytes);
  }
  st->fail_run = fail_run ? (unsigned)strtoul(fail_run, NULL, 10) : 0;
  st->stale = stale != NULL && strcmp(stale, "1") == 0;
  *state = st;
  __atomic_add_fetch(&n_prepares, 1, __ATOMIC_SEQ_CST);
  log_hook("prepare", call);
  return ST_OK;
}

static void fd_release(st_op_call *call, void *state) {
  state_free(state);
  __atomic_add_fetch(&n_releases, 1, __ATOMIC_SEQ_CST);
  log_hook("release", call);
}

enum { K_ADD, K_COPY, K_SCALE, K_AXPY, K_MATMUL };

/* The shard's bytes of tensor t: its rows for matmul (the output's rows;
 * level 3 splits matmul by rows of c), else its elements. */
static void shard_bytes(const st_op_call *call, int kind, const st_tensor *t,
                        size_t *off, size_t *len) {
  size_t b, e, esz = t->numel ? t->nbytes / t->numel : 0;
  if (kind == K_MATMUL) {
    size_t rows = (size_t)t->shape[0], cols = rows ? t->numel / rows : 0;
    st_shard_range(rows, call->shard_index, call->shard_count, &b, &e);
    *off = b * cols * esz;
    *len = (e - b) * cols * esz;
    return;
  }
  st_shard_range(t->numel, call->shard_index, call->shard_count, &b, &e);
  *off = b * esz;
  *len = (e - b) * esz;
}

static void compute(st_op_call *dc, int kind) {
  st_tensor *t = dc->tensors;
  double s = dc->n_scalars ? dc->scalars[0].f : 0.0;
  size_t i, b, e;
  if (kind == K_MATMUL) {
    size_t m = (size_t)t[0].shape[0], k = (size_t)t[0].shape[1];
    size_t n = (size_t)t[1].shape[1], r, j, q;
    st_shard_range(m, dc->shard_index, dc->shard_count, &b, &e);
    for (r = b; r < e; r++)
      for (j = 0; j < n; j++) {
        double acc = 0.0;
        for (q = 0; q < k; q++)
          acc += st_tensor_get_f64(&t[0], r * k + q) *
                 st_tensor_get_f64(&t[1], q * n + j);
        st_tensor_set_f64(&t[2], r * n + j, acc);
      }
    return;
  }
  if (dc->n_scalars && dc->scalars[0].is_int)
    s = (double)dc->scalars[0].i;
  st_shard_range(t[0].numel, dc->shard_index, dc->shard_count, &b, &e);
  for (i = b; i < e; i++) {
    double x = st_tensor_get_f64(&t[0], i);
    switch (kind) {
    case K_ADD:
      st_tensor_set_f64(&t[2], i, x + st_tensor_get_f64(&t[1], i));
      break;
    case K_COPY:
      st_tensor_set_f64(&t[1], i, x);
      break;
    case K_SCALE:
      st_tensor_set_f64(&t[1], i, s * x);
      break;
    case K_AXPY:
      st_tensor_set_f64(&t[1], i, s * x + st_tensor_get_f64(&t[1], i));
      break;
    }
  }
}

static st_status fd_run(st_op_call *call, int kind) {
  fd_state *st = call->platform_state;
  st_tensor dt[3];
  st_op_call dc;
  uint64_t t0, t1, t2, t3;
  size_t i, off, len;

  if (st == NULL)
    return st_op_call_fail(call, ST_EINTERNAL,
                           "fake device: no device state (prepare did not "
                           "run before the kernel)");
  if (call->n_tensors != st->n || call->n_tensors > 3)
    return st_op_call_fail(call, ST_EBIND,
                           "fake device: %zu tensors, prepared for %zu",
                           call->n_tensors, st->n);
  __atomic_add_fetch(&n_runs, 1, __ATOMIC_SEQ_CST);
  log_hook("run", call);
  if (++st->runs == st->fail_run)
    return st_op_call_fail(call, ST_EKERNEL, "fake device: fault in run %u",
                           st->runs);
  /* Uploads: what the kernel writes, from the host's truth (the harness
   * reset it between rounds). */
  t0 = now_ns();
  for (i = 0; i < call->n_tensors && (!st->stale || st->runs == 1); i++)
    if (call->tensors[i].role != ST_ROLE_INPUT) {
      shard_bytes(call, kind, &call->tensors[i], &off, &len);
      if (len > 0)
        memcpy(st->dev[i] + off, (unsigned char *)call->tensors[i].data + off,
               len);
    }
  t1 = now_ns();
  dc = *call;
  for (i = 0; i < call->n_tensors; i++) {
    dt[i] = call->tensors[i];
    dt[i].data = st->dev[i];
  }
  dc.tensors = dt;
  compute(&dc, kind);
  t2 = now_ns();
  /* Downloads: only the shard's part (level-3 workers share the host
   * buffers). */
  for (i = 0; i < call->n_tensors; i++)
    if (call->tensors[i].role != ST_ROLE_INPUT) {
      shard_bytes(call, kind, &call->tensors[i], &off, &len);
      if (len > 0)
        memcpy((unsigned char *)call->tensors[i].data + off, st->dev[i] + off,
               len);
    }
  t3 = now_ns();
  call->device_ns = t2 - t1;
  call->copy_ns = (t1 - t0) + (t3 - t2);
  return ST_OK;
}

static st_status fd_add(st_op_call *c) { return fd_run(c, K_ADD); }
static st_status fd_copy(st_op_call *c) { return fd_run(c, K_COPY); }
static st_status fd_scale(st_op_call *c) { return fd_run(c, K_SCALE); }
static st_status fd_axpy(st_op_call *c) { return fd_run(c, K_AXPY); }
static st_status fd_matmul(st_op_call *c) { return fd_run(c, K_MATMUL); }

static st_status fd_init(st_registry *reg, st_error *err) {
  static const struct {
    const char *op;
    st_op_fn fn;
  } ops[] = {{"add", fd_add},
             {"copy", fd_copy},
             {"scale", fd_scale},
             {"axpy", fd_axpy},
             {"matmul", fd_matmul}};
  size_t i;
  for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    st_status rc = st_registry_register(reg, "fakedev", ops[i].op, "fakedev",
                                        ops[i].fn, err);
    if (rc != ST_OK)
      return rc;
  }
  return ST_OK;
}

static const char *const platforms[] = {"fakedev", NULL};

static const st_platform_hooks hooks[] = {
    {.size = sizeof(st_platform_hooks),
     .platform = "fakedev",
     .prepare = fd_prepare,
     .release = fd_release},
};

__attribute__((visibility("default"))) const st_module scenetest_module = {
    .abi_version = ST_ABI_VERSION,
    .size = sizeof(st_module),
    .name = "fakedev",
    .platforms = platforms,
    .init = fd_init,
    .hooks = hooks,
    .n_hooks = 1,
};
