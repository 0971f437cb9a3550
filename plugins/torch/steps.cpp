/* SPDX-License-Identifier: MIT */
/* `golden: {steps: [...], returns: {...}}` in the torch plugin
 * (docs/torch.md): each step one ATen operator found through the
 * dispatcher (as `aten::` ops are, aten_ops.cpp) and called boxed, its
 * schema's arguments bound by name to scene args, earlier steps' values or
 * literals; its returns named by `out`. Every binding error names the
 * step's index and the schema, and sets st_op_call.program_step so that
 * the harness can place it at the step's line. With compile_only (`scenetest
 * check`) the steps are bound against the names only, and nothing runs. */
#include "program.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <map>
#include <sstream>
#include <vector>

namespace st_torch {

namespace {

/* What a name stands for while the steps run. */
struct Value {
  enum Kind { kTensor, kScalar, kResult } kind;
  c10::IValue iv;               /* kTensor, kResult (none when checking) */
  const st_scalar *s = nullptr; /* kScalar */
};

std::string schema_text(const c10::FunctionSchema &schema) {
  std::ostringstream os;
  os << schema;
  return os.str();
}

/* The argument's type as written, "int[2]" as "int[]", without "?". */
std::string base_type(const c10::Argument &arg, bool *optional) {
  std::string t = arg.type()->str();
  *optional = !t.empty() && t.back() == '?';
  if (*optional)
    t.pop_back();
  size_t br = t.find('[');
  if (br != std::string::npos && t.back() == ']')
    t = t.substr(0, br) + "[]";
  return t;
}

class Steps {
public:
  Steps(st_op_call *call, const st_program &prog, const at::Device &device)
      : call_(call), prog_(prog), device_(device) {}

  st_status run() {
    for (size_t i = 0; i < call_->n_tensors; i++) {
      Value v{Value::kTensor, {}};
      if (!prog_.compile_only)
        v.iv = program_arg(call_, i, device_);
      env_[call_->tensors[i].name] = v;
    }
    for (size_t i = 0; i < call_->n_scalars; i++) {
      Value v{Value::kScalar, {}};
      v.s = &call_->scalars[i];
      env_[call_->scalars[i].name] = v;
    }
    for (size_t i = 0; i < prog_.n_steps; i++) {
      st_status rc = step(i, prog_.steps[i]);
      if (rc != ST_OK) {
        call_->program_step = (int)i + 1;
        return rc;
      }
    }
    return returns();
  }

private:
  st_status fail(size_t i, const char *fmt, const std::string &a,
                 const std::string &b = "", const std::string &c = "") {
    char msg[ST_OP_MESSAGE_MAX];
    snprintf(msg, sizeof msg, fmt, a.c_str(), b.c_str(), c.c_str());
    return st_op_call_fail(call_, ST_EBIND, "steps[%zu]: %s", i, msg);
  }

  st_status step(size_t i, const st_program_step &st) {
    std::string full = st.op, name = full, overload;
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
      return fail(i,
                  "unknown ATen operator '%s': libtorch %s has no such "
                  "schema",
                  full, TORCH_VERSION);
    const c10::FunctionSchema &schema = op->schema();
    std::string text = schema_text(schema);
    for (size_t a = 0; a < st.n_args; a++) {
      bool known = false;
      for (const c10::Argument &arg : schema.arguments())
        known = known || arg.name() == st.args[a].name;
      if (!known)
        return fail(i, "'%s' is not an argument of the schema %s",
                    st.args[a].name, text);
    }
    torch::jit::Stack stack;
    for (const c10::Argument &arg : schema.arguments()) {
      const st_program_arg *given = nullptr;
      for (size_t a = 0; a < st.n_args && !given; a++)
        if (arg.name() == st.args[a].name)
          given = &st.args[a];
      st_status rc = given ? bind(i, arg, text, given->value, &stack)
                           : fill(i, arg, text, &stack);
      if (rc != ST_OK)
        return rc;
    }
    if (st.n_outs > schema.returns().size())
      return fail(i, "out names %s values but the schema %s returns %s",
                  std::to_string(st.n_outs), text,
                  std::to_string(schema.returns().size()));
    if (!prog_.compile_only) {
      st_status rc = guarded(call_, "steps[" + std::to_string(i) + "] " + text,
                             [&]() -> st_status {
                               c10::InferenceMode guard;
                               op->callBoxed(&stack);
                               return ST_OK;
                             });
      if (rc != ST_OK)
        return rc;
    }
    for (size_t o = 0; o < st.n_outs; o++) {
      Value v{Value::kResult, {}};
      if (!prog_.compile_only)
        v.iv = stack[o];
      env_[st.outs[o]] = v;
    }
    return ST_OK;
  }

