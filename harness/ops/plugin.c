/* SPDX-License-Identifier: MIT */
/* Loading plugins. An eager plugin is dlopen'ed and its `scenetest_module`
 * added to the registry. A lazy plugin's platforms are read from an ELF
 * note in the file (PT_NOTE segments, read with plain file I/O: dlopen
 * would run its constructors and load what it links, libtorch included,
 * which is what laziness exists to avoid); the registry loads it for real
 * when a lookup misses on one of those platforms. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <scenetest/log.h>
#include <scenetest/plugin.h>

#include "base/util.h"
#include "ops/note.h"
#include "ops/registry_internal.h"

#define MAX_NOTE_BYTES (1u << 20)
/* load_now's lazy argument for a deferred eager plugin (registry_internal.h):
 * its init's failure was the probe's warning, shown once. */
#define DEFERRED 2

static int read_at(FILE *f, long off, void *buf, size_t n) {
  return fseek(f, off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n ? 0 : -1;
}

st_status st_plugin_read_platforms(const char *path, char **out,
                                   st_error *err) {
  const char *why = NULL;
  void *map;
  st_status rc;
  struct stat sb;
  int fd;

  *out = NULL;
  /* O_NONBLOCK: a FIFO must not block the open; fstat then refuses it. */
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return st_error_set(err, ST_EPLUGIN, "plugin '%s': %s", path,
                        strerror(errno));
  if (fstat(fd, &sb) != 0) {
    rc =
        st_error_set(err, ST_EPLUGIN, "plugin '%s': %s", path, strerror(errno));
    close(fd);
    return rc;
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return st_error_set(err, ST_EPLUGIN, "plugin '%s': not a regular file",
                        path);
  }
  if (sb.st_size == 0) {
    close(fd);
    return st_error_set(err, ST_EPLUGIN,
                        "plugin '%s': not a 64-bit ELF shared object", path);
  }
  /* Mapped, not read: only the pages the parser touches (the headers and
   * the notes, near the start) come in, however large the library. The
   * file is the one dlopen would map the same way, so a file truncated
   * under us is no worse here than there. */
  map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED)
    return st_error_set(err, ST_EPLUGIN, "plugin '%s': %s", path,
                        strerror(errno));
  rc = st__note_parse(map, (size_t)sb.st_size, out, &why);
  munmap(map, (size_t)sb.st_size);
  if (rc != ST_OK)
    return st_error_set(err, rc, "plugin '%s': %s", path, why);
  return ST_OK;
}

/* 1 if the comma-separated declaration lists exactly the descriptor's
 * platforms (order aside). */
static int declaration_matches(const char *decl, const st_module *mod) {
  size_t n_decl = 0, n_mod = 0, i;
  const char *p = decl;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    int found = 0;
    for (i = 0; mod->platforms && mod->platforms[i]; i++)
      if (strlen(mod->platforms[i]) == len &&
          strncmp(mod->platforms[i], p, len) == 0)
        found = 1;
    if (!found)
      return 0;
    n_decl++;
    if (comma == NULL)
      break;
    p = comma + 1;
  }
  for (i = 0; mod->platforms && mod->platforms[i]; i++)
    n_mod++;
  return n_decl == n_mod;
}

/* Looks in the file's symbol tables (.dynsym, and .symtab when the file
 * is not stripped) for a symbol whose name contains "scenetest_module" but
 * is not that name: what a C++ plugin without `extern "C"` on its
 * descriptor has. dlsym cannot find it (a namespace-scope name is mangled,
 * `_ZN2ns16scenetest_moduleE`; a const object at namespace scope has
 * internal linkage in C++, `_ZL16scenetest_module`, and is not exported),
 * so the file is read as the note reader does. Writes the first such name
 * into buf and sets *exported when it is a global dynamic symbol; returns
 * 1 when one is found. */
