// SPDX-License-Identifier: MIT
// The public headers compile as C++ (every declaration inside extern "C"),
// and a descriptor defined with extern "C" has the ABI 2 layout: the
// version at offset 0, the size right after it.
#include <scenetest/scenetest.h>
#include <scenetest/testing_hooks.h>

#include <cstddef>
#include <cstdio>
#include <cstring>

static_assert(offsetof(st_module, abi_version) == 0,
              "abi_version stays at offset 0 in every ABI");
static_assert(offsetof(st_module, size) == 4, "size follows the version");
static_assert(offsetof(st_op_call, size) == 0, "st_op_call is size-first");
static_assert(offsetof(st_run_options, size) == 0, "size-first");
static_assert(offsetof(st_load_options, size) == 0, "size-first");
static_assert(offsetof(st_observer, size) == 0, "size-first");
static_assert(ST_ABI_VERSION == 2u, "plugin ABI 2");

namespace {
const char *const platforms[] = {"cxx", nullptr};
st_status init(st_registry *, st_error *) { return ST_OK; }
const st_platform_hooks hooks[] = {{sizeof(st_platform_hooks), "cxx", nullptr,
                                    nullptr, nullptr, nullptr, nullptr}};
} // namespace

extern "C" {
extern const st_module scenetest_module;
const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "cxx", platforms, init, hooks, 1};
}

int main() {
  if (scenetest_module.abi_version != ST_ABI_VERSION ||
      scenetest_module.size != sizeof(st_module) ||
      std::strcmp(scenetest_module.name, "cxx") != 0 ||
      ST_NS_NONE != UINT64_MAX) {
    std::puts("descriptor fields differ");
    return 1;
  }
  std::printf("ABI %u, scenetest %s\n", ST_ABI_VERSION, ST_VERSION_STRING);
  return 0;
}