  /* A schema argument the step does not give. */
  st_status fill(size_t i, const c10::Argument &arg, const std::string &text,
                 torch::jit::Stack *stack) {
    bool optional;
    std::string type = base_type(arg, &optional);
    if (arg.default_value())
      stack->push_back(*arg.default_value());
    else if (optional)
      stack->emplace_back();
    else
      return fail(i,
                  "required argument '%s' (%s) of the schema %s is not "
                  "given",
                  arg.name(), type, text);
    return ST_OK;
  }

  st_status bind(size_t i, const c10::Argument &arg, const std::string &text,
                 const st_program_value &v, torch::jit::Stack *stack) {
    bool optional;
    std::string type = base_type(arg, &optional);
    auto bad = [&](const std::string &got) {
      char msg[ST_OP_MESSAGE_MAX];
      snprintf(msg, sizeof msg, "argument '%s' of the schema %s is %s; got %s",
               arg.name().c_str(), text.c_str(), type.c_str(), got.c_str());
      return st_op_call_fail(call_, ST_EBIND, "steps[%zu]: %s", i, msg);
    };
    bool number = type == "Scalar" || type == "float";
    switch (v.kind) {
    case ST_PROGRAM_INT:
      if (type == "int" || type == "SymInt")
        stack->emplace_back(v.i);
      else if (number)
        stack->emplace_back(type == "float" ? c10::IValue((double)v.i)
                                            : c10::IValue(at::Scalar(v.i)));
      else
        return bad("the integer " + std::to_string(v.i));
      return ST_OK;
    case ST_PROGRAM_FLOAT:
      if (!number)
        return bad("the number " + std::to_string(v.f));
      stack->emplace_back(type == "float" ? c10::IValue(v.f)
                                          : c10::IValue(at::Scalar(v.f)));
      return ST_OK;
    case ST_PROGRAM_BOOL:
      if (type == "bool")
        stack->emplace_back(v.i != 0);
      else if (type == "Scalar")
        stack->emplace_back(at::Scalar(v.i != 0));
      else
        return bad(v.i ? "true" : "false");
      return ST_OK;
    case ST_PROGRAM_INTS:
      if (type != "int[]" && type != "SymInt[]")
        return bad("a list of integers");
      stack->emplace_back(std::vector<int64_t>(v.ints, v.ints + v.n_ints));
      return ST_OK;
    case ST_PROGRAM_STRING:
      if (type != "str")
        return bad(std::string("the string '") + v.text + "'");
      stack->emplace_back(std::string(v.text));
      return ST_OK;
    case ST_PROGRAM_NAME:
      break;
    }
    auto it = env_.find(v.text);
    if (it == env_.end()) {
      if (type == "str") {
        stack->emplace_back(std::string(v.text));
        return ST_OK;
      }
      return fail(i,
                  "argument '%s' names '%s', which is neither an arg of "
                  "the scene nor the out of an earlier step",
                  arg.name(), v.text);
    }
    const Value &val = it->second;
    if (val.kind == Value::kScalar)
      return bind_scalar(arg, type, *val.s, bad, stack);
    if (val.kind == Value::kTensor && type != "Tensor")
      return bad(std::string("tensor '") + v.text + "'");
    if (prog_.compile_only)
      stack->emplace_back();
    else
      stack->push_back(val.iv);
    return ST_OK;
  }

