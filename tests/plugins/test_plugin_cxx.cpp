// SPDX-License-Identifier: MIT
// C++ test plugins, one source built several ways (-DKIND=...), to prove
// the public headers are usable from C++ and that the loader names the
// usual C++ mistake:
//   CXX_GOOD      platform "cxxplat": an extern "C" descriptor, hooks and
//                 an add written in C++
//   CXX_LOCAL     a descriptor without extern "C": a const object at
//                 namespace scope has internal linkage (_ZL16scenetest_module)
//   CXX_MANGLED   an extern descriptor in a namespace: exported, mangled
#include <scenetest/scenetest.h>

#include <vector>

#define CXX_GOOD 1
#define CXX_LOCAL 2
#define CXX_MANGLED 3

namespace {

st_status cxx_add(st_op_call *c) {
  std::vector<double> tmp(c->tensors[2].numel);
  for (size_t i = 0; i < tmp.size(); i++)
    tmp[i] = st_tensor_get_f64(&c->tensors[0], i) +
             st_tensor_get_f64(&c->tensors[1], i);
  for (size_t i = 0; i < tmp.size(); i++)
    st_tensor_set_f64(&c->tensors[2], i, tmp[i]);
  return ST_OK;
}

const char *const platforms[] = {"cxxplat", nullptr};

st_status cxx_init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "cxxmod", "add", "cxxplat", cxx_add, err);
}

st_status cxx_prepare(st_op_call *call, void **state) {
  (void)call;
  *state = nullptr;
  return ST_OK;
}

void cxx_release(st_op_call *call, void *state) {
  (void)call;
  (void)state;
}

const st_platform_hooks hooks[] = {{sizeof(st_platform_hooks), "cxxplat",
                                    cxx_prepare, cxx_release, nullptr, nullptr,
                                    nullptr}};

} // namespace

ST_PLUGIN_PLATFORMS("cxxplat");

#if KIND == CXX_GOOD
extern "C" __attribute__((visibility("default")))
const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "cxxmod", platforms, cxx_init, hooks, 1};
#elif KIND == CXX_LOCAL
// The mistake as written (g++ would warn that a visibility attribute is
// ignored here, which is the hint); `used` keeps the object in .symtab.
__attribute__((used)) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "cxxmod", platforms, cxx_init, hooks, 1};
#elif KIND == CXX_MANGLED
namespace plugin {
__attribute__((visibility("default"))) extern const st_module scenetest_module;
const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "cxxmod", platforms, cxx_init, hooks, 1};
} // namespace plugin
#endif
