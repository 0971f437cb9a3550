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
#include <sys/stat.h>

#include <scenetest/log.h>
#include <scenetest/plugin.h>

#include "ops/registry_internal.h"

#define MAX_NOTE_BYTES (1u << 20)

static int read_at(FILE *f, long off, void *buf, size_t n) {
  return fseek(f, off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n ? 0 : -1;
}

/* Scans one PT_NOTE segment's bytes for our note. */
static char *find_note(const unsigned char *p, size_t n, size_t align) {
  size_t off = 0;
  if (align < 4)
    align = 4;
  while (off + 12 <= n) {
    uint32_t namesz, descsz, type;
    size_t name_off, desc_off, next;
    memcpy(&namesz, p + off, 4);
    memcpy(&descsz, p + off + 4, 4);
    memcpy(&type, p + off + 8, 4);
    name_off = off + 12;
    desc_off = name_off + ((namesz + align - 1) & ~(align - 1));
    next = desc_off + ((descsz + align - 1) & ~(align - 1));
    if (desc_off > n || descsz > n - desc_off || next < off)
      return NULL;
    if (type == ST_NOTE_TYPE_PLATFORMS && namesz == sizeof ST_NOTE_NAME &&
        memcmp(p + name_off, ST_NOTE_NAME, sizeof ST_NOTE_NAME) == 0) {
      return strndup((const char *)p + desc_off, descsz);
    }
    off = next;
  }
  return NULL;
}

st_status st_plugin_read_platforms(const char *path, char **out,
                                   st_error *err) {
  FILE *f = NULL;
  Elf64_Ehdr eh;
  unsigned char *seg = NULL;
  st_status rc = ST_OK;
  unsigned i;
  struct stat sb;

  *out = NULL;
  if (stat(path, &sb) != 0)
    return st_error_set(err, ST_EPLUGIN, "plugin '%s': %s", path,
                        strerror(errno));
  if (!S_ISREG(sb.st_mode))
    return st_error_set(err, ST_EPLUGIN, "plugin '%s': not a regular file",
                        path);
  f = fopen(path, "rbe");
  if (f == NULL)
    return st_error_set(err, ST_EPLUGIN, "plugin '%s': %s", path,
                        strerror(errno));
  if (read_at(f, 0, &eh, sizeof eh) != 0 ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr)) {
    rc = st_error_set(err, ST_EPLUGIN,
                      "plugin '%s': not a 64-bit ELF shared object", path);
    goto out;
  }
  for (i = 0; i < eh.e_phnum && *out == NULL; i++) {
    Elf64_Phdr ph;
    if (read_at(f, (long)(eh.e_phoff + (Elf64_Off)i * sizeof ph), &ph,
                sizeof ph) != 0) {
      rc = st_error_set(err, ST_EPLUGIN,
                        "plugin '%s': truncated program headers", path);
      goto out;
    }
    if (ph.p_type != PT_NOTE || ph.p_filesz == 0 ||
        ph.p_filesz > MAX_NOTE_BYTES)
      continue;
    free(seg);
    seg = malloc(ph.p_filesz);
    if (seg == NULL) {
      rc = st_error_set(err, ST_ENOMEM, "out of memory");
      goto out;
    }
    if (read_at(f, (long)ph.p_offset, seg, ph.p_filesz) != 0) {
      rc = st_error_set(err, ST_EPLUGIN, "plugin '%s': truncated note",
                        path);
      goto out;
    }
    *out = find_note(seg, ph.p_filesz, ph.p_align);
  }
  if (*out == NULL)
    rc = st_error_set(err, ST_ENOTFOUND,
                      "plugin '%s': no platform declaration (an ELF note "
                      "made by ST_PLUGIN_PLATFORMS)",
                      path);
out:
  free(seg);
  fclose(f);
  return rc;
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
      *exported = st->sh_type == SHT_DYNSYM &&
                  ELF64_ST_BIND(sym.st_info) != STB_LOCAL;
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
                        path, exported ? "it exports the mangled" : "it has the "
                        "unexported", name);
  return st_error_set(err, ST_EPLUGIN,
                      "plugin '%s': no 'scenetest_module' descriptor", path);
}

static ST_WUR st_status load_now(st_registry *reg, const char *path, int lazy,
                                 st_error *err) {
  void *h;
  const st_module *mod;
  char *decl = NULL;
  st_error inner;
  st_status rc;
  struct stat sb;

  if (stat(path, &sb) != 0)
    return st_error_set(err, ST_EPLUGIN, "plugin '%s': %s", path,
                        strerror(errno));
  h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    return st_error_set(err, ST_EPLUGIN, "plugin '%s': cannot load: %s",
                        path, dlerror());
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
  if (rc != ST_OK)
    /* Its init failed (a conflicting registration included): not fatal
     * (SPEC §5). The module is incomplete and its backend's repair
     * retries the init. */
    st_log(ST_LOG_WARNING, "plugin '%s'%s: init of module '%s' failed: %s",
           path, lazy ? " (lazy)" : "", mod->name, inner.message);
  return ST_OK;
}

static ST_WUR st_status lazy_load(st_registry *reg, const char *path,
                                  st_error *err) {
  return load_now(reg, path, 1, err);
}

st_status st_plugin_load(st_registry *reg, const char *spec, st_error *err) {
  char *decl = NULL, *p;
  const char **platforms = NULL;
  size_t n = 0;
  st_status rc;

  if (strncmp(spec, "lazy:", 5) != 0)
    return load_now(reg, spec, 0, err);
  spec += 5;
  rc = st_plugin_read_platforms(spec, &decl, err);
  if (rc == ST_ENOTFOUND) {
    /* For a lazy plugin a missing declaration makes it unloadable. */
    if (err != NULL)
      err->code = ST_EPLUGIN;
    return ST_EPLUGIN;
  }
  if (rc != ST_OK)
    return rc;
  for (p = decl; p != NULL;) {
    char *comma = strchr(p, ',');
    const char **grown;
    if (comma)
      *comma = '\0';
    grown = realloc(platforms, (n + 1) * sizeof *grown);
    if (grown == NULL) {
      rc = st_error_set(err, ST_ENOMEM, "out of memory");
      goto out;
    }
    platforms = grown;
    if (*p != '\0')
      platforms[n++] = p;
    p = comma ? comma + 1 : NULL;
  }
  if (n == 0) {
    rc = st_error_set(err, ST_EPLUGIN, "plugin '%s': declares no platform",
                      spec);
    goto out;
  }
  rc = st__registry_add_lazy(reg, spec, platforms, n, lazy_load, err);
out:
  free(platforms);
  free(decl);
  return rc;
}
