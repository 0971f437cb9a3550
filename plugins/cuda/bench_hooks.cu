/* SPDX-License-Identifier: MIT */
/* The cuda platform's hooks for `scenetest bench`
 * (docs/bench.md#platform-hooks, docs/accelerators.md):
 * - ceilings: device-to-device copy bandwidth (cudaMemcpyAsync between two
 *   buffers of 256 MiB, at most an eighth of the device's memory each;
 *   bytes read + written, as the harness counts them) and the rate of an
 *   FMA-bound kernel (8 independent multiply-add chains a thread, 8 blocks
 *   of 256 threads an SM) for float32, float64 and int32; best of 5 timed
 *   repetitions after one warm-up, between two events. half and float8
 *   take float32's rate: this plugin's kernels compute them in float (no
 *   tensor-core kernels).
 * - flush: a memset of a device buffer twice the L2 size (allocated at the
 *   first flush, kept for the process), synchronised.
 * - describe: device name, compute capability, driver and runtime
 *   versions, the peak SM and memory clocks (runtime attributes), and,
 *   where NVML is present (libnvidia-ml.so.1, opened at run time, never
 *   linked), the current SM and memory clocks: `*_mhz_start` at the first
 *   call in a process, `*_mhz_end` at later ones (bench describes once at
 *   its first record and again at the end).
 * ceilings and describe run in this process when a prepare here
 * initialised CUDA; otherwise in a child forked for them, which sends the
 * figures back on a pipe and exits, so that a process that had not
 * initialised CUDA (the bench's, before its first case) still has not: a
 * CUDA context does not survive fork, and that process may fork later. */
#include <cuda_runtime.h>

#include <dlfcn.h>
#include <errno.h>
#include <float.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_internal.h"

/* ---- running on device 0 ------------------------------------------------ */

typedef int (*device_fn)(const cudaDeviceProp *p, void *out);

/* CUDA initialised in a forked child: 0, or -1 with no usable device
 * (none, below compute capability 9.0: this plugin's code is sm_90). */
static int init_child(cudaDeviceProp *p) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0 ||
      cudaGetDeviceProperties(p, 0) != cudaSuccess || p->major < 9 ||
      cudaSetDevice(0) != cudaSuccess || cudaFree(0) != cudaSuccess)
    return -1;
  return 0;
}

static int write_all(int fd, const void *buf, size_t n) {
  const char *p = (const char *)buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static size_t read_all(int fd, void *buf, size_t n) {
  char *p = (char *)buf;
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  return got;
}

/* fn(props, out) on device 0, here or in a forked child (top of the
 * file); out is size bytes. 0, or -1 when fn or the device failed. */
static int on_device(device_fn fn, void *out, size_t size) {
  cudaDeviceProp p;
  int fds[2], status = 0;
  size_t got;
  pid_t pid, w;
  if (cu__ready_here(&p))
    return fn(&p, out);
  if (pipe(fds) != 0)
    return -1;
  pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    /* _exit: none of the parent's atexit handlers or stdio buffers. */
    if (init_child(&p) == 0 && fn(&p, out) == 0 &&
        write_all(fds[1], out, size) == 0)
      _exit(0);
    _exit(1);
  }
  close(fds[1]);
  got = read_all(fds[0], out, size);
  close(fds[0]);
  while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
    ;
  /* The child writes only after fn succeeded: all of out arrived means it
   * did (w < 0: a handler of the caller's reaped it first). */
  if (got != size ||
      (w == pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)))
    return -1;
  return 0;
}

/* ---- ceilings -------------------------------------------------------- */

#define CEIL_COPY_BYTES ((size_t)256 << 20)
#define CEIL_REPS 5
#define FMA_ITERS 16384
#define FMA_THREADS 256
#define FMA_BLOCKS_PER_SM 8

__device__ __forceinline__ float mad(float a, float x, float y) {
  return fmaf(a, x, y);
}
__device__ __forceinline__ double mad(double a, double x, double y) {
  return fma(a, x, y);
}
__device__ __forceinline__ unsigned mad(unsigned a, unsigned x, unsigned y) {
  return a * x + y; /* IMAD; unsigned: wraps, defined */
}

