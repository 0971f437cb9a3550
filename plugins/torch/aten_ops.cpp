/* SPDX-License-Identifier: MIT */
/* Generic ATen ops: `kernel: aten::NAME[.OVERLOAD]` or `golden: aten::...`
 * resolved through ATen's dispatcher by name and called boxed, with the
 * scene's arguments bound to the schema's by name (docs/torch.md#aten-ops,
 * docs/torch.md):
 *   - each input or inout tensor and each scalar binds to the schema
 *     argument of the same name; every one must bind; a scratch tensor
 *     (a kernel's workspace) binds to nothing: a schema has no workspace;
 *   - schema arguments left out take their defaults; an optional one
 *     (`Tensor?`, `int?`, ...) without a default is None; any other left
 *     out is an error;
 *   - `int[]` takes only the `{scalar: N, ints: [...]}` form, `str` only
 *     `{scalar: N, string: S}`; `int` an integer dtype, `bool` a bool,
 *     `float` and `Scalar` any number;
 *   - output tensors (role output, in scene order) bind to the schema's
 *     returns in order, each of the return's dtype and shape; the returned
 *     tensor is copied into the output's buffer.
 * Every binding error is ST_EBIND with the schema in the message. These
 * ops are not sharded: at level 3 shard 0 computes the whole op. */
#include "torch_plugin.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <sstream>
#include <vector>

namespace st_torch {

namespace {

std::string schema_text(const c10::FunctionSchema &schema) {
  std::ostringstream os;
  os << schema;
  return os.str();
}

/* The schema type of an argument as written ("Tensor", "int[]", "str",
 * "Tensor?"), split into its base and whether it is optional. PyTorch 2.x
 * shows SymInt as int here (Argument::type() is the "fake" type), so the
 * names are the same on 1.13 and 2.x. */
void type_of(const c10::Argument &arg, std::string *base, bool *optional) {
  std::string t = arg.type()->str();
  *optional = !t.empty() && t.back() == '?';
  if (*optional)
    t.pop_back();
  /* int[2] and the like: the size is a hint, the list is a list. */
  size_t br = t.find('[');
  if (br != std::string::npos && t.back() == ']')
    t = t.substr(0, br) + "[]";
  *base = t;
}

const char *dtype_name(st_dtype d) {
  const char *n = st_dtype_name(d);
  return n ? n : "?";
}

class Binder {
public:
  Binder(st_op_call *call, const c10::FunctionSchema &schema)
      : call_(call), schema_(schema), text_(schema_text(schema)),
        used_t_(call->n_tensors, false), used_s_(call->n_scalars, false) {}

  const std::string &text() const { return text_; }

  /* Pushes one IValue per schema argument; ST_OK or ST_EBIND. */
  st_status bind(torch::jit::Stack *stack) {
    for (const c10::Argument &arg : schema_.arguments()) {
      st_status rc = bind_one(arg, stack);
      if (rc != ST_OK)
        return rc;
    }
    for (size_t i = 0; i < call_->n_tensors; i++)
      if (!used_t_[i] && binds(call_->tensors[i]))
        return fail("tensor '%s' is not an argument of the schema %s",
                    call_->tensors[i].name);
    for (size_t i = 0; i < call_->n_scalars; i++)
      if (!used_s_[i])
        return fail("scalar '%s' is not an argument of the schema %s",
                    call_->scalars[i].name);
    return ST_OK;
  }

