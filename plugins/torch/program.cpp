/* SPDX-License-Identifier: MIT */
/* Golden programs in the torch plugin (docs/torch.md): the op
 * ST_PROGRAM_OP, whose st_op_call.program is TorchScript source compiled
 * with torch::jit::compile (once per distinct source per process; a
 * compile error is kept too) or a list of ATen steps (steps.cpp). A
 * TorchScript function's parameters bind by name to the scene's args; its
 * return (one Tensor, a tuple, or a Dict[str, Tensor]) goes to the
 * outputs. A compile error reports its line and column in the source
 * through st_op_call.program_line/program_column, read off TorchScript's
 * own message ("line N" and the caret line under the source). PyTorch has
 * deprecated TorchScript (maintenance only); torch::jit::compile is still
 * in libtorch 1.13 and 2.x. */
#include "program.h"

#include <torch/cuda.h>
#include <torch/jit.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

namespace st_torch {

namespace {

/* One source, compiled: the unit, or the error and where it is. */
struct Compiled {
  std::shared_ptr<torch::jit::CompilationUnit> unit;
  std::string error;
  int line = 0, column = 0;
};

std::mutex cache_mutex;
/* guarded by: cache_mutex. Never freed: a process compiles few sources,
 * and libtorch's own statics outlive any destructor order we could pick. */
std::map<std::string, std::shared_ptr<Compiled>> *cache;

/* TorchScript's compile message: the problem, then `  File "<string>",
 * line N`, the source lines up to the offending one, and a line of `~`
 * (or `^`) under the spot, ending `<--- HERE`. */
void parse_error(const std::string &what, Compiled *c) {
  std::istringstream in(what);
  std::string line, problem;
  bool in_file = false;
  while (std::getline(in, line)) {
    size_t at = line.find("File \"<string>\", line ");
    if (!in_file && at != std::string::npos) {
      c->line = std::atoi(line.c_str() + at + 22);
      in_file = true;
      continue;
    }
    if (!in_file) {
      if (line.find_first_not_of(" \t") != std::string::npos)
        problem += (problem.empty() ? "" : " ") + line;
      continue;
    }
    if (line.find("<--- HERE") != std::string::npos) {
      size_t col = line.find_first_of("~^");
      if (col != std::string::npos)
        c->column = (int)col + 1;
      break;
    }
  }
  while (!problem.empty() && (problem.back() == ':' || problem.back() == ' '))
    problem.pop_back();
  c->error = problem.empty() ? first_line(what) : problem;
}

std::shared_ptr<Compiled> compile(const std::string &source) {
  std::lock_guard<std::mutex> lock(cache_mutex);
  if (cache == nullptr)
    cache = new std::map<std::string, std::shared_ptr<Compiled>>();
  auto it = cache->find(source);
  if (it != cache->end())
    return it->second;
  auto c = std::make_shared<Compiled>();
  try {
    c->unit = torch::jit::compile(source);
  } catch (const std::exception &e) {
    parse_error(e.what(), c.get());
    c->unit.reset();
  }
  /* Once per distinct source per process: tests count this line. */
  st_log(ST_LOG_DEBUG, "torch: compiled a TorchScript program of %zu bytes%s",
         source.size(), c->unit ? "" : " (compile error)");
  (*cache)[source] = c;
  return c;
}

/* "Tensor", "int", "float", "bool", "str", "List[int]" / "int[]". */
std::string type_str(const c10::Argument &arg) { return arg.type()->str(); }

st_status bind_scalar(st_op_call *call, const c10::Argument &arg,
                      const std::string &type, const st_scalar &s,
                      torch::jit::Stack *stack) {
  auto wrong = [&](const char *what) {
    return st_op_call_fail(call, ST_EBIND,
                           "parameter '%s' is %s; scalar '%s' is %s",
                           arg.name().c_str(), type.c_str(), s.name, what);
  };
  if (type == "List[int]" || type == "int[]") {
    if (s.kind != ST_SCALAR_INTS)
      return wrong("not given as ints: [...]");
    stack->emplace_back(std::vector<int64_t>(s.ints, s.ints + s.n_ints));
    return ST_OK;
  }
  if (type == "str") {
    if (s.kind != ST_SCALAR_STRING)
      return wrong("not given as string: TEXT");
    stack->emplace_back(std::string(s.string));
    return ST_OK;
  }
  if (s.kind != ST_SCALAR_NUMBER)
    return wrong(s.kind == ST_SCALAR_INTS ? "a list of ints" : "a string");
  if (type == "float") {
    stack->emplace_back(s.is_int ? (double)s.i : s.f);
    return ST_OK;
  }
  if (type == "int") {
    if (st_dtype_is_float(s.dtype) || s.dtype == ST_DTYPE_BOOL)
      return wrong("not of an integer dtype");
    stack->emplace_back(s.i);
    return ST_OK;
  }
  if (type == "bool") {
    if (s.dtype != ST_DTYPE_BOOL)
      return wrong("not of dtype bool");
    stack->emplace_back(s.i != 0);
    return ST_OK;
  }
  if (type == "number" || type == "Scalar") {
    if (st_dtype_is_float(s.dtype))
      stack->emplace_back(at::Scalar(s.f));
    else
      stack->emplace_back(at::Scalar((int64_t)s.i));
    return ST_OK;
  }
  return wrong("a scalar");
}

/* One IValue per parameter of fn, by name. */
st_status bind(st_op_call *call, const c10::FunctionSchema &schema,
               const at::Device &device, torch::jit::Stack *stack) {
  for (const c10::Argument &arg : schema.arguments()) {
    const std::string &name = arg.name();
    std::string type = type_str(arg);
    bool done = false;
    for (size_t i = 0; i < call->n_tensors && !done; i++) {
      if (name != call->tensors[i].name)
        continue;
      if (type != "Tensor" && type != "Tensor?" && type != "Optional[Tensor]")
        return st_op_call_fail(call, ST_EBIND,
                               "parameter '%s' is %s; tensor '%s' cannot "
                               "bind to it",
                               name.c_str(), type.c_str(), name.c_str());
      stack->emplace_back(program_arg(call, i, device));
      done = true;
    }
    for (size_t i = 0; i < call->n_scalars && !done; i++) {
      if (name != call->scalars[i].name)
        continue;
      st_status rc = bind_scalar(call, arg, type, call->scalars[i], stack);
      if (rc != ST_OK)
        return rc;
      done = true;
    }
    if (done)
      continue;
    if (!arg.default_value())
      return st_op_call_fail(call, ST_EBIND,
                             "parameter '%s' (%s) of %s is unbound: no arg "
                             "of the scene is named '%s', and it has no "
                             "default",
                             name.c_str(), type.c_str(), schema.name().c_str(),
                             name.c_str());
    stack->push_back(*arg.default_value());
  }
  return ST_OK;
}

st_status store_tuple(st_op_call *call, const std::vector<c10::IValue> &v) {
  std::vector<size_t> outs;
  for (size_t i = 0; i < call->n_tensors; i++)
    if (program_is_output(call, i))
      outs.push_back(i);
  if (v.size() != outs.size())
    return st_op_call_fail(call, ST_EBIND,
                           "the program returns %zu values but the scene "
                           "has %zu outputs and inouts (%s), bound in "
                           "order",
                           v.size(), outs.size(),
                           program_outputs(call).c_str());
  for (size_t j = 0; j < v.size(); j++) {
    if (!v[j].isTensor())
      return st_op_call_fail(call, ST_EBIND,
                             "return %zu of the program is %s, not a Tensor", j,
                             v[j].tagKind().c_str());
    st_status rc = program_store(call, outs[j], v[j].toTensor(),
                                 "return " + std::to_string(j));
    if (rc != ST_OK)
      return rc;
  }
  return ST_OK;
}

st_status store(st_op_call *call, const c10::IValue &r) {
  if (r.isTensor())
    return store_tuple(call, {r});
  if (r.isTuple())
    return store_tuple(call, r.toTupleRef().elements().vec());
  if (r.isGenericDict()) {
    for (const auto &kv : r.toGenericDict()) {
      if (!kv.key().isString() || !kv.value().isTensor())
        return st_op_call_fail(call, ST_EBIND,
                               "the program returns a dict that is not a "
                               "Dict[str, Tensor]");
      std::string key = kv.key().toStringRef();
      long i = program_output(call, key);
      if (i < 0)
        return st_op_call_fail(call, ST_EBIND,
                               "the program returns key '%s', which is not "
                               "an output or inout of the scene (%s)",
                               key.c_str(), program_outputs(call).c_str());
      st_status rc = program_store(call, (size_t)i, kv.value().toTensor(),
                                   "key '" + key + "'");
      if (rc != ST_OK)
        return rc;
    }
    return ST_OK;
  }
  return st_op_call_fail(call, ST_EBIND,
                         "the program returns %s; expected a Tensor, a "
                         "tuple of tensors or a Dict[str, Tensor]",
                         r.tagKind().c_str());
}

/* An error while the function runs. The interpreter's message starts
 * "The following operation failed in the TorchScript interpreter." and
 * ends with the error itself ("RuntimeError: ..."): that last line is the
 * message. A missing CPU kernel for a dtype declines, as for aten:: ops. */
st_status run_error(st_op_call *call, const std::string &what) {
  std::istringstream in(what);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t") != std::string::npos)
      last = line;
  if (what.rfind("The following operation failed", 0) != 0)
    last = first_line(what);
  for (const char *pre : {"RuntimeError: ", "Exception: "})
    if (last.rfind(pre, 0) == 0)
      last = last.substr(std::strlen(pre));
  if (last.find("not implemented for") != std::string::npos)
    return st_op_call_fail(call, ST_ESKIP,
                           "TorchScript: libtorch %s has no CPU kernel for "
                           "this dtype (%s)",
                           TORCH_VERSION, last.c_str());
  return st_op_call_fail(call, ST_EKERNEL, "TorchScript: %s", last.c_str());
}

st_status script_run(st_op_call *call, const st_program &prog,
                     const at::Device &device) {
  std::shared_ptr<Compiled> c = compile(prog.source ? prog.source : "");
  if (!c->unit) {
    call->program_line = c->line;
    call->program_column = c->column;
    return st_op_call_fail(call, ST_EBIND, "TorchScript: %s", c->error.c_str());
  }
  const char *name = prog.function ? prog.function : "golden";
  torch::jit::Function *fn = c->unit->find_function(name);
  if (fn == nullptr) {
    std::string defined;
    for (torch::jit::Function *f : c->unit->get_functions())
      defined += (defined.empty() ? "" : ", ") + f->name();
    return st_op_call_fail(call, ST_EBIND,
                           "function '%s' is not defined by the program "
                           "(it defines: %s)",
                           name, defined.empty() ? "nothing" : defined.c_str());
  }
  if (prog.compile_only)
    return ST_OK;
  torch::jit::Stack stack;
  st_status rc = bind(call, fn->getSchema(), device, &stack);
  if (rc != ST_OK)
    return rc;
  c10::IValue r;
  try {
    c10::InferenceMode guard;
    r = (*fn)(std::move(stack));
  } catch (const std::exception &e) {
    return run_error(call, e.what());
  }
  return guarded(call, "", [&]() -> st_status { return store(call, r); });
}

} // namespace

at::Tensor program_arg(const st_op_call *call, size_t i,
                       const at::Device &device) {
  const st_tensor &t = call->tensors[i];
  at::Tensor w = wrap(t);
  if (t.role != ST_ROLE_INPUT)
    w = w.clone();
  return device.is_cpu() ? w : w.to(device);
}

st_status program_store(st_op_call *call, size_t i, const at::Tensor &ret,
                        const std::string &what) {
  st_tensor &out = call->tensors[i];
  at::Tensor dst = wrap(out);
  if (!ret.sizes().equals(dst.sizes())) {
    std::ostringstream want, have;
    want << dst.sizes();
    have << ret.sizes();
    return st_op_call_fail(call, ST_EBIND,
                           "output '%s' has shape %s but %s of the program "
                           "has shape %s",
                           out.name, want.str().c_str(), what.c_str(),
                           have.str().c_str());
  }
  dst.copy_(ret);
  if (call->written != nullptr)
    call->written[i] = 1;
  return ST_OK;
}

bool program_is_output(const st_op_call *call, size_t i) {
  st_role r = call->tensors[i].role;
  return (r == ST_ROLE_OUTPUT || r == ST_ROLE_INOUT) &&
         !(call->written != nullptr && call->written[i] == 2);
}

std::string program_outputs(const st_op_call *call) {
  std::string s;
  for (size_t i = 0; i < call->n_tensors; i++)
    if (program_is_output(call, i))
      s += (s.empty() ? "" : ", ") + std::string(call->tensors[i].name);
  return s.empty() ? "none" : s;
}

long program_output(const st_op_call *call, const std::string &name) {
  for (size_t i = 0; i < call->n_tensors; i++)
    if (program_is_output(call, i) && name == call->tensors[i].name)
      return (long)i;
  return -1;
}

st_status program_call(st_op_call *call) {
  /* The program fields came after ABI 2's first layout. */
  if (call->size < offsetof(st_op_call, program_step) + sizeof(int) ||
      call->program == nullptr)
    return st_op_call_fail(call, ST_EBIND,
                           "op '%s' runs a golden program and got none "
                           "(write golden: {torchscript: ...} or {steps: "
                           "[...]}, docs/torch.md)",
                           call->op);
  const st_program &prog = *call->program;
  if (call->shard_index != 0)
    return ST_OK;
  at::Device device(at::kCPU);
  if (!prog.compile_only && prog.device != nullptr &&
      std::string(prog.device) == "cuda") {
    if (!torch::cuda::is_available())
      return st_op_call_fail(
          call, ST_ESKIP,
          "golden_device: cuda, but libtorch %s here %s; the program "
          "needs a libtorch with CUDA and a CUDA device",
          TORCH_VERSION,
          at::hasCUDA() ? "sees no CUDA device" : "was built without CUDA");
    device = at::Device(at::kCUDA);
  }
  try {
    if (prog.kind == ST_PROGRAM_STEPS)
      return steps_run(call, prog, device);
    return script_run(call, prog, device);
  } catch (const std::exception &e) {
    return st_op_call_fail(call, ST_EKERNEL, "%s",
                           first_line(e.what()).c_str());
  }
}

} // namespace st_torch