  template <class Bad>
  st_status bind_scalar(const c10::Argument &arg, const std::string &type,
                        const st_scalar &s, Bad bad, torch::jit::Stack *stack) {
    (void)arg;
    std::string got = std::string("scalar '") + s.name + "'";
    if (type == "int[]" || type == "SymInt[]") {
      if (s.kind != ST_SCALAR_INTS)
        return bad(got + " (give it as ints: [...])");
      stack->emplace_back(std::vector<int64_t>(s.ints, s.ints + s.n_ints));
      return ST_OK;
    }
    if (type == "str") {
      if (s.kind != ST_SCALAR_STRING)
        return bad(got + " (give it as string: TEXT)");
      stack->emplace_back(std::string(s.string));
      return ST_OK;
    }
    if (s.kind != ST_SCALAR_NUMBER)
      return bad(got);
    if (prog_.compile_only) {
      /* The dtype of a scalar may be a param: known per case only. */
      stack->emplace_back();
      return ST_OK;
    }
    bool is_float = st_dtype_is_float(s.dtype);
    if (type == "float" && s.dtype != ST_DTYPE_BOOL)
      stack->emplace_back(is_float ? s.f : (double)s.i);
    else if ((type == "int" || type == "SymInt") && !is_float &&
             s.dtype != ST_DTYPE_BOOL)
      stack->emplace_back(s.i);
    else if (type == "bool" && s.dtype == ST_DTYPE_BOOL)
      stack->emplace_back(s.i != 0);
    else if (type == "Scalar")
      stack->emplace_back(s.dtype == ST_DTYPE_BOOL ? at::Scalar(s.i != 0)
                          : is_float               ? at::Scalar(s.f)
                                                   : at::Scalar(s.i));
    else
      return bad(got + " of dtype " + st_dtype_name(s.dtype));
    return ST_OK;
  }

  /* returns: (or each output's own name) -> the outputs. */
  st_status returns() {
    if (prog_.has_returns) {
      for (size_t r = 0; r < prog_.n_returns; r++) {
        const st_program_return &ret = prog_.returns[r];
        long o = program_output(call_, ret.output);
        if (o < 0)
          return st_op_call_fail(call_, ST_EBIND,
                                 "returns: '%s' is not an output or inout "
                                 "of the scene (%s)",
                                 ret.output, program_outputs(call_).c_str());
        st_status rc = store(ret.value, (size_t)o, "returns");
        if (rc != ST_OK)
          return rc;
      }
      return ST_OK;
    }
    for (size_t i = 0; i < call_->n_tensors; i++) {
      if (!program_is_output(call_, i))
        continue;
      st_status rc = store(call_->tensors[i].name, i, "output");
      if (rc != ST_OK)
        return rc;
    }
    return ST_OK;
  }

  st_status store(const char *value, size_t o, const char *where) {
    auto it = env_.find(value);
    const char *out = call_->tensors[o].name;
    if (it == env_.end() || it->second.kind != Value::kResult)
      return st_op_call_fail(call_, ST_EBIND,
                             "%s: output '%s' takes the value '%s', which no "
                             "step's out names%s",
                             where, out, value,
                             prog_.has_returns ? ""
                                               : " (name a step's out like "
                                                 "the output, or give "
                                                 "returns:)");
    if (prog_.compile_only)
      return ST_OK;
    if (!it->second.iv.isTensor())
      return st_op_call_fail(call_, ST_EBIND,
                             "%s: value '%s' for output '%s' is %s, not a "
                             "Tensor",
                             where, value, out,
                             it->second.iv.tagKind().c_str());
    return guarded(call_, "", [&]() -> st_status {
      return program_store(call_, o, it->second.iv.toTensor(),
                           std::string("value '") + value + "'");
    });
  }

  st_op_call *call_;
  const st_program &prog_;
  at::Device device_;
  std::map<std::string, Value> env_;
};

} // namespace

st_status steps_run(st_op_call *call, const st_program &prog,
                    const at::Device &device) {
  Steps steps(call, prog, device);
  return steps.run();
}

} // namespace st_torch
