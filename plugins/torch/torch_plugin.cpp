/* SPDX-License-Identifier: MIT */
/* The torch plugin: the descriptor, and the built-in ops of
 * docs/scene-format.md#ops on the backend `torch`, computed by ATen on the CPU.
 * One registration serves both uses: `--platform torch` (the kernel) and
 * `--golden-platform torch` (the golden), since the registry keys
 * implementations by (op, backend). `aten::*` names go to the generic
 * dispatcher op of aten_ops.cpp through a prefix registration. Tensors are
 * wrapped with at::from_blob (no copy); each op computes only its shard (level
 * 3) and writes through ATen's out= variants or copy_ into the harness's
 * buffers. Where libtorch has no CPU kernel for a dtype (libtorch 1.13: float16
 * matmul and softmax, ...) the op declines (ST_ESKIP), so a torch golden says
 * "golden declined" rather than failing. Only stable ATen API is used, so it
 * builds against libtorch 1.13 (Debian 12) and PyTorch 2.x. */
#include "torch_plugin.h"
#include "program.h"

#include <ATen/Parallel.h>
#include <torch/version.h>

#include <cstring>
#include <unistd.h>
#include <vector>

ST_PLUGIN_PLATFORMS("torch");

namespace st_torch {

/* The new dtypes of docs/scene-format.md#dtypes exist in ATen from
 * PyTorch 2.1 (Float8_e4m3fn, Float8_e5m2) and 2.3 (UInt16, UInt32,
 * UInt64); an older libtorch (Debian's 1.13) has none of them. */
#define ST_TORCH_AT_LEAST(major, minor)                                        \
  (TORCH_VERSION_MAJOR > (major) ||                                            \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

static at::ScalarType aten_dtype_classic(st_dtype dtype);

/* false when this libtorch has no ScalarType for dtype. */
static bool map_dtype(st_dtype dtype, at::ScalarType *out) {
  switch (dtype) {
#if ST_TORCH_AT_LEAST(2, 1)
  case ST_DTYPE_FLOAT8_E4M3FN:
    *out = at::kFloat8_e4m3fn;
    return true;
  case ST_DTYPE_FLOAT8_E5M2:
    *out = at::kFloat8_e5m2;
    return true;
#else
  case ST_DTYPE_FLOAT8_E4M3FN:
  case ST_DTYPE_FLOAT8_E5M2:
    return false;
#endif
#if ST_TORCH_AT_LEAST(2, 3)
  case ST_DTYPE_UINT16:
    *out = at::kUInt16;
    return true;
  case ST_DTYPE_UINT32:
    *out = at::kUInt32;
    return true;
  case ST_DTYPE_UINT64:
    *out = at::kUInt64;
    return true;
#else
  case ST_DTYPE_UINT16:
  case ST_DTYPE_UINT32:
  case ST_DTYPE_UINT64:
    return false;
#endif
  default:
    *out = aten_dtype_classic(dtype);
    return true;
  }
}

bool has_aten_dtype(st_dtype dtype) {
  at::ScalarType t;
  return map_dtype(dtype, &t);
}

at::ScalarType aten_dtype(st_dtype dtype) {
  at::ScalarType t;
  if (!map_dtype(dtype, &t)) {
    const char *name = st_dtype_name(dtype);
    throw no_aten_dtype(std::string("libtorch ") + TORCH_VERSION +
                        " has no dtype " + (name ? name : "?") +
                        " (float8 needs PyTorch 2.1, uint16/32/64 2.3)");
  }
  return t;
}

/* The dtypes every libtorch has. */
static at::ScalarType aten_dtype_classic(st_dtype dtype) {
  switch (dtype) {
  case ST_DTYPE_FLOAT32:
    return at::kFloat;
  case ST_DTYPE_FLOAT64:
    return at::kDouble;
  case ST_DTYPE_FLOAT16:
    return at::kHalf;
  case ST_DTYPE_BFLOAT16:
    return at::kBFloat16;
  case ST_DTYPE_INT8:
    return at::kChar;
  case ST_DTYPE_INT16:
    return at::kShort;
  case ST_DTYPE_INT32:
    return at::kInt;
  case ST_DTYPE_INT64:
    return at::kLong;
  case ST_DTYPE_UINT8:
    return at::kByte;
  case ST_DTYPE_BOOL:
  case ST_DTYPE_UINT16:
  case ST_DTYPE_UINT32:
  case ST_DTYPE_UINT64:
  case ST_DTYPE_FLOAT8_E4M3FN:
  case ST_DTYPE_FLOAT8_E5M2:
  case ST_DTYPE_COUNT:
    break;
  }
  return at::kBool;
}

bool st_dtype_of(at::ScalarType type, st_dtype *out) {
  for (int d = 0; d < (int)ST_DTYPE_COUNT; d++)
    if (has_aten_dtype((st_dtype)d) && aten_dtype((st_dtype)d) == type) {
      *out = (st_dtype)d;
      return true;
    }
  return false;
}

/* from_blob wants a pointer even for an empty tensor. */
static void *data_or_dummy(void *data) {
  static double dummy;
  return data ? data : &dummy;
}

static at::TensorOptions options(const st_tensor &t) {
  return at::TensorOptions().dtype(aten_dtype(t.dtype)).device(at::kCPU);
}

at::Tensor wrap(const st_tensor &t) {
  std::vector<int64_t> sizes(t.shape, t.shape + t.ndim);
  return at::from_blob(data_or_dummy(t.data), sizes, options(t));
}

at::Tensor wrap_range(const st_tensor &t, size_t begin, size_t end) {
  size_t size = st_dtype_size(t.dtype);
  char *base = (char *)data_or_dummy(t.data);
  return at::from_blob(t.numel ? base + begin * size : base,
                       {(int64_t)(end - begin)}, options(t));
}

at::Tensor wrap_rows(const st_tensor &t, size_t r0, size_t r1) {
  std::vector<int64_t> sizes(t.shape, t.shape + t.ndim);
  size_t row = t.shape[0] ? t.numel / (size_t)t.shape[0] : 0;
  size_t size = st_dtype_size(t.dtype);
  char *base = (char *)data_or_dummy(t.data);
  sizes[0] = (int64_t)(r1 - r0);
  return at::from_blob(row ? base + r0 * row * size : base, sizes, options(t));
}

std::string first_line(const std::string &what) {
  size_t nl = what.find('\n');
  return nl == std::string::npos ? what : what.substr(0, nl);
}

} // namespace st_torch

using namespace st_torch;

namespace {

/* The element range of the call's shard over n output elements. */
void shard(const st_op_call *call, size_t n, size_t *begin, size_t *end) {
  st_shard_range(n, call->shard_index, call->shard_count, begin, end);
}

/* The scalar of scale/axpy as torch takes it: an integer tensor gets an
 * integer scalar (a float one truncated toward zero, as the built-in
 * backends do: st_op_check made sure it fits int64), so the result keeps
 * the tensor's dtype instead of promoting to float. */
at::Scalar op_scalar(const st_op_call *call) {
  const st_scalar &s = call->scalars[0];
  if (st_dtype_is_float(call->tensors[0].dtype))
    return at::Scalar(s.f);
  return at::Scalar((int64_t)(s.is_int ? s.i : (int64_t)s.f));
}

/* Mixed precision (docs/scene-format.md#ops): an output of another float
 * dtype than the inputs'. The reference computes in double from the
 * inputs' exact values and rounds once to the output; torch would compute
 * in the inputs' dtype and round again when storing, so such a call
 * computes in double here (widen), and the store is the one rounding. */
bool mixed(const st_op_call *call) {
  for (size_t i = 1; i < call->n_tensors; i++)
    if (call->tensors[i].dtype != call->tensors[0].dtype)
      return true;
  return false;
}

at::Tensor widen(const at::Tensor &x, bool mix) {
  return mix ? x.to(at::kDouble) : x;
}

enum class Ew { copy, add, sub, mul, scale, axpy, relu };

st_status elementwise(st_op_call *call, Ew kind) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  return guarded(call, "", [&]() -> st_status {
    const st_tensor *t = call->tensors;
    bool binary = kind == Ew::add || kind == Ew::sub || kind == Ew::mul;
    const st_tensor &out = binary ? t[2] : t[1];
    size_t b, e;
    shard(call, out.numel, &b, &e);
    const bool mix = mixed(call);
    at::Tensor x = widen(wrap_range(t[0], b, e), mix);
    at::Tensor y = wrap_range(out, b, e);
    switch (kind) {
    case Ew::copy:
      y.copy_(x);
      break;
    case Ew::add:
      at::add_out(y, x, widen(wrap_range(t[1], b, e), mix));
      break;
    case Ew::sub:
      at::sub_out(y, x, widen(wrap_range(t[1], b, e), mix));
      break;
    case Ew::mul:
      at::mul_out(y, x, widen(wrap_range(t[1], b, e), mix));
      break;
    case Ew::scale:
      /* A 0-dim tensor takes part in type promotion as a scalar does: the
       * result keeps x's dtype. */
      at::mul_out(y, x,
                  at::scalar_tensor(op_scalar(call),
                                    st_dtype_is_float(t[0].dtype) ? at::kDouble
                                                                  : at::kLong));
      break;
    case Ew::axpy:
      y.add_(x, op_scalar(call));
      break;
    case Ew::relu:
      y.copy_(at::relu(x));
      break;
    }
    return ST_OK;
  });
}

st_status t_copy(st_op_call *c) { return elementwise(c, Ew::copy); }
st_status t_add(st_op_call *c) { return elementwise(c, Ew::add); }
st_status t_sub(st_op_call *c) { return elementwise(c, Ew::sub); }
st_status t_mul(st_op_call *c) { return elementwise(c, Ew::mul); }
st_status t_scale(st_op_call *c) { return elementwise(c, Ew::scale); }
st_status t_axpy(st_op_call *c) { return elementwise(c, Ew::axpy); }
st_status t_relu(st_op_call *c) { return elementwise(c, Ew::relu); }

/* Row-sharded ops: the shard's rows of the output (dimension 0). */
st_status t_matmul(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  return guarded(call, "", [&]() -> st_status {
    const st_tensor *t = call->tensors;
    size_t r0, r1;
    shard(call, (size_t)t[2].shape[0], &r0, &r1);
    at::Tensor c = wrap_rows(t[2], r0, r1);
    if (mixed(call))
      c.copy_(at::matmul(widen(wrap_rows(t[0], r0, r1), true),
                         widen(wrap(t[1]), true)));
    else
      at::matmul_out(c, wrap_rows(t[0], r0, r1), wrap(t[1]));
    return ST_OK;
  });
}

st_status t_softmax(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  return guarded(call, "", [&]() -> st_status {
    const st_tensor *t = call->tensors;
    size_t r0, r1;
    shard(call, (size_t)t[1].shape[0], &r0, &r1);
    wrap_rows(t[1], r0, r1)
        .copy_(at::softmax(widen(wrap_rows(t[0], r0, r1), mixed(call)), 1));
    return ST_OK;
  });
}

st_status t_transpose(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  return guarded(call, "", [&]() -> st_status {
    const st_tensor *t = call->tensors;
    size_t r0, r1;
    shard(call, (size_t)t[1].shape[0], &r0, &r1);
    /* Output rows [r0, r1) are input columns [r0, r1). */
    wrap_rows(t[1], r0, r1)
        .copy_(wrap(t[0]).narrow(1, (int64_t)r0, (int64_t)(r1 - r0)).t());
    return ST_OK;
  });
}

/* The block size of the harness's reduce_sum (ST__REDUCE_BLOCK in
 * harness/ops/ops_impl.h): a level-3 shard is a run of whole blocks, and
 * its partial sum is what the harness combines in block order. */
constexpr size_t kReduceBlock = 4096;

st_status t_reduce_sum(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  return guarded(call, "", [&]() -> st_status {
    const st_tensor *t = call->tensors;
    size_t n = t[0].numel;
    size_t blocks = n / kReduceBlock + (n % kReduceBlock != 0);
    size_t kb0, kb1;
    shard(call, blocks, &kb0, &kb1);
    size_t b = kb0 * kReduceBlock, e = kb1 * kReduceBlock;
    if (e > n)
      e = n;
    if (b > e)
      b = e;
    /* torch sums integers in int64 (then wraps storing into the output's
     * dtype) and floats in its own (cascade) order, accumulating halves in
     * float. */
    at::Tensor s = at::sum(widen(wrap_range(t[0], b, e), mixed(call)));
    wrap(t[1]).copy_(s.reshape(wrap(t[1]).sizes()));
    return ST_OK;
  });
}

struct Entry {
  const char *op;
  st_op_fn fn;
};

const Entry kOps[] = {
    {"copy", t_copy},
    {"add", t_add},
    {"sub", t_sub},
    {"mul", t_mul},
    {"scale", t_scale},
    {"axpy", t_axpy},
    {"relu", t_relu},
    {"matmul", t_matmul},
    {"softmax", t_softmax},
    {"reduce_sum", t_reduce_sum},
    {"transpose", t_transpose},
    /* Every ATen operator by name, through the dispatcher. */
    {"aten::*", aten_call},
    /* Golden programs: TorchScript or ATen steps (program.cpp). */
    {ST_PROGRAM_OP, program_call},
};

/* ATen's intra-op pool (OpenMP) started, all of its threads: a thread a
 * kernel leaves running is its case's error, and the pool is the
 * platform's, so it must exist before the first kernel call
 * (docs/plugins.md#threads). The work runs inside libtorch: at::parallel_for
 * is inline, and in this file, built without -fopenmp, its parallel region
 * would run serially and start nothing (seen with PyTorch 2.11 on 16
 * cores). A fill of 2^16 elements a thread is above ATen's grain, so every
 * thread of the pool takes part. Once per process and thread: libgomp
 * keeps a pool per thread that starts a parallel region, and none survives
 * a fork. */
void start_pool() {
  static thread_local pid_t started = 0;
  if (started == getpid())
    return;
  started = getpid();
  const int64_t n = at::get_num_threads();
  if (n > 1)
    (void)at::ones({n << 16}, at::kFloat).sum();
}

st_status torch_init(st_registry *reg, st_error *err) {
  for (const Entry &e : kOps) {
    st_status rc =
        st_registry_register(reg, "torch", e.op, kBackend, e.fn, err);
    if (rc != ST_OK)
      return rc;
  }
  return ST_OK;
}

/* The platform's prepare hook: the pool started where the kernel will
 * run (start_pool: once per process and thread), before the kernel's
 * first call. Not at init: a process that loads the plugin only for a
 * torch golden, or to probe it, has no kernel whose threads are counted,
 * and would start 2^16 floats a thread of work for nothing. */
st_status torch_prepare(st_op_call *, void **state) {
  *state = nullptr;
  start_pool();
  return ST_OK;
}

const char *const kPlatforms[] = {kBackend, nullptr};

const st_platform_hooks kHooks[] = {
    {sizeof(st_platform_hooks), kBackend, torch_prepare, nullptr, nullptr,
     nullptr, nullptr},
};

} // namespace

/* The one symbol scenetest looks for. In C++ it needs extern "C" (no name
 * mangling) and, being const, extern linkage: extern "C" gives both. */
extern "C" __attribute__((visibility("default")))
const st_module scenetest_module = {ST_ABI_VERSION,
                                    sizeof(st_module),
                                    "torch",
                                    kPlatforms,
                                    torch_init,
                                    kHooks,
                                    1};