  /* Copies the returns into the output tensors, in order. */
  st_status store(const torch::jit::Stack &stack) {
    size_t r = 0;
    bool inout = false;
    for (size_t i = 0; i < call_->n_tensors; i++) {
      st_tensor &out = call_->tensors[i];
      if (out.role == ST_ROLE_INOUT)
        inout = true;
      if (out.role != ST_ROLE_OUTPUT)
        continue;
      if (r >= stack.size())
        return st_op_call_fail(call_, ST_EBIND,
                               "output '%s' has no return to bind to: the "
                               "schema %s returns %zu value(s)",
                               out.name, text_.c_str(), stack.size());
      const c10::IValue &v = stack[r];
      if (!v.isTensor())
        return st_op_call_fail(call_, ST_EBIND,
                               "output '%s' binds to return %zu of the "
                               "schema %s, which is not a Tensor",
                               out.name, r, text_.c_str());
      const at::Tensor &ret = v.toTensor();
      st_dtype got;
      if (!st_dtype_of(ret.scalar_type(), &got) || got != out.dtype)
        return st_op_call_fail(
            call_, ST_EBIND,
            "output '%s' has dtype %s but return %zu of the schema %s is %s",
            out.name, dtype_name(out.dtype), r, text_.c_str(),
            std::string(c10::toString(ret.scalar_type())).c_str());
      at::Tensor dst = wrap(out);
      if (!ret.sizes().equals(dst.sizes())) {
        std::ostringstream want, have;
        want << dst.sizes();
        have << ret.sizes();
        return st_op_call_fail(call_, ST_EBIND,
                               "output '%s' has shape %s but return %zu of "
                               "the schema %s has shape %s",
                               out.name, want.str().c_str(), r, text_.c_str(),
                               have.str().c_str());
      }
      dst.copy_(ret);
      r++;
    }
    if (r == 0 && !inout)
      return st_op_call_fail(call_, ST_EBIND,
                             "no output tensor (role: output) to bind the "
                             "returns of the schema %s to",
                             text_.c_str());
    return ST_OK;
  }

private:
  /* An input or inout: what binds to a schema argument by name. */
  static bool binds(const st_tensor &t) {
    return t.role != ST_ROLE_OUTPUT && t.role != ST_ROLE_SCRATCH;
  }

  st_status fail(const char *fmt, const char *name) {
    return st_op_call_fail(call_, ST_EBIND, fmt, name, text_.c_str());
  }

  st_status wrong(const c10::Argument &arg, const std::string &type,
                  const std::string &got) {
    return st_op_call_fail(
        call_, ST_EBIND, "argument '%s' of the schema %s is %s; got %s",
        arg.name().c_str(), text_.c_str(), type.c_str(), got.c_str());
  }

  st_status bind_one(const c10::Argument &arg, torch::jit::Stack *stack) {
    std::string type;
    bool optional;
    type_of(arg, &type, &optional);
    const std::string &name = arg.name();
    for (size_t i = 0; i < call_->n_tensors; i++) {
      const st_tensor &t = call_->tensors[i];
      if (!binds(t) || name != t.name)
        continue;
      used_t_[i] = true;
      if (type != "Tensor")
        return wrong(arg, type, std::string("tensor '") + t.name + "'");
      stack->emplace_back(wrap(t));
      return ST_OK;
    }
    for (size_t i = 0; i < call_->n_scalars; i++) {
      const st_scalar &s = call_->scalars[i];
      if (name != s.name)
        continue;
      used_s_[i] = true;
      return bind_scalar(arg, type, s, stack);
    }
    if (arg.default_value()) {
      stack->push_back(*arg.default_value());
      return ST_OK;
    }
    if (optional) {
      stack->emplace_back();
      return ST_OK;
    }
    for (size_t i = 0; i < call_->n_tensors; i++)
      if (call_->tensors[i].role == ST_ROLE_SCRATCH &&
          name == call_->tensors[i].name)
        return st_op_call_fail(call_, ST_EBIND,
                               "required argument '%s' (%s) of the schema %s "
                               "is left out: tensor '%s' is role: scratch, "
                               "which an aten:: op never binds (a schema has "
                               "no workspace argument)",
                               name.c_str(), type.c_str(), text_.c_str(),
                               name.c_str());
    return st_op_call_fail(call_, ST_EBIND,
                           "required argument '%s' (%s) of the schema %s is "
                           "left out; give a %s named '%s'",
                           name.c_str(), type.c_str(), text_.c_str(),
                           type == "Tensor" ? "tensor" : "scalar",
                           name.c_str());
  }

