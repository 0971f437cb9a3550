/* SPDX-License-Identifier: MIT */
/* The CUDA platform's benchmark (plugins/cuda, docs/accelerators.md), each
 * figure a ratio to a ceiling measured in the same run on the same GPU:
 *   - element-wise add over 2^28 float32 (1 GiB per tensor): the kernel's
 *     device_ns (CUDA events, from the run event) as bytes read + written
 *     per second, against a device-to-device cudaMemcpy of 1 GiB (bytes
 *     read + written), the best of several;
 *   - float32 matmul 4096^3: its device_ns as FLOP/s against
 *     torch.matmul's on the same shape with TF32 disabled, timed with CUDA
 *     events by the machine's python3 (a child process, so torch never
 *     enters this one);
 *   - the harness's overhead per case around the kernel: the host time of
 *     a tiny add's `run` phase minus its device_ns (and minus copy_ns too).
 * Medians over the rounds after the first (cold) one.
 *
 * Usage: bench_cuda CUDA_PLUGIN [PYTHON3]   (prints a table; exit 0 when it
 * measured, 77 without a device, 1 on a failed case) */
#include <cuda_runtime_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/scenetest.h>

#define COPY_BYTES ((size_t)1 << 30)

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_u64);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Device-to-device copy bandwidth (bytes read + written per second), the
 * best of 10 timed copies after 2 warm-ups. 0 on failure. */
