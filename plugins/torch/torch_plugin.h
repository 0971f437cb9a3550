/* SPDX-License-Identifier: MIT */
/* Private to the torch plugin: what its two translation units share —
 * wrapping scenetest tensors as ATen tensors without a copy (from_blob),
 * dtype mapping, and turning a C++ exception into an op status (a missing
 * CPU kernel for a dtype declines the case; anything else is an error). */
#ifndef SCENETEST_PLUGIN_TORCH_H
#define SCENETEST_PLUGIN_TORCH_H

#include <ATen/ATen.h>
#include <torch/version.h>

#include <stdexcept>
#include <string>

#include <scenetest/scenetest.h>

namespace st_torch {

/* The backend (and platform) name: kernels on `--platform torch`, golden
 * with `--golden-platform torch`. */
constexpr const char *kBackend = "torch";

/* Thrown by aten_dtype for a dtype this libtorch has no ScalarType for
 * (docs/torch.md#dtypes); guarded() turns it into ST_ESKIP, so the case
 * says "golden declined" (or the kernel declines) instead of failing. */
struct no_aten_dtype : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/* true when this libtorch has a ScalarType for dtype. */
bool has_aten_dtype(st_dtype dtype);
/* The ATen scalar type of a scenetest dtype; throws no_aten_dtype when
 * this libtorch has none (FP8 before PyTorch 2.1, uint16/32/64 before
 * 2.3). */
at::ScalarType aten_dtype(st_dtype dtype);
/* The scenetest dtype of an ATen scalar type; returns false for a type
 * scenetest has no dtype for. */
bool st_dtype_of(at::ScalarType type, st_dtype *out /* OUT */);

/* The whole tensor t as an ATen tensor over its own buffer (no copy). */
at::Tensor wrap(const st_tensor &t /* IN */);
/* Elements [begin, end) of t as a 1-D ATen tensor over its buffer. */
at::Tensor wrap_range(const st_tensor &t /* IN */, size_t begin, size_t end);
/* Rows [r0, r1) (dimension 0) of t over its buffer. */
at::Tensor wrap_rows(const st_tensor &t /* IN */, size_t r0, size_t r1);

/* The first line of a c10::Error's message, without its backtrace. */
std::string first_line(const std::string &what /* IN */);

/* Calls body(); maps an exception to a status through st_op_call_fail:
 * an ATen "not implemented for 'DTYPE'" (libtorch has no CPU kernel for
 * the dtype) is ST_ESKIP — the golden declines, the kernel declines —
 * and anything else ST_EKERNEL prefixed with context (may be empty). */
template <class F>
st_status guarded(st_op_call *call /* IN/OUT */, const std::string &context,
                  F body) {
  const std::string pre = context.empty() ? "" : context + ": ";
  try {
    return body();
  } catch (const no_aten_dtype &e) {
    return st_op_call_fail(call, ST_ESKIP, "%s%s", pre.c_str(), e.what());
  } catch (const c10::Error &e) {
    std::string m = first_line(e.what_without_backtrace());
    if (m.find("not implemented for") != std::string::npos)
      return st_op_call_fail(call, ST_ESKIP,
                             "%slibtorch %s has no CPU kernel for this "
                             "dtype (%s)",
                             pre.c_str(), TORCH_VERSION, m.c_str());
    return st_op_call_fail(call, ST_EKERNEL, "%s%s", pre.c_str(), m.c_str());
  } catch (const std::exception &e) {
    return st_op_call_fail(call, ST_EKERNEL, "%s%s", pre.c_str(),
                           first_line(e.what()).c_str());
  } catch (...) {
    return st_op_call_fail(call, ST_EKERNEL, "%sunknown C++ exception",
                           pre.c_str());
  }
}

/* The generic ATen op: call->op is "aten::NAME[.OVERLOAD]", resolved
 * through the dispatcher and called boxed (aten_ops.cpp). */
st_status aten_call(st_op_call *call /* IN/OUT */);

} // namespace st_torch

#endif