static int find_mangled(const char *path, char *buf, size_t size,
                        int *exported) {
  FILE *f = fopen(path, "rbe");
  Elf64_Ehdr eh;
  Elf64_Shdr *sh = NULL;
  char *strs = NULL;
  int found = 0;
  unsigned i;

  if (f == NULL)
    return 0;
  if (read_at(f, 0, &eh, sizeof eh) != 0 ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shnum > 4096)
    goto out;
  sh = calloc(eh.e_shnum, sizeof *sh);
  if (sh == NULL ||
      read_at(f, (long)eh.e_shoff, sh, eh.e_shnum * sizeof *sh) != 0)
    goto out;
  for (i = 0; i < eh.e_shnum && !found; i++) {
    const Elf64_Shdr *st = &sh[i], *ss;
    size_t k, n;
    if ((st->sh_type != SHT_DYNSYM && st->sh_type != SHT_SYMTAB) ||
        st->sh_entsize != sizeof(Elf64_Sym) || st->sh_link >= eh.e_shnum)
      continue;
    ss = &sh[st->sh_link];
    if (ss->sh_size == 0 || ss->sh_size > MAX_NOTE_BYTES * 64)
      continue;
    free(strs);
    strs = malloc(ss->sh_size + 1);
    if (strs == NULL || read_at(f, (long)ss->sh_offset, strs, ss->sh_size))
      goto out;
    strs[ss->sh_size] = '\0';
    n = st->sh_size / sizeof(Elf64_Sym);
    for (k = 0; k < n && !found; k++) {
      Elf64_Sym sym;
      const char *name;
      if (read_at(f, (long)(st->sh_offset + k * sizeof sym), &sym,
                  sizeof sym) != 0)
        goto out;
      if (sym.st_name >= ss->sh_size || sym.st_shndx == SHN_UNDEF)
        continue;
      name = strs + sym.st_name;
      if (strstr(name, "scenetest_module") == NULL ||
          strcmp(name, "scenetest_module") == 0)
        continue;
      snprintf(buf, size, "%s", name);
      *exported =
          st->sh_type == SHT_DYNSYM && ELF64_ST_BIND(sym.st_info) != STB_LOCAL;
      found = 1;
    }
  }
out:
  free(strs);
  free(sh);
  fclose(f);
  return found;
}

/* The "no descriptor" refusal, naming a mangled descriptor if there is
 * one. */
static ST_WUR st_status no_descriptor(const char *path, st_error *err) {
  char name[256];
  int exported = 0;
  if (find_mangled(path, name, sizeof name, &exported))
    return st_error_set(err, ST_EPLUGIN,
                        "plugin '%s': no 'scenetest_module' descriptor, but "
                        "%s symbol '%s': a C++ plugin must declare its "
                        "descriptor extern \"C\"",
                        path,
                        exported ? "it exports the mangled"
                                 : "it has the "
                                   "unexported",
                        name);
  return st_error_set(err, ST_EPLUGIN,
                      "plugin '%s': no 'scenetest_module' descriptor", path);
}

/* Loads the plugin at path, a real path (resolve_path's): the file that
 * dlopen maps is the one whose note was read. */
static ST_WUR st_status load_now(st_registry *reg, const char *path, int lazy,
                                 st_error *err) {
  void *h;
  const st_module *mod;
  char *decl = NULL;
  st_error inner;
  st_status rc;

  h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    return st_error_set(err, ST_EPLUGIN, "plugin '%s': cannot load: %s", path,
                        dlerror());
  mod = (const st_module *)dlsym(h, "scenetest_module");
  if (mod == NULL) {
    dlclose(h);
    return no_descriptor(path, err);
  }
  /* The version first: it is at offset 0 in every ABI (registry.h). */
  if (mod->abi_version != ST_ABI_VERSION) {
    unsigned v = (unsigned)mod->abi_version;
    dlclose(h);
    return st_error_set(err, ST_EPLUGIN,
                        "plugin '%s': ABI version %u, this scenetest has ABI "
                        "version %u",
                        path, v, (unsigned)ST_ABI_VERSION);
  }
  st_error_clear(&inner);
  if (st__module_check(mod, &inner) != ST_OK) {
    dlclose(h);
    return st_error_set(err, ST_EPLUGIN, "plugin '%s': %s", path,
                        inner.message);
  }
  st_error_clear(&inner);
  if (st_plugin_read_platforms(path, &decl, &inner) == ST_OK &&
      !declaration_matches(decl, mod)) {
    rc = st_error_set(err, ST_EPLUGIN,
                      "plugin '%s': declared platforms '%s' differ from its "
                      "descriptor's",
                      path, decl);
    free(decl);
    /* The handle stays open: dlclose of a plugin whose code may be
     * referenced is never safe, and the process is about to stop. */
    return rc;
  }
  free(decl);
  /* Plugins stay loaded for the life of the process: their functions are
   * in the registry. */
  st_error_clear(&inner);
  rc = st_registry_add_module(reg, mod, &inner);
  if (rc != ST_OK && !st__registry_has_module(reg, mod))
    /* Refused before its init ran: an ABI mismatch, another module with
     * its name, no memory. */
    return st_error_set(err, rc == ST_ENOMEM ? ST_ENOMEM : ST_EPLUGIN,
                        "plugin '%s': %s", path, inner.message);
  if (rc != ST_OK && lazy != DEFERRED)
    /* Its init failed (a conflicting registration included): not fatal
     * (docs/plugins.md#lazy-loading). The module is incomplete and its
     * backend's repair retries the init. (A deferred plugin's probe said so
     * already.) */
    st_log(ST_LOG_WARNING, "plugin '%s'%s: init of module '%s' failed: %s",
           path, lazy ? " (lazy)" : "", mod->name, inner.message);
  return ST_OK;
}