/* 8 independent chains of FMA_ITERS multiply-adds a thread; the sum is
 * stored only when it equals a value it never takes, which the compiler
 * cannot know: the work stays, the stores do not. */
template <typename T> __global__ void fma_loop(T *sink, T x, T y, T never) {
  T a0 = (T)threadIdx.x, a1 = a0 + (T)1, a2 = a0 + (T)2, a3 = a0 + (T)3;
  T a4 = a0 + (T)4, a5 = a0 + (T)5, a6 = a0 + (T)6, a7 = a0 + (T)7;
  for (int i = 0; i < FMA_ITERS; i++) {
    a0 = mad(a0, x, y);
    a1 = mad(a1, x, y);
    a2 = mad(a2, x, y);
    a3 = mad(a3, x, y);
    a4 = mad(a4, x, y);
    a5 = mad(a5, x, y);
    a6 = mad(a6, x, y);
    a7 = mad(a7, x, y);
  }
  T sum = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
  if (sum == never)
    sink[0] = sum;
}

/* The best of CEIL_REPS timings (ms) of what launch enqueues on s, after
 * one untimed; a negative value when something failed. */
template <typename F>
static float best_ms(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, F launch) {
  float best = FLT_MAX, ms;
  launch();
  if (cudaStreamSynchronize(s) != cudaSuccess)
    return -1;
  for (int r = 0; r < CEIL_REPS; r++) {
    if (cudaEventRecord(e0, s) != cudaSuccess)
      return -1;
    launch();
    if (cudaEventRecord(e1, s) != cudaSuccess ||
        cudaEventSynchronize(e1) != cudaSuccess ||
        cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
      return -1;
    if (ms < best)
      best = ms;
  }
  return best > 0 && cudaGetLastError() == cudaSuccess ? best : -1;
}

template <typename T>
static double fma_rate(const cudaDeviceProp *p, cudaStream_t s, cudaEvent_t e0,
                       cudaEvent_t e1, void *sink, T x, T y, T never) {
  unsigned blocks = (unsigned)p->multiProcessorCount * FMA_BLOCKS_PER_SM;
  float ms = best_ms(s, e0, e1, [&] {
    fma_loop<T><<<blocks, FMA_THREADS, 0, s>>>((T *)sink, x, y, never);
  });
  /* 2 FLOPs a multiply-add, as the work model counts them. */
  double flops = 2.0 * 8.0 * FMA_ITERS * (double)blocks * FMA_THREADS;
  return ms > 0 ? flops / (ms * 1e-3) : 0;
}

static int measure(const cudaDeviceProp *p, void *vout) {
  st_platform_ceilings *out = (st_platform_ceilings *)vout;
  size_t bytes = CEIL_COPY_BYTES;
  void *a = NULL, *b = NULL, *sink = NULL;
  cudaStream_t s = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  int rc = -1;
  float ms;

  memset(out, 0, sizeof *out);
  if (bytes > p->totalGlobalMem / 8)
    bytes = (p->totalGlobalMem / 8) & ~(size_t)4095;
  if (bytes == 0 ||
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
    return -1;
  if (cudaEventCreate(&e0) != cudaSuccess ||
      cudaEventCreate(&e1) != cudaSuccess ||
      cudaMalloc(&a, bytes) != cudaSuccess ||
      cudaMalloc(&b, bytes) != cudaSuccess ||
      cudaMalloc(&sink, sizeof(double)) != cudaSuccess ||
      cudaMemsetAsync(a, 1, bytes, s) != cudaSuccess)
    goto out;
  ms = best_ms(s, e0, e1, [&] {
    cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s);
  });
  if (ms <= 0)
    goto out;
  out->bytes_per_s = 2.0 * (double)bytes / (ms * 1e-3);
  out->flops_per_s[0] = fma_rate<double>(p, s, e0, e1, sink, 0.999, 0.001, -1);
  out->flops_per_s[1] =
      fma_rate<float>(p, s, e0, e1, sink, 0.999f, 0.001f, -1.0f);
  out->flops_per_s[2] = out->flops_per_s[1];
  out->flops_per_s[3] = out->flops_per_s[1];
  out->flops_per_s[4] =
      fma_rate<unsigned>(p, s, e0, e1, sink, 3u, 1u, 0xdeadbeefu);
  rc = out->flops_per_s[1] > 0 ? 0 : -1;
out:
  if (s != NULL)
    cudaStreamSynchronize(s);
  if (a != NULL)
    cudaFree(a);
  if (b != NULL)
    cudaFree(b);
  if (sink != NULL)
    cudaFree(sink);
  if (e0 != NULL)
    cudaEventDestroy(e0);
  if (e1 != NULL)
    cudaEventDestroy(e1);
  if (s != NULL)
    cudaStreamDestroy(s);
  cudaGetLastError();
  return rc;
}

st_status cu__ceilings(st_platform_ceilings *out) {
  st_platform_ceilings got;
  if (on_device(measure, &got, sizeof got) != 0)
    return ST_ESKIP;
  *out = got;
  return ST_OK;
}

/* ---- flush ------------------------------------------------------------- */

static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t flush_pid;      /* guarded by: flush_lock; the buffer's process */
static void *flush_buf;      /* guarded by: flush_lock */
static size_t flush_len;     /* guarded by: flush_lock */
static unsigned flush_value; /* guarded by: flush_lock */

st_status cu__flush(void) {
  cudaDeviceProp p;
  st_status rc = ST_OK;
  /* Only where a case's prepare made this process's context. */
  if (!cu__ready_here(&p))
    return ST_EKERNEL;
  pthread_mutex_lock(&flush_lock);
  if (flush_pid != getpid()) {
    /* Inherited through fork: the parent's, not ours. */
    flush_buf = NULL;
    flush_pid = getpid();
  }
  if (flush_buf == NULL) {
    flush_len = 2 * (size_t)(p.l2CacheSize > 0 ? p.l2CacheSize : 64 << 20);
    if (cudaMalloc(&flush_buf, flush_len) != cudaSuccess) {
      flush_buf = NULL;
      rc = ST_ENOMEM;
    }
  }
  if (rc == ST_OK && (cudaMemset(flush_buf, (int)(flush_value++ & 0xff),
                                 flush_len) != cudaSuccess ||
                      cudaDeviceSynchronize() != cudaSuccess))
    rc = ST_EKERNEL;
  if (rc != ST_OK)
    cudaGetLastError();
  pthread_mutex_unlock(&flush_lock);
  return rc;
}

/* ---- describe ---------------------------------------------------------- */

typedef struct device_text {
  char name[256];
  int major, minor, driver, runtime, sm_khz, mem_khz;
  int nvml; /* the current clocks below were read */
  unsigned sm_mhz, mem_mhz;
} device_text;

/* NVML's few entry points, from libnvidia-ml.so.1 when it is there (its
 * header is not needed: the types are an int status, an opaque handle,
 * and the clock type, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2). */
typedef int (*nvml_void_fn)(void);
typedef int (*nvml_by_bus_fn)(const char *, void **);
typedef int (*nvml_clock_fn)(void *, int, unsigned *);

static void nvml_clocks(device_text *t) {
  char bus[32];
  void *lib, *dev = NULL;
  nvml_void_fn init, shutdown;
  nvml_by_bus_fn by_bus;
  nvml_clock_fn clock;
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, 0) != cudaSuccess ||
      (lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) == NULL)
    return;
  init = (nvml_void_fn)dlsym(lib, "nvmlInit_v2");
  shutdown = (nvml_void_fn)dlsym(lib, "nvmlShutdown");
  by_bus = (nvml_by_bus_fn)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  clock = (nvml_clock_fn)dlsym(lib, "nvmlDeviceGetClockInfo");
  if (init != NULL && shutdown != NULL && by_bus != NULL && clock != NULL &&
      init() == 0) {
    t->nvml = by_bus(bus, &dev) == 0 && clock(dev, 1, &t->sm_mhz) == 0 &&
              clock(dev, 2, &t->mem_mhz) == 0;
    shutdown();
  }
  dlclose(lib);
}

