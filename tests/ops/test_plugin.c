/* SPDX-License-Identifier: MIT */
/* Plugins: eager and lazy loading, the ELF note read without dlopen, the
 * refusals (missing file, no descriptor, ABI mismatch, no note, a note that
 * disagrees with the descriptor), an init that fails being repaired, and
 * the example plugin. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#include "base/loadwatch.h"
#include "ops/registry_internal.h"

static int is_loaded_cb(const char *path, void *data) {
  const char **want = data;
  if (strstr(path, *want) != NULL) {
    *want = NULL;
    return 1;
  }
  return 0;
}

static int is_loaded(const char *needle) {
  const char *want = needle;
  st__loadwatch_each(is_loaded_cb, &want);
  return want == NULL;
}

static st_registry *builtin(void) {
  st_registry *reg = NULL;
  assert_int_equal(st_registry_new_builtin(&reg), ST_OK);
  st_log_set_level(ST_LOG_NULL);
  return reg;
}

static void st_plugin_read_platforms__reads_note(void **state) {
  char *decl = NULL;
  st_error err;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_plugin_read_platforms(ST_PLUGIN_EXAMPLE, &decl, &err),
                   ST_OK);
  assert_string_equal(decl, "example");
  free(decl);
  st_error_clear(&err);
  assert_int_equal(st_plugin_read_platforms(ST_PLUGIN_NONOTE, &decl, &err),
                   ST_ENOTFOUND);
  assert_null(decl);
}

static void st_plugin_load__lazy_does_not_dlopen(void **state) {
  st_registry *reg = builtin();
  st_error err;
  st_op_fn fn = NULL;
  char names[256];
  (void)state;
  st_error_clear(&err);
  assert_int_equal(is_loaded("st_plugin_good.so"), 0);
  assert_int_equal(st_plugin_load(reg, "lazy:" ST_PLUGIN_GOOD, &err), ST_OK);
  /* Declared, not loaded. */
  assert_int_equal(is_loaded("st_plugin_good.so"), 0);
  assert_int_equal(st_registry_has_platform(reg, "lazyplat"), 1);
  st_registry_platforms(reg, names, sizeof names);
  assert_string_equal(names, "cpu, lazyplat, threads");
  /* A hit elsewhere does not load it. */
  assert_int_equal(
      st_registry_lookup(reg, "add", "cpu", ST_LOOKUP_KERNEL, &fn, &err),
      ST_OK);
  assert_int_equal(is_loaded("st_plugin_good.so"), 0);
  /* A miss on its platform does. */
  assert_int_equal(
      st_registry_lookup(reg, "add", "lazyplat", ST_LOOKUP_KERNEL, &fn, &err),
      ST_OK);
  assert_non_null(fn);
  assert_int_equal(is_loaded("st_plugin_good.so"), 1);
  assert_int_equal(st__registry_repair_count(reg, "lazyplat"), 1);
  st_registry_free(reg);
}

static void st_plugin_load__refusals_name_path_and_reason(void **state) {
  st_registry *reg = builtin();
  st_error err;
  char want[2048];
  (void)state;

  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, "/nonexistent/p.so", &err), ST_EPLUGIN);
  assert_string_equal(err.message,
                      "plugin '/nonexistent/p.so': No such file or directory");

  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, ST_PLUGIN_NODESC, &err), ST_EPLUGIN);
  snprintf(want, sizeof want, "plugin '%s': no 'scenetest_module' descriptor",
           ST_PLUGIN_NODESC);
  assert_string_equal(err.message, want);

  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, ST_PLUGIN_BADABI, &err), ST_EPLUGIN);
  snprintf(want, sizeof want,
           "plugin '%s': ABI version 99, this scenetest has ABI version 2",
           ST_PLUGIN_BADABI);
  assert_string_equal(err.message, want);

  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, "lazy:" ST_PLUGIN_NONOTE, &err),
                   ST_EPLUGIN);
  snprintf(want, sizeof want,
           "plugin '%s': no platform declaration (an ELF note made by "
           "ST_PLUGIN_PLATFORMS)",
           ST_PLUGIN_NONOTE);
  assert_string_equal(err.message, want);

  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, ST_PLUGIN_MISMATCH, &err), ST_EPLUGIN);
  snprintf(want, sizeof want,
           "plugin '%s': declared platforms 'declared' differ from its "
           "descriptor's",
           ST_PLUGIN_MISMATCH);
  assert_string_equal(err.message, want);

  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, "lazy:" ST_SOURCE_ROOT, &err),
                   ST_EPLUGIN);
  assert_string_equal(err.message,
                      "plugin '" ST_SOURCE_ROOT "': not a regular file");
  st_registry_free(reg);
}

