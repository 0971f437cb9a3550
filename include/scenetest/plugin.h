/* SPDX-License-Identifier: MIT */
/* Plugins: shared objects exporting `scenetest_module`, loaded eagerly or
 * lazily (on the first lookup miss on a platform they declare). */
#ifndef SCENETEST_PLUGIN_H
#define SCENETEST_PLUGIN_H

#include <scenetest/registry.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ELF note that declares a plugin's platforms without running it. */
#define ST_NOTE_NAME "scenetest"
#define ST_NOTE_TYPE_PLATFORMS 1u

/* Declares the platforms a plugin provides, as an ELF note that
 * `--plugin lazy:PATH` reads from the file without dlopen (which would run
 * the plugin's constructors and load everything it links). `list` is a
 * string literal, comma-separated: ST_PLUGIN_PLATFORMS("example") or
 * ST_PLUGIN_PLATFORMS("npu,npu_sim"). Use it once per plugin, at file
 * scope. The declaration is checked against the descriptor's platforms when
 * the plugin is really loaded. */
#define ST_PLUGIN_PLATFORMS(list)                                              \
  __attribute__((section(".note.scenetest"), used,                             \
                 aligned(4))) static const struct {                            \
    uint32_t namesz, descsz, type;                                             \
    char name[12];                                                             \
    char desc[(sizeof(list) + 3u) & ~3u];                                      \
  } st__platform_note = {10u, (uint32_t)sizeof(list), ST_NOTE_TYPE_PLATFORMS,  \
                         ST_NOTE_NAME, list}

/* Loads a plugin given as on the command line: "PATH" loads it now (dlopen,
 * descriptor, ABI check, init: an init that fails is a WARNING and leaves
 * the module incomplete for its backend's repair); "lazy:PATH" reads its
 * declared platforms from the ELF note and loads it on the first lookup
 * miss on one of them. A missing file, a file without a descriptor or
 * without a note (lazy), or an ABI mismatch is ST_EPLUGIN with a message
 * naming the path and the reason. Thread-safety: any thread. */
ST_EXTERN st_status st_plugin_load(st_registry *reg /* IN */,
                                   const char *spec /* IN */,
                                   st_error *err /* OUT */) ST_WUR;

/* Reads the platforms a plugin file declares in its ELF note, without
 * loading it. *out is a malloc'd, comma-separated string (caller frees).
 * ST_ENOTFOUND when the file has no such note. Thread-safety: any. */
ST_EXTERN st_status st_plugin_read_platforms(const char *path /* IN */,
                                             char **out /* OUT */,
                                             st_error *err /* OUT */) ST_WUR;

#ifdef __cplusplus
}
#endif
#endif