static int read_device(const cudaDeviceProp *p, void *vout) {
  device_text *t = (device_text *)vout;
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", p->name);
  t->major = p->major;
  t->minor = p->minor;
  if (cudaDriverGetVersion(&t->driver) != cudaSuccess ||
      cudaRuntimeGetVersion(&t->runtime) != cudaSuccess ||
      cudaDeviceGetAttribute(&t->sm_khz, cudaDevAttrClockRate, 0) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&t->mem_khz, cudaDevAttrMemoryClockRate, 0) !=
          cudaSuccess)
    return -1;
  nvml_clocks(t);
  return 0;
}

/* value into buf at *used, quoted and escaped as the record's raw (\\ and
 * \"), cut to fit. */
static void put_pair(char *buf, size_t size, size_t *used, const char *key,
                     const char *value) {
  int w = snprintf(buf + *used, size - *used, "%s%s=\"", *used ? " " : "", key);
  if (w < 0 || (size_t)w >= size - *used)
    return;
  *used += (size_t)w;
  for (; *value != '\0' && *used + 3 < size; value++) {
    if (*value == '\\' || *value == '"')
      buf[(*used)++] = '\\';
    buf[(*used)++] = *value;
  }
  if (*used + 1 < size) {
    buf[(*used)++] = '"';
    buf[*used] = '\0';
  }
}