  st_status bind_scalar(const c10::Argument &arg, const std::string &type,
                        const st_scalar &s, torch::jit::Stack *stack) {
    std::string got = std::string("scalar '") + s.name + "'";
    if (type == "int[]") {
      if (s.kind != ST_SCALAR_INTS)
        return st_op_call_fail(call_, ST_EBIND,
                               "argument '%s' of the schema %s is int[]; "
                               "give it as {scalar: %s, ints: [...]}",
                               arg.name().c_str(), text_.c_str(), s.name);
      stack->emplace_back(std::vector<int64_t>(s.ints, s.ints + s.n_ints));
      return ST_OK;
    }
    if (type == "str") {
      if (s.kind != ST_SCALAR_STRING)
        return st_op_call_fail(call_, ST_EBIND,
                               "argument '%s' of the schema %s is str; give "
                               "it as {scalar: %s, string: TEXT}",
                               arg.name().c_str(), text_.c_str(), s.name);
      stack->emplace_back(std::string(s.string));
      return ST_OK;
    }
    if (s.kind == ST_SCALAR_INTS)
      return wrong(arg, type, got + " given as ints");
    if (s.kind == ST_SCALAR_STRING)
      return wrong(arg, type, got + " given as a string");
    std::string dt = got + " of dtype " + dtype_name(s.dtype);
    if (type == "float") {
      if (s.dtype == ST_DTYPE_BOOL)
        return wrong(arg, type, dt);
      stack->emplace_back(s.f);
      return ST_OK;
    }
    if (type == "int") {
      if (st_dtype_is_float(s.dtype) || s.dtype == ST_DTYPE_BOOL)
        return wrong(arg, type + " (an integer dtype)", dt);
      stack->emplace_back(s.i);
      return ST_OK;
    }
    if (type == "bool") {
      if (s.dtype != ST_DTYPE_BOOL)
        return wrong(arg, type + " (dtype bool)", dt);
      stack->emplace_back(s.i != 0);
      return ST_OK;
    }
    if (type == "Scalar") {
      if (s.dtype == ST_DTYPE_BOOL)
        stack->emplace_back(at::Scalar(s.i != 0));
      else if (st_dtype_is_float(s.dtype))
        stack->emplace_back(at::Scalar(s.f));
      else
        stack->emplace_back(at::Scalar((int64_t)s.i));
      return ST_OK;
    }
    return wrong(arg, type + " (a type scene scalars cannot give)", dt);
  }

  st_op_call *call_;
  const c10::FunctionSchema &schema_;
  std::string text_;
  std::vector<bool> used_t_, used_s_;
};

} // namespace

st_status aten_call(st_op_call *call) {
  /* Not sharded: one shard computes the whole op. */
  if (call->shard_index != 0)
    return ST_OK;
  std::string full = call->op, name = full, overload;
  size_t dot = full.find('.', 6);
  if (dot != std::string::npos) {
    name = full.substr(0, dot);
    overload = full.substr(dot + 1);
  }
  c10::optional<c10::OperatorHandle> op;
  try {
    op = c10::Dispatcher::singleton().findSchema({name, overload});
  } catch (...) {
  }
  if (!op)
    return st_op_call_fail(call, ST_EBIND,
                           "unknown ATen operator '%s': libtorch %s has no "
                           "schema %s%s%s (check the name and overload in "
                           "native_functions.yaml)",
                           call->op, TORCH_VERSION, name.c_str(),
                           overload.empty() ? "" : ".", overload.c_str());
  Binder binder(call, op->schema());
  torch::jit::Stack stack;
  st_status rc = binder.bind(&stack);
  if (rc != ST_OK)
    return rc;
  return guarded(call, binder.text(), [&]() -> st_status {
    c10::InferenceMode guard;
    op->callBoxed(&stack);
    return binder.store(stack);
  });
}

} // namespace st_torch