static void st_plugin_load__not_an_object(void **state) {
  st_registry *reg = builtin();
  st_error err;
  const char *text = ST_SOURCE_ROOT "/meson.build";
  char want[2048], cut[] = "/tmp/scenetest-cut-XXXXXX";
  unsigned char head[64];
  FILE *f;
  int fd;
  (void)state;
  /* A text file: the lazy reader says what it expected... */
  st_error_clear(&err);
  assert_int_equal(
      st_plugin_load(reg, "lazy:" ST_SOURCE_ROOT "/meson.build", &err),
      ST_EPLUGIN);
  snprintf(want, sizeof want, "plugin '%s': not a 64-bit ELF shared object",
           text);
  assert_string_equal(err.message, want);
  /* ...and dlopen's reason is passed on for an eager one. */
  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, text, &err), ST_EPLUGIN);
  snprintf(want, sizeof want, "plugin '%s': cannot load: ", text);
  assert_memory_equal(err.message, want, strlen(want));
  /* An ELF header whose program headers are cut off. */
  f = fopen(ST_PLUGIN_GOOD, "rb");
  assert_non_null(f);
  assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
  fclose(f);
  fd = mkstemp(cut);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, head, sizeof head), (ssize_t)sizeof head);
  close(fd);
  st_error_clear(&err);
  snprintf(want, sizeof want, "lazy:%s", cut);
  assert_int_equal(st_plugin_load(reg, want, &err), ST_EPLUGIN);
  snprintf(want, sizeof want, "plugin '%s': truncated program headers", cut);
  assert_string_equal(err.message, want);
  unlink(cut);
  /* A note that lists no platform. */
  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, "lazy:" ST_PLUGIN_EMPTYNOTE, &err),
                   ST_EPLUGIN);
  assert_string_equal(err.message,
                      "plugin '" ST_PLUGIN_EMPTYNOTE "': declares no platform");
  st_registry_free(reg);
}

static void st_plugin_load__failing_init_is_repaired(void **state) {
  st_registry *reg = builtin();
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  st_error_clear(&err);
  /* Not fatal: a warning, the module incomplete. */
  assert_int_equal(st_plugin_load(reg, ST_PLUGIN_FAILINIT, &err), ST_OK);
  assert_int_equal(st__registry_module_complete(reg, "flaky"), 0);
  assert_int_equal(
      st_registry_lookup(reg, "add", "flaky", ST_LOOKUP_KERNEL, &fn, &err),
      ST_OK);
  assert_non_null(fn);
  assert_int_equal(st__registry_module_complete(reg, "flaky"), 1);
  assert_int_equal(st__registry_repair_count(reg, "flaky"), 1);
  st_registry_free(reg);
}

static void st_plugin_load__conflicting_init_is_a_warning(void **state) {
  st_registry *reg = builtin();
  st_error err;
  st_op_fn before = NULL, after = NULL, own = NULL;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(
      st_registry_lookup(reg, "add", "cpu", ST_LOOKUP_KERNEL, &before, &err),
      ST_OK);
  /* The init's second registration conflicts with the built-in cpu add:
   * an init error, so a WARNING and an incomplete module
   * (docs/plugins.md#the-lookup-order), not a refused plugin. */
  assert_int_equal(st_plugin_load(reg, ST_PLUGIN_CONFLICT, &err), ST_OK);
  assert_int_equal(st__registry_module_complete(reg, "clash"), 0);
  assert_int_equal(
      st_registry_lookup(reg, "add", "cpu", ST_LOOKUP_KERNEL, &after, &err),
      ST_OK);
  assert_ptr_equal(after, before);
  /* What it registered before the conflict stands. */
  assert_int_equal(
      st_registry_lookup(reg, "add", "clash", ST_LOOKUP_KERNEL, &own, &err),
      ST_OK);
  assert_ptr_not_equal(own, before);
  st_registry_free(reg);
}

static void st_plugin_load__example_add_only(void **state) {
  st_registry *reg = builtin();
  st_error err;
  st_op_fn fn = NULL, common = NULL;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, ST_PLUGIN_EXAMPLE, &err), ST_OK);
  assert_int_equal(
      st_registry_lookup(reg, "add", "example", ST_LOOKUP_KERNEL, &fn, &err),
      ST_OK);
  assert_int_equal(
      st_registry_lookup(reg, "copy", "example", ST_LOOKUP_KERNEL, &fn, &err),
      ST_OK);
  assert_int_equal(st_registry_lookup(reg, "copy", ST_BACKEND_COMMON,
                                      ST_LOOKUP_KERNEL, &common, &err),
                   ST_OK);
  assert_ptr_equal(fn, common);
  assert_int_equal(
      st_registry_lookup(reg, "matmul", "example", ST_LOOKUP_KERNEL, &fn, &err),
      ST_EMISSING);
  assert_string_equal(err.message,
                      "BackendImplementationMissing: backend 'example' is "
                      "missing required implementation: kernel for op "
                      "'matmul' (implemented by: cpu, reference, threads)");
  st_registry_free(reg);
}

/* Loads spec, expects ST_EPLUGIN and the exact message "plugin 'PATH': "
 * + reason. */
static void expect_refusal(const char *path, const char *reason) {
  st_registry *reg = builtin();
  st_error err;
  char want[2048];
  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, path, &err), ST_EPLUGIN);
  snprintf(want, sizeof want, "plugin '%s': %s", path, reason);
  assert_string_equal(err.message, want);
  st_registry_free(reg);
}