static ST_WUR st_status lazy_load(st_registry *reg, const char *path,
                                  st_error *err) {
  return load_now(reg, path, 1, err);
}

/* docs/plugins.md#loading: a path without a '/' means ./PATH (never dlopen's
 * library search, which would load another file than the one named, and for a
 * lazy plugin take the declaration from one file and the code from
 * another: D4 of issue 13). The one real path, resolved here once, is
 * used for the note read and for dlopen. *real is malloc'd. */
static ST_WUR st_status resolve_path(const char *spec, char **real,
                                     st_error *err) {
  char *rel = NULL;
  const char *p = spec;
  int e;
  if (strchr(spec, '/') == NULL) {
    if (asprintf(&rel, "./%s", spec) < 0)
      return st_error_set(err, ST_ENOMEM, "out of memory");
    p = rel;
  }
  *real = realpath(p, NULL);
  e = errno;
  free(rel);
  if (*real != NULL)
    return ST_OK;
  if (e == ENOMEM)
    return st_error_set(err, ST_ENOMEM, "out of memory");
  if (p != spec)
    return st_error_set(err, ST_EPLUGIN,
                        "plugin '%s': ./%s: %s (a plugin path without a '/' "
                        "is relative to the current directory, not a library "
                        "search)",
                        spec, spec, strerror(e));
  return st_error_set(err, ST_EPLUGIN, "plugin '%s': %s", spec, strerror(e));
}

/* Splits s in place at each sep into its non-empty pieces, *items (n of
 * them; the caller frees the array, which holds pointers into s). */
static ST_WUR st_status split_list(char *s, char sep, const char ***items,
                                   size_t *n, st_error *err) {
  for (char *p = s; p != NULL;) {
    char *end = strchr(p, sep);
    const char **grown;
    if (end != NULL)
      *end = '\0';
    if (*p != '\0') {
      grown = st__array_resize(*items, *n + 1, sizeof *grown);
      if (grown == NULL)
        return st_error_set(err, ST_ENOMEM, "out of memory");
      *items = grown;
      (*items)[(*n)++] = p;
    }
    p = end != NULL ? end + 1 : NULL;
  }
  return ST_OK;
}

static ST_WUR st_status eager_load(st_registry *reg, const char *path,
                                   st_error *err) {
  return load_now(reg, path, DEFERRED, err);
}

st_status st__plugin_defer(st_registry *reg, const char *spec,
                           const char *platforms, st_error *err) {
  char *real = NULL, *list = strdup(platforms);
  const char **names = NULL;
  size_t n = 0;
  st_status rc;

  if (list == NULL)
    return st_error_set(err, ST_ENOMEM, "out of memory");
  if ((rc = resolve_path(spec, &real, err)) != ST_OK) {
    free(list);
    return rc;
  }
  rc = split_list(list, '\n', &names, &n, err);
  if (rc == ST_OK)
    rc = st__registry_add_deferred(reg, real, names, n, eager_load, err);
  free(names);
  free(list);
  free(real);
  return rc;
}

st_status st_plugin_load(st_registry *reg, const char *spec, st_error *err) {
  char *decl = NULL, *real = NULL;
  const char **platforms = NULL;
  size_t n = 0;
  int lazy = strncmp(spec, "lazy:", 5) == 0;
  st_status rc;

  if (lazy)
    spec += 5;
  if ((rc = resolve_path(spec, &real, err)) != ST_OK)
    return rc;
  if (!lazy) {
    rc = load_now(reg, real, 0, err);
    free(real);
    return rc;
  }
  rc = st_plugin_read_platforms(real, &decl, err);
  if (rc == ST_ENOTFOUND) {
    /* For a lazy plugin a missing declaration makes it unloadable. */
    if (err != NULL)
      err->code = ST_EPLUGIN;
    rc = ST_EPLUGIN;
  }
  if (rc != ST_OK)
    goto out;
  if ((rc = split_list(decl, ',', &platforms, &n, err)) != ST_OK)
    goto out;
  if (n == 0) {
    rc = st_error_set(err, ST_EPLUGIN, "plugin '%s': declares no platform",
                      real);
    goto out;
  }
  rc = st__registry_add_lazy(reg, real, platforms, n, lazy_load, err);
out:
  free(platforms);
  free(decl);
  free(real);
  return rc;
}