static pthread_mutex_t describe_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t started_pid; /* guarded by: describe_lock; 0: no start yet */
static unsigned start_sm, start_mem; /* guarded by: describe_lock */

st_status cu__describe(char *buf, size_t size) {
  device_text t;
  char v[64];
  size_t used = 0;
  int first;
  if (size == 0)
    return ST_EINVAL;
  buf[0] = '\0';
  if (on_device(read_device, &t, sizeof t) != 0)
    return ST_ESKIP;
  t.name[sizeof t.name - 1] = '\0';
  put_pair(buf, size, &used, "device", t.name);
  snprintf(v, sizeof v, "%d.%d", t.major, t.minor);
  put_pair(buf, size, &used, "cc", v);
  /* 13000 is 13.0, 12040 is 12.4. */
  snprintf(v, sizeof v, "%d.%d", t.driver / 1000, t.driver % 1000 / 10);
  put_pair(buf, size, &used, "driver", v);
  snprintf(v, sizeof v, "%d.%d", t.runtime / 1000, t.runtime % 1000 / 10);
  put_pair(buf, size, &used, "runtime", v);
  snprintf(v, sizeof v, "%d", t.sm_khz / 1000);
  put_pair(buf, size, &used, "sm_mhz_max", v);
  snprintf(v, sizeof v, "%d", t.mem_khz / 1000);
  put_pair(buf, size, &used, "mem_mhz_max", v);
  if (!t.nvml)
    return ST_OK;
  pthread_mutex_lock(&describe_lock);
  first = started_pid != getpid();
  if (first) {
    started_pid = getpid();
    start_sm = t.sm_mhz;
    start_mem = t.mem_mhz;
  }
  snprintf(v, sizeof v, "%u", start_sm);
  put_pair(buf, size, &used, "sm_mhz_start", v);
  snprintf(v, sizeof v, "%u", start_mem);
  put_pair(buf, size, &used, "mem_mhz_start", v);
  pthread_mutex_unlock(&describe_lock);
  if (!first) {
    snprintf(v, sizeof v, "%u", t.sm_mhz);
    put_pair(buf, size, &used, "sm_mhz_end", v);
    snprintf(v, sizeof v, "%u", t.mem_mhz);
    put_pair(buf, size, &used, "mem_mhz_end", v);
  }
  return ST_OK;
}