static double d2d_bandwidth(void) {
  void *a = NULL, *b = NULL;
  cudaEvent_t e0, e1;
  float ms, best = 0;
  int i;
  if (cudaMalloc(&a, COPY_BYTES) != cudaSuccess ||
      cudaMalloc(&b, COPY_BYTES) != cudaSuccess)
    return 0;
  cudaMemset(a, 1, COPY_BYTES);
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (i = 0; i < 12; i++) {
    cudaEventRecord(e0, 0);
    cudaMemcpy(b, a, COPY_BYTES, cudaMemcpyDeviceToDevice);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    if (i >= 2 && (best == 0 || ms < best))
      best = ms;
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(a);
  cudaFree(b);
  return best > 0 ? 2.0 * (double)COPY_BYTES / (best * 1e-3) : 0;
}

/* Runs one scene's one case on platform cuda; fills per-round run host
 * times, device_ns and copy_ns (round 0 dropped). Returns the number of
 * rounds kept, or -1. */
static int run_case(st_registry *reg, const char *text, uint64_t *dur,
                    uint64_t *dev, uint64_t *copy, int max) {
  st_scene_set *set = NULL;
  st_load_options lo;
  st_error_list errs;
  st_run_options ro;
  st_case_result *res = NULL;
  st_error err;
  size_t i;
  int n = 0;

  st_error_list_init(&errs);
  st_error_clear(&err);
  st_load_options_init(&lo);
  lo.max_arg_bytes = (uint64_t)16 << 30;
  if (st_scene_set_new(&set) != ST_OK ||
      st_scene_set_load_string(set, "bench_cuda.yaml", text, strlen(text), &lo,
                               &errs) != ST_OK) {
    char buf[1200];
    for (i = 0; i < errs.count; i++)
      fprintf(stderr, "%s\n", st_error_format(&errs.items[i], buf, sizeof buf));
    st_error_list_free(&errs);
    st_scene_set_free(set);
    return -1;
  }
  st_error_list_free(&errs);
  st_run_options_init(&ro);
  ro.registry = reg;
  ro.platform = "cuda";
  if (st_run_case(st_scene_set_get(set, 0), 0, &ro, &res, &err) != ST_OK) {
    fprintf(stderr, "bench_cuda: %s\n", err.message);
    st_scene_set_free(set);
    return -1;
  }
  if (st_case_result_status(res) != ST_CASE_PASS) {
    fprintf(stderr, "bench_cuda: case %s: %s: %s\n", st_case_result_scene(res),
            st_case_status_name(st_case_result_status(res)),
            st_case_result_message(res) ? st_case_result_message(res) : "");
    n = st_case_result_status(res) == ST_CASE_SKIP ? -77 : -1;
  }
  for (i = 0; n >= 0 && i < st_case_result_event_count(res); i++) {
    const st_event *ev = st_case_result_event(res, i);
    if (strcmp(ev->name, "run") != 0 || ev->round == 0 || n >= max)
      continue;
    dur[n] = ev->dur_ns;
    dev[n] = ev->device_ns;
    copy[n] = ev->copy_ns;
    n++;
  }
  st_case_result_free(res);
  st_scene_set_free(set);
  return n;
}

/* torch.matmul's float32 rate (TF32 off) on 4096^3, in TFLOP/s, from the
 * machine's python3; 0 when it cannot be measured. */
static double torch_rate(const char *python) {
  char cmd[2048];
  double tflops = 0;
  FILE *p;
  snprintf(
      cmd, sizeof cmd,
      "%s -c '"
      "import torch\n"
      "torch.backends.cuda.matmul.allow_tf32 = False\n"
      "torch.backends.cudnn.allow_tf32 = False\n"
      "torch.set_float32_matmul_precision(\"highest\")\n"
      "n = 4096\n"
      "a = torch.rand(n, n, device=\"cuda\") * 2 - 1\n"
      "b = torch.rand(n, n, device=\"cuda\") * 2 - 1\n"
      "for _ in range(3): torch.matmul(a, b)\n"
      "t = []\n"
      "for _ in range(10):\n"
      "  s = torch.cuda.Event(enable_timing=True)\n"
      "  e = torch.cuda.Event(enable_timing=True)\n"
      "  s.record(); torch.matmul(a, b); e.record(); e.synchronize()\n"
      "  t.append(s.elapsed_time(e))\n"
      "t.sort()\n"
      "print(\"%%.3f\" %% (2 * n ** 3 / ((t[4] + t[5]) / 2 * 1e-3) / 1e12))\n"
      "' 2>/dev/null",
      python);
  p = popen(cmd, "r");
  if (p == NULL)
    return 0;
  if (fscanf(p, "%lf", &tflops) != 1)
    tflops = 0;
  pclose(p);
  return tflops;
}

#define SCENE(kernel, args, params, rounds)                                    \
  "scene: bench_" kernel "\nkernel: " kernel                                   \
  "\nskip_golden: true\nargs:\n" args                                          \
  "cases:\n  - name: c\n    params: " params "\n    rounds: " rounds "\n"

int main(int argc, char **argv) {
  st_registry *reg = NULL;
  st_error err;
  struct cudaDeviceProp prop;
  uint64_t dur[256], dev[256], copy[256], over[256], over2[256];
  double copy_bw, add_bw, mm_tflops, torch_tflops;
  int n, i;

  if (argc < 2) {
    fprintf(stderr, "usage: bench_cuda CUDA_PLUGIN [PYTHON3]\n");
    return 2;
  }
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    printf("bench_cuda: no CUDA device: skipped\n");
    return 77;
  }
  st_log_set_level(ST_LOG_WARNING);
  st_error_clear(&err);
  if (st_registry_new_builtin(&reg) != ST_OK ||
      st_plugin_load(reg, argv[1], &err) != ST_OK) {
    fprintf(stderr, "bench_cuda: %s\n", err.message);
    return 1;
  }
  printf("bench_cuda on %s (%d SMs, cc %d.%d)\n", prop.name,
         prop.multiProcessorCount, prop.major, prop.minor);

  copy_bw = d2d_bandwidth();

  /* add over 2^28 float32: 1 GiB per tensor, 3 GiB moved per run. */
  n = run_case(reg,
               SCENE("add",
                     "  - {tensor: a, dtype: float32, shape: [N], init: "
                     "{uniform: [-1, 1]}}\n"
                     "  - {tensor: b, dtype: float32, shape: [N], init: "
                     "{uniform: [-1, 1]}}\n"
                     "  - {tensor: out, dtype: float32, shape: [N], role: "
                     "output}\n",
                     "{N: 268435456}", "6"),
               dur, dev, copy, 256);
  if (n <= 0)
    return n == -77 ? 77 : 1;
  add_bw =
      3.0 * (double)((size_t)1 << 30) / ((double)median(dev, (size_t)n) * 1e-9);

  n = run_case(reg,
               SCENE("matmul",
                     "  - {tensor: a, dtype: float32, shape: [N, N], init: "
                     "{uniform: [-1, 1]}}\n"
                     "  - {tensor: b, dtype: float32, shape: [N, N], init: "
                     "{uniform: [-1, 1]}}\n"
                     "  - {tensor: c, dtype: float32, shape: [N, N], role: "
                     "output}\n",
                     "{N: 4096}", "6"),
               dur, dev, copy, 256);
  if (n <= 0)
    return 1;
  mm_tflops = 2.0 * 4096.0 * 4096.0 * 4096.0 /
              ((double)median(dev, (size_t)n) * 1e-9) / 1e12;
  torch_tflops = torch_rate(argc > 2 ? argv[2] : "python3");

  n = run_case(reg,
               SCENE("add",
                     "  - {tensor: a, dtype: float32, shape: [N], init: "
                     "{uniform: [-1, 1]}}\n"
                     "  - {tensor: b, dtype: float32, shape: [N], init: "
                     "{uniform: [-1, 1]}}\n"
                     "  - {tensor: out, dtype: float32, shape: [N], role: "
                     "output}\n",
                     "{N: 1024}", "201"),
               dur, dev, copy, 256);
  if (n <= 0)
    return 1;
  for (i = 0; i < n; i++) {
    over[i] = dur[i] - dev[i];
    over2[i] = dur[i] - dev[i] - copy[i];
  }

  printf("| measure | value | ceiling (same run) | ratio | target |\n");
  printf("|---|---|---|---|---|\n");
  printf("| add, 2^28 float32 (bytes read + written / device_ns) | %.0f GB/s "
         "| D2D cudaMemcpy 1 GiB: %.0f GB/s | %.2f | >= 0.80 |\n",
         add_bw / 1e9, copy_bw / 1e9, copy_bw > 0 ? add_bw / copy_bw : 0);
  if (torch_tflops > 0)
    printf("| matmul float32 4096^3 (device_ns) | %.1f TFLOP/s | torch.matmul "
           "fp32, TF32 off: %.1f TFLOP/s | %.2f | >= 0.50 |\n",
           mm_tflops, torch_tflops, mm_tflops / torch_tflops);
  else
    printf("| matmul float32 4096^3 (device_ns) | %.1f TFLOP/s | torch: not "
           "measured (no python3 with torch and CUDA) | - | >= 0.50 |\n",
           mm_tflops);
  printf("| harness overhead per case: run host time - device_ns (add, "
         "1024 float32) | %.1f us | - | - | <= 20 us |\n",
         (double)median(over, (size_t)n) / 1e3);
  printf("| ... minus copy_ns as well (upload + download) | %.1f us | - | - "
         "| - |\n",
         (double)median(over2, (size_t)n) / 1e3);
  st_registry_free(reg);
  return 0;
}