/* ABI 1's descriptor had no size: refused by its version, read at offset
 * 0, with both versions named. */
static void st_plugin_load__abi1_refused_naming_both(void **state) {
  (void)state;
  expect_refusal(ST_PLUGIN_ABI1,
                 "ABI version 1, this scenetest has ABI version 2");
}

static void st_plugin_load__null_name_refused(void **state) {
  (void)state;
  expect_refusal(ST_PLUGIN_NONAME, "module without a name");
}

static void st_plugin_load__descriptor_size_too_small(void **state) {
  char reason[256];
  (void)state;
  snprintf(reason, sizeof reason,
           "module descriptor has size 8, less than the %zu of ABI 2's "
           "first layout (set size to sizeof(st_module))",
           offsetof(st_module, init) + sizeof(void (*)(void)));
  expect_refusal(ST_PLUGIN_SMALLDESC, reason);
}

/* The registry keeps a plugin's hooks under their platform, at this
 * header's layout; a platform without hooks has none. */
static void st_plugin_load__hooks_are_stored(void **state) {
  st_registry *reg = builtin();
  st_error err;
  const st_platform_hooks *h;
  (void)state;
  st_error_clear(&err);
  assert_null(st_registry_platform_hooks(reg, "hooked"));
  assert_int_equal(st_plugin_load(reg, ST_PLUGIN_HOOKS, &err), ST_OK);
  h = st_registry_platform_hooks(reg, "hooked");
  assert_non_null(h);
  assert_int_equal(h->size, sizeof(st_platform_hooks));
  assert_string_equal(h->platform, "hooked");
  assert_non_null(h->prepare);
  assert_non_null(h->release);
  assert_null(st_registry_platform_hooks(reg, "cpu"));
  assert_null(st_registry_platform_hooks(reg, NULL));
  st_registry_free(reg);
}

/* A lazy plugin's hooks appear once it is loaded: the query does not
 * repair. */
static void st_registry_platform_hooks__does_not_load_lazy(void **state) {
  st_registry *reg = builtin();
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, "lazy:" ST_PLUGIN_HOOKS, &err), ST_OK);
  assert_null(st_registry_platform_hooks(reg, "hooked"));
  assert_int_equal(
      st_registry_lookup(reg, "add", "hooked", ST_LOOKUP_KERNEL, &fn, &err),
      ST_OK);
  assert_non_null(st_registry_platform_hooks(reg, "hooked"));
  st_registry_free(reg);
}

#ifdef ST_PLUGIN_CXX_GOOD
/* A C++ plugin with an extern "C" descriptor loads and runs; one without
 * gets a message that says what is wrong. */
static void st_plugin_load__cxx_extern_c(void **state) {
  st_registry *reg = builtin();
  st_error err;
  st_op_fn fn = NULL;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_plugin_load(reg, ST_PLUGIN_CXX_GOOD, &err), ST_OK);
  assert_int_equal(
      st_registry_lookup(reg, "add", "cxxplat", ST_LOOKUP_KERNEL, &fn, &err),
      ST_OK);
  assert_non_null(st_registry_platform_hooks(reg, "cxxplat"));
  st_registry_free(reg);
}

static void st_plugin_load__cxx_without_extern_c(void **state) {
  (void)state;
  expect_refusal(ST_PLUGIN_CXX_LOCAL,
                 "no 'scenetest_module' descriptor, but it has the "
                 "unexported symbol '_ZL16scenetest_module': a C++ plugin "
                 "must declare its descriptor extern \"C\"");
  expect_refusal(ST_PLUGIN_CXX_MANGLED,
                 "no 'scenetest_module' descriptor, but it exports the "
                 "mangled symbol '_ZN6plugin16scenetest_moduleE': a C++ "
                 "plugin must declare its descriptor extern \"C\"");
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st_plugin_read_platforms__reads_note),
      cmocka_unit_test(st_plugin_load__lazy_does_not_dlopen),
      cmocka_unit_test(st_plugin_load__refusals_name_path_and_reason),
      cmocka_unit_test(st_plugin_load__failing_init_is_repaired),
      cmocka_unit_test(st_plugin_load__not_an_object),
      cmocka_unit_test(st_plugin_load__conflicting_init_is_a_warning),
      cmocka_unit_test(st_plugin_load__example_add_only),
      cmocka_unit_test(st_plugin_load__abi1_refused_naming_both),
      cmocka_unit_test(st_plugin_load__null_name_refused),
      cmocka_unit_test(st_plugin_load__descriptor_size_too_small),
      cmocka_unit_test(st_plugin_load__hooks_are_stored),
      cmocka_unit_test(st_registry_platform_hooks__does_not_load_lazy),
#ifdef ST_PLUGIN_CXX_GOOD
      cmocka_unit_test(st_plugin_load__cxx_extern_c),
      cmocka_unit_test(st_plugin_load__cxx_without_extern_c),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
