/* SPDX-License-Identifier: MIT */
/* The backend registry: implementations keyed by (op, backend), the modules
 * that register them, lazy plugins, and the lookup that repairs a backend
 * before falling back to `common`.
 *
 * The lesson behind the lookup: registrations made as a side effect of
 * module initialisation go missing silently when an init is interrupted (by
 * a loading cycle, or an error). So a miss first repairs the backend
 * (re-runs the inits that did not complete, loads its lazy plugins), and
 * only then falls back. The repaired mark is set only after a repair that
 * succeeded, so a failed repair is retried by a later lookup; repairs are
 * serialised by one lock that concurrent lookups wait on; a lookup made
 * from inside a module init during a repair skips the repair (it would
 * deadlock on the lock it is running under) and goes on to the fallback. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/log.h>

#include "base/abi.h"
#include "base/mutex.h"
#include "base/util.h"
#include "ops/registry_internal.h"

typedef struct st__entry {
  char *op;
  char *backend;
  char *module;
  st_op_fn fn;
} st__entry;

typedef struct st__modrec {
  const st_module *mod;
  st_platform_hooks *hooks; /* copies of mod's, at this layout; owned */
  size_t n_hooks;
  int complete;    /* guarded by: lock */
  char **backends; /* backends it registered for; guarded by: lock */
  size_t n_backends;
  int builtin; /* added by st__registry_add_builtin: the harness's code */
} st__modrec;

typedef struct st__lazyrec {
  char *path;
  char **platforms;
  size_t n_platforms;
  st__lazy_load_fn load;
  int loaded;   /* guarded by: lock; set only by a repair (repair_lock) */
  int deferred; /* an eager plugin deferred to the dispatching processes */
} st__lazyrec;

typedef struct st__backrec {
  char *name;
  int repaired;     /* guarded by: lock */
  unsigned repairs; /* guarded by: lock */
  char why[384];    /* guarded by: lock; why a lazy plugin did not load */
} st__backrec;

struct st_registry {
  st__mutex lock;        /* guards every array below */
  st__mutex repair_lock; /* serialises repairs */
  st__entry *entries;
  size_t n_entries, cap_entries;
  st__modrec *mods;
  size_t n_mods, cap_mods;
  st__lazyrec *lazies;
  size_t n_lazies, cap_lazies;
  st__backrec *backs;
  size_t n_backs, cap_backs;
  /* Op names a deferred eager plugin registers (st__registry_declare_ops):
   * known to the load-time check, never to a lookup. */
  char **declared;
  size_t n_declared;
  /* Modules added that are not built in (a plugin's, an API user's), and
   * functions registered other than by a built-in module's init: once
   * there is one, a case may run code the harness does not know (it may
   * print, close fd 1, fork). Written under lock, read without it. */
  unsigned foreign;
};

/* Depth of module inits running on this thread. A lookup made while it is
 * positive neither waits for nor starts a repair. */
static _Thread_local int tls_in_init;
/* Depth of built-in module inits running on this thread: what they
 * register is the harness's own code (see foreign). */
static _Thread_local int tls_builtin_init;

static int push_str(char ***arr, size_t *n, const char *s) {
  char **p;
  char *copy;
  size_t i;
  for (i = 0; i < *n; i++)
    if (strcmp((*arr)[i], s) == 0)
      return 0;
  copy = strdup(s);
  if (copy == NULL)
    return -1;
  p = st__array_resize(*arr, *n + 1, sizeof *p);
  if (p == NULL) {
    free(copy);
    return -1;
  }
  p[*n] = copy;
  *arr = p;
  (*n)++;
  return 0;
}

static void free_strs(char **arr, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    free(arr[i]);
  free(arr);
}

st_status st_registry_new(st_registry **out) {
  st_registry *reg = calloc(1, sizeof *reg);
  *out = NULL;
  if (reg == NULL)
    return ST_ENOMEM;
  st__mutex_init(&reg->lock);
  st__mutex_init(&reg->repair_lock);
  *out = reg;
  return ST_OK;
}

void st_registry_free(st_registry *reg) {
  size_t i;
  if (reg == NULL)
    return;
  for (i = 0; i < reg->n_entries; i++) {
    free(reg->entries[i].op);
    free(reg->entries[i].backend);
    free(reg->entries[i].module);
  }
  for (i = 0; i < reg->n_mods; i++) {
    free_strs(reg->mods[i].backends, reg->mods[i].n_backends);
    free(reg->mods[i].hooks);
  }
  for (i = 0; i < reg->n_lazies; i++) {
    free(reg->lazies[i].path);
    free_strs(reg->lazies[i].platforms, reg->lazies[i].n_platforms);
  }
  for (i = 0; i < reg->n_backs; i++)
    free(reg->backs[i].name);
  free_strs(reg->declared, reg->n_declared);
  free(reg->entries);
  free(reg->mods);
  free(reg->lazies);
  free(reg->backs);
  st__mutex_destroy(&reg->lock);
  st__mutex_destroy(&reg->repair_lock);
  free(reg);
}

/* Requires lock (asserted). */
static st__modrec *find_mod(st_registry *reg, const char *name) {
  size_t i;
  assert(st__mutex_held(&reg->lock));
  for (i = 0; i < reg->n_mods; i++)
    if (strcmp(reg->mods[i].mod->name, name) == 0)
      return &reg->mods[i];
  return NULL;
}

/* Requires lock (asserted). */
static st__backrec *find_back(st_registry *reg, const char *name, int create) {
  st__backrec *b;
  size_t i;
  assert(st__mutex_held(&reg->lock));
  for (i = 0; i < reg->n_backs; i++)
    if (strcmp(reg->backs[i].name, name) == 0)
      return &reg->backs[i];
  if (!create || (b = st__array_grow(reg->backs, &reg->cap_backs, reg->n_backs,
                                     sizeof *b, 16)) == NULL)
    return NULL;
  reg->backs = b;
  reg->backs[reg->n_backs].name = strdup(name);
  if (reg->backs[reg->n_backs].name == NULL)
    return NULL;
  reg->backs[reg->n_backs].repaired = 0;
  reg->backs[reg->n_backs].repairs = 0;
  reg->backs[reg->n_backs].why[0] = '\0';
  return &reg->backs[reg->n_backs++];
}

/* Requires lock (asserted). */
static st__entry *find_entry(st_registry *reg, const char *op,
                             const char *backend) {
  size_t i;
  assert(st__mutex_held(&reg->lock));
  for (i = 0; i < reg->n_entries; i++)
    if (strcmp(reg->entries[i].op, op) == 0 &&
        strcmp(reg->entries[i].backend, backend) == 0)
      return &reg->entries[i];
  return NULL;
}

/* Copies backend's record (its name and strings stay the registry's) taken
 * under the lock. Returns 0 when there is none. */
static int back_get(st_registry *reg, const char *backend,
                    st__backrec *out /* OUT */) {
  st__backrec *b;
  st__mutex_lock(&reg->lock);
  b = find_back(reg, backend, 0);
  if (b != NULL)
    *out = *b;
  st__mutex_unlock(&reg->lock);
  return b != NULL;
}

/* The same for a module's record. */
static int mod_get(st_registry *reg, const char *name,
                   st__modrec *out /* OUT */) {
  st__modrec *m;
  st__mutex_lock(&reg->lock);
  m = find_mod(reg, name);
  if (m != NULL)
    *out = *m;
  st__mutex_unlock(&reg->lock);
  return m != NULL;
}

/* Loads the lazy plugin at path with load, counted as a module init on
 * this thread (its lookups neither wait for nor start a repair). */
static st_status load_lazy(st_registry *reg, st__lazy_load_fn load,
                           const char *path, st_error *err) {
  st_status rc;
  st_error_clear(err);
  tls_in_init++;
  rc = load(reg, path, err);
  tls_in_init--;
  return rc;
}

/* own: mod is built in (its registrations are not foreign). */
static ST_WUR st_status run_init(st_registry *reg, const st_module *mod,
                                 int own, st_error *err) {
  st_status rc;
  st__modrec *m;
  tls_in_init++;
  tls_builtin_init += own;
  rc = mod->init ? mod->init(reg, err) : ST_OK;
  tls_builtin_init -= own;
  tls_in_init--;
  st__mutex_lock(&reg->lock);
  m = find_mod(reg, mod->name);
  if (m != NULL)
    m->complete = (rc == ST_OK);
  st__mutex_unlock(&reg->lock);
  return rc;
}

/* The first layout of ABI 2 ends with init; hooks are optional. */
#define MODULE_MIN_SIZE ST__SIZE_THROUGH(st_module, init)
/* The first layout of st_platform_hooks ends with release. */
#define HOOKS_MIN_SIZE ST__SIZE_THROUGH(st_platform_hooks, release)

/* ABI 1's descriptor, read only to name a refused module: its name was at
 * the same offset as ABI 2's. */
typedef struct module_v1 {
  uint32_t abi_version;
  const char *name;
} module_v1;

static int mod_provides(const st_module *mod, const char *platform) {
  size_t i;
  for (i = 0; mod->platforms != NULL && mod->platforms[i] != NULL; i++)
    if (strcmp(mod->platforms[i], platform) == 0)
      return 1;
  return 0;
}

/* Copies mod's hooks (when its size covers them) into *out, each at this
 * header's layout: the module's array is stepped by each entry's own size
 * and only fields that size covers are read. */
static ST_WUR st_status copy_hooks(const st_module *mod,
                                   st_platform_hooks **out, size_t *n_out,
                                   st_error *err) {
  const unsigned char *p;
  st_platform_hooks *copy;
  size_t i, j, n;

  *out = NULL;
  *n_out = 0;
  if (!ST__HAS_FIELD(mod, st_module, n_hooks) || mod->n_hooks == 0)
    return ST_OK;
  n = mod->n_hooks;
  if (mod->hooks == NULL)
    return st_error_set(err, ST_EINVAL,
                        "module '%s': n_hooks is %zu but hooks is NULL",
                        mod->name, n);
  copy = calloc(n, sizeof *copy);
  if (copy == NULL)
    return st_error_set(err, ST_ENOMEM, "out of memory");
  p = (const unsigned char *)mod->hooks;
  for (i = 0; i < n; i++) {
    const st_platform_hooks *h = (const st_platform_hooks *)(const void *)p;
    if (h->size < HOOKS_MIN_SIZE) {
      st_error_set(err, ST_EINVAL,
                   "module '%s': hooks entry %zu has size %u, less than the "
                   "%zu of its first layout (set size to "
                   "sizeof(st_platform_hooks))",
                   mod->name, i, (unsigned)h->size, (size_t)HOOKS_MIN_SIZE);
      goto fail;
    }
    copy[i].size = sizeof copy[i];
    copy[i].platform = h->platform;
    copy[i].prepare = h->prepare;
    copy[i].release = h->release;
    /* The bench's hooks (docs/bench.md), appended: read only when the
     * module's layout has them. */
    if (h->size >= ST__SIZE_THROUGH(st_platform_hooks, ceilings))
      copy[i].ceilings = h->ceilings;
    if (h->size >= ST__SIZE_THROUGH(st_platform_hooks, flush))
      copy[i].flush = h->flush;
    if (h->size >= ST__SIZE_THROUGH(st_platform_hooks, describe))
      copy[i].describe = h->describe;
    if (h->platform == NULL || !mod_provides(mod, h->platform)) {
      st_error_set(err, ST_EINVAL,
                   "module '%s': hooks entry %zu is for platform '%s', "
                   "which the module does not provide",
                   mod->name, i, h->platform ? h->platform : "(null)");
      goto fail;
    }
    for (j = 0; j < i; j++)
      if (strcmp(copy[j].platform, h->platform) == 0) {
        st_error_set(err, ST_EINVAL,
                     "module '%s': two hooks entries for platform '%s'",
                     mod->name, h->platform);
        goto fail;
      }
    p += h->size;
  }
  *out = copy;
  *n_out = n;
  return ST_OK;
fail:
  free(copy);
  return err != NULL ? err->code : ST_EINVAL;
}

/* Requires lock (asserted). The hooks some module gives platform, or NULL.
 * The pointer stays valid after the lock is released: each module's hooks
 * are an allocation of their own, which the mods array does not move. */
static const st_platform_hooks *find_hooks(st_registry *reg,
                                           const char *platform) {
  size_t i, j;
  assert(st__mutex_held(&reg->lock));
  for (i = 0; i < reg->n_mods; i++)
    for (j = 0; j < reg->mods[i].n_hooks; j++)
      if (strcmp(reg->mods[i].hooks[j].platform, platform) == 0)
        return &reg->mods[i].hooks[j];
  return NULL;
}

st_status st__module_check(const st_module *mod, st_error *err) {
  if (mod == NULL)
    return st_error_set(err, ST_EINVAL, "no module descriptor");
  /* abi_version is at offset 0 in every ABI: read it before anything else,
   * so that a descriptor of another layout is refused by its version. */
  if (mod->abi_version == 1u) {
    const module_v1 *v1 = (const module_v1 *)(const void *)mod;
    return st_error_set(err, ST_EABI,
                        "module '%s' has ABI version 1, this scenetest has "
                        "ABI version %u",
                        v1->name ? v1->name : "(null)",
                        (unsigned)ST_ABI_VERSION);
  }
  if (mod->abi_version != ST_ABI_VERSION)
    return st_error_set(err, ST_EABI,
                        "module descriptor has ABI version %u, this "
                        "scenetest has ABI version %u",
                        (unsigned)mod->abi_version, (unsigned)ST_ABI_VERSION);
  if (mod->size < MODULE_MIN_SIZE)
    return st_error_set(err, ST_EINVAL,
                        "module descriptor has size %u, less than the %zu "
                        "of ABI %u's first layout (set size to "
                        "sizeof(st_module))",
                        (unsigned)mod->size, (size_t)MODULE_MIN_SIZE,
                        (unsigned)ST_ABI_VERSION);
  if (mod->name == NULL)
    return st_error_set(err, ST_EINVAL, "module without a name");
  if (mod->name[0] == '\0')
    return st_error_set(err, ST_EINVAL, "module with an empty name");
  return ST_OK;
}

/* st_registry_add_module; builtin: mod is one of the harness's own
 * (ops/builtin.c), whose init and registrations are not foreign. */
static st_status add_module(st_registry *reg, const st_module *mod, int builtin,
                            st_error *err) {
  st_platform_hooks *hooks = NULL;
  size_t n_hooks = 0;
  st__modrec *m;
  size_t i;
  st_status rc;

  if ((rc = st__module_check(mod, err)) != ST_OK)
    return rc;
  if ((rc = copy_hooks(mod, &hooks, &n_hooks, err)) != ST_OK)
    return rc;
  st__mutex_lock(&reg->lock);
  m = find_mod(reg, mod->name);
  if (m != NULL) {
    int same = (m->mod == mod);
    st__mutex_unlock(&reg->lock);
    free(hooks);
    if (same)
      return ST_OK;
    return st_error_set(err, ST_ECONFLICT,
                        "a different module named '%s' is already added",
                        mod->name);
  }
  for (i = 0; i < n_hooks; i++) {
    const st_platform_hooks *h = find_hooks(reg, hooks[i].platform);
    if (h != NULL) {
      size_t k, j;
      const char *owner = "?";
      for (k = 0; k < reg->n_mods; k++)
        for (j = 0; j < reg->mods[k].n_hooks; j++)
          if (&reg->mods[k].hooks[j] == h)
            owner = reg->mods[k].mod->name;
      rc = st_error_set(err, ST_ECONFLICT,
                        "module '%s' gives hooks for platform '%s', which "
                        "module '%s' already gives",
                        mod->name, hooks[i].platform, owner);
      st__mutex_unlock(&reg->lock);
      free(hooks);
      return rc;
    }
  }
  if ((m = st__array_grow(reg->mods, &reg->cap_mods, reg->n_mods, sizeof *m,
                          16)) == NULL) {
    st__mutex_unlock(&reg->lock);
    free(hooks);
    return st_error_set(err, ST_ENOMEM, "out of memory");
  }
  reg->mods = m;
  m = &reg->mods[reg->n_mods++];
  memset(m, 0, sizeof *m);
  m->mod = mod;
  m->builtin = builtin;
  for (i = 0; mod->platforms != NULL && mod->platforms[i] != NULL; i++)
    if (find_back(reg, mod->platforms[i], 1) == NULL) {
      /* Not added: adding it again must run its init. */
      reg->n_mods--;
      st__mutex_unlock(&reg->lock);
      free(hooks);
      return st_error_set(err, ST_ENOMEM, "out of memory");
    }
  m->hooks = hooks;
  m->n_hooks = n_hooks;
  /* Before its init runs: that is foreign code too. */
  if (!builtin)
    __atomic_store_n(&reg->foreign, reg->foreign + 1, __ATOMIC_RELEASE);
  st__mutex_unlock(&reg->lock);

  rc = run_init(reg, mod, builtin, err);
  if (rc != ST_OK && err != NULL && err->message[0] == '\0')
    st_error_set(err, rc, "init of module '%s' failed: %s", mod->name,
                 st_status_str(rc));
  return rc;
}

st_status st_registry_add_module(st_registry *reg, const st_module *mod,
                                 st_error *err) {
  return add_module(reg, mod, 0, err);
}

st_status st__registry_add_builtin(st_registry *reg, const st_module *mod,
                                   st_error *err) {
  return add_module(reg, mod, 1, err);
}

const st_platform_hooks *st_registry_platform_hooks(st_registry *reg,
                                                    const char *platform) {
  const st_platform_hooks *h;
  if (reg == NULL || platform == NULL)
    return NULL;
  st__mutex_lock(&reg->lock);
  h = find_hooks(reg, platform);
  st__mutex_unlock(&reg->lock);
  return h;
}

st_status st_registry_register(st_registry *reg, const char *module,
                               const char *op, const char *backend, st_op_fn fn,
                               st_error *err) {
  st__entry *e;
  st__modrec *m;
  st_status rc = ST_OK;

  if (module == NULL || op == NULL || backend == NULL || fn == NULL)
    return st_error_set(err, ST_EINVAL,
                        "register: module, op, backend and function are "
                        "required");
  st__mutex_lock(&reg->lock);
  e = find_entry(reg, op, backend);
  if (e != NULL) {
    /* Idempotent: a repair re-runs inits that registered part of their ops
     * before failing, and those registrations must not conflict. */
    if (e->fn != fn)
      rc = st_error_set(err, ST_ECONFLICT,
                        "conflicting registration of op '%s' on backend "
                        "'%s': module '%s' registers a different "
                        "implementation than module '%s'",
                        op, backend, module, e->module);
    goto out;
  }
  if ((e = st__array_grow(reg->entries, &reg->cap_entries, reg->n_entries,
                          sizeof *e, 16)) == NULL) {
    rc = st_error_set(err, ST_ENOMEM, "out of memory");
    goto out;
  }
  reg->entries = e;
  if (find_back(reg, backend, 1) == NULL) {
    rc = st_error_set(err, ST_ENOMEM, "out of memory");
    goto out;
  }
  e = &reg->entries[reg->n_entries];
  e->op = strdup(op);
  e->backend = strdup(backend);
  e->module = strdup(module);
  e->fn = fn;
  if (e->op == NULL || e->backend == NULL || e->module == NULL) {
    free(e->op);
    free(e->backend);
    free(e->module);
    rc = st_error_set(err, ST_ENOMEM, "out of memory");
    goto out;
  }
  reg->n_entries++;
  if (tls_builtin_init == 0)
    __atomic_store_n(&reg->foreign, reg->foreign + 1, __ATOMIC_RELEASE);
  m = find_mod(reg, module);
  if (m != NULL && push_str(&m->backends, &m->n_backends, backend) != 0)
    rc = st_error_set(err, ST_ENOMEM, "out of memory");
out:
  st__mutex_unlock(&reg->lock);
  return rc;
}

static st_status add_lazy(st_registry *reg, const char *path,
                          const char *const *platforms, size_t n,
                          st__lazy_load_fn load, int deferred, st_error *err) {
  st__lazyrec *l;
  size_t i;
  st_status rc = ST_OK;

  st__mutex_lock(&reg->lock);
  if ((l = st__array_grow(reg->lazies, &reg->cap_lazies, reg->n_lazies,
                          sizeof *l, 16)) == NULL) {
    rc = st_error_set(err, ST_ENOMEM, "out of memory");
    goto out;
  }
  reg->lazies = l;
  l = &reg->lazies[reg->n_lazies];
  memset(l, 0, sizeof *l);
  l->path = strdup(path);
  l->load = load;
  l->deferred = deferred;
  if (l->path == NULL) {
    rc = st_error_set(err, ST_ENOMEM, "out of memory");
    goto out;
  }
  for (i = 0; i < n; i++)
    if (push_str(&l->platforms, &l->n_platforms, platforms[i]) != 0 ||
        find_back(reg, platforms[i], 1) == NULL) {
      free(l->path);
      free_strs(l->platforms, l->n_platforms);
      rc = st_error_set(err, ST_ENOMEM, "out of memory");
      goto out;
    }
  reg->n_lazies++;
out:
  st__mutex_unlock(&reg->lock);
  return rc;
}

st_status st__registry_add_lazy(st_registry *reg, const char *path,
                                const char *const *platforms, size_t n,
                                st__lazy_load_fn load, st_error *err) {
  return add_lazy(reg, path, platforms, n, load, 0, err);
}

st_status st__registry_add_deferred(st_registry *reg, const char *path,
                                    const char *const *platforms, size_t n,
                                    st__lazy_load_fn load, st_error *err) {
  return add_lazy(reg, path, platforms, n, load, 1, err);
}

int st__registry_load_deferred(st_registry *reg) {
  size_t i;
  int loaded = 0;
  st__mutex_lock(&reg->repair_lock);
  for (i = 0;; i++) {
    char *path = NULL;
    st__lazy_load_fn load = NULL;
    st_error err;
    st_status rc;
    st__mutex_lock(&reg->lock);
    if (i >= reg->n_lazies) {
      st__mutex_unlock(&reg->lock);
      break;
    }
    if (reg->lazies[i].deferred && !reg->lazies[i].loaded) {
      path = reg->lazies[i].path;
      load = reg->lazies[i].load;
    }
    st__mutex_unlock(&reg->lock);
    if (path == NULL)
      continue;
    rc = load_lazy(reg, load, path, &err);
    st__mutex_lock(&reg->lock);
    reg->lazies[i].loaded = rc == ST_OK;
    st__mutex_unlock(&reg->lock);
    if (rc != ST_OK)
      st_log(ST_LOG_WARNING, "plugin '%s': %s", path, err.message);
    else
      loaded++;
  }
  st__mutex_unlock(&reg->repair_lock);
  return loaded;
}

unsigned st__registry_foreign(const st_registry *reg) {
  return __atomic_load_n(&reg->foreign, __ATOMIC_ACQUIRE);
}

size_t st__registry_module_count(st_registry *reg) {
  size_t n;
  st__mutex_lock(&reg->lock);
  n = reg->n_mods;
  st__mutex_unlock(&reg->lock);
  return n;
}

/* Appends s and a separator to the malloc'd string *out (NULL: oom). */
static void append_name(char **out, size_t *len, const char *s, char sep) {
  size_t n = strlen(s);
  char *p;
  if (*out == NULL)
    return;
  p = st__array_resize(*out, *len + n + 2, 1);
  if (p == NULL) {
    free(*out);
    *out = NULL;
    return;
  }
  memcpy(p + *len, s, n);
  p[*len + n] = sep;
  p[*len + n + 1] = '\0';
  *len += n + 1;
  *out = p;
}

char *st__registry_describe(st_registry *reg, size_t first_module, int ops) {
  size_t i, j, len = 0;
  char *out = calloc(1, 1);
  st__mutex_lock(&reg->lock);
  if (ops) {
    for (i = 0; i < reg->n_entries; i++)
      append_name(&out, &len, reg->entries[i].op, '\n');
  } else {
    for (i = first_module; i < reg->n_mods; i++) {
      const st__modrec *m = &reg->mods[i];
      for (j = 0; m->mod->platforms != NULL && m->mod->platforms[j] != NULL;
           j++)
        append_name(&out, &len, m->mod->platforms[j], '\n');
      for (j = 0; j < m->n_backends; j++)
        append_name(&out, &len, m->backends[j], '\n');
    }
  }
  st__mutex_unlock(&reg->lock);
  return out;
}

st_status st__registry_declare_ops(st_registry *reg, const char *list) {
  st_status rc = ST_OK;
  const char *p = list;
  st__mutex_lock(&reg->lock);
  while (*p != '\0' && rc == ST_OK) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    char *name = strndup(p, n);
    if (name == NULL || push_str(&reg->declared, &reg->n_declared, name) != 0)
      rc = ST_ENOMEM;
    free(name);
    p += n + (nl != NULL);
  }
  st__mutex_unlock(&reg->lock);
  return rc;
}

static int has_str(char **arr, size_t n, const char *s) {
  size_t i;
  for (i = 0; i < n; i++)
    if (strcmp(arr[i], s) == 0)
      return 1;
  return 0;
}

static int mod_serves(const st__modrec *m, const char *backend) {
  size_t i;
  for (i = 0; m->mod->platforms != NULL && m->mod->platforms[i] != NULL; i++)
    if (strcmp(m->mod->platforms[i], backend) == 0)
      return 1;
  return has_str(m->backends, m->n_backends, backend);
}

/* Declares, under lock, whether lazy plugin i is one this repair must load
 * and copies what loading it needs. The record itself must not be held
 * across the load: st__registry_add_lazy may move the array meanwhile (the
 * path string it points to never moves). Returns 0 past the last plugin,
 * else 1 with *want set. */
static int next_lazy(st_registry *reg, size_t i, const char *backend,
                     int *want /* OUT */, char **path /* OUT: borrowed */,
                     st__lazy_load_fn *load /* OUT */) {
  const st__lazyrec *l;
  assert(st__mutex_held(&reg->repair_lock));
  st__mutex_lock(&reg->lock);
  if (i >= reg->n_lazies) {
    st__mutex_unlock(&reg->lock);
    return 0;
  }
  l = &reg->lazies[i];
  *want = !l->loaded && has_str(l->platforms, l->n_platforms, backend);
  *path = l->path;
  *load = l->load;
  st__mutex_unlock(&reg->lock);
  return 1;
}

/* Repairs backend once, under repair_lock. Returns ST_OK when the backend
 * is (now, or already) repaired, ST_ENOMEM when memory ran out on the
 * way. */
static ST_WUR st_status repair(st_registry *reg, const char *backend) {
  st_status rc = ST_OK;
  size_t i, n;
  st__backrec *b;
  st_error err;
  char *path;
  st__lazy_load_fn load;
  int want;

  st__mutex_lock(&reg->repair_lock);
  st__mutex_lock(&reg->lock);
  b = find_back(reg, backend, 1);
  if (b == NULL || b->repaired) {
    st__mutex_unlock(&reg->lock);
    st__mutex_unlock(&reg->repair_lock);
    return b == NULL ? ST_ENOMEM : ST_OK;
  }
  st__mutex_unlock(&reg->lock);

  /* Lazy plugins first: loading one adds its module (and runs its init).
   * Plugins are indexed afresh under the lock each time, so one declared
   * while this repair runs (by another thread, or by a plugin's init) is
   * loaded by it too. */
  for (i = 0; next_lazy(reg, i, backend, &want, &path, &load); i++) {
    st_status lrc;
    if (!want)
      continue;
    lrc = load_lazy(reg, load, path, &err);
    st__mutex_lock(&reg->lock);
    if (lrc == ST_OK) {
      reg->lazies[i].loaded = 1;
    } else {
      /* Kept for the missing-implementation message: the case's report
       * must say why, not only a WARNING on stderr. */
      b = find_back(reg, backend, 0);
      if (b != NULL)
        snprintf(b->why, sizeof b->why, "%.*s", (int)sizeof b->why - 1,
                 err.message);
    }
    st__mutex_unlock(&reg->lock);
    if (lrc != ST_OK) {
      st_log(ST_LOG_WARNING, "lazy plugin '%s' for backend '%s': %s", path,
             backend, err.message);
      if (rc != ST_ENOMEM)
        rc = err.code == ST_ENOMEM ? ST_ENOMEM : ST_EPLUGIN;
    }
  }

  /* Then re-run every incomplete init of a module serving this backend.
   * The array may grow while an init runs (a lazy load), so index it
   * afresh each time under the lock. */
  for (i = 0;; i++) {
    const st_module *mod = NULL;
    int own = 0;
    st__mutex_lock(&reg->lock);
    if (i < reg->n_mods && !reg->mods[i].complete &&
        mod_serves(&reg->mods[i], backend)) {
      mod = reg->mods[i].mod;
      own = reg->mods[i].builtin;
    }
    n = reg->n_mods;
    st__mutex_unlock(&reg->lock);
    if (i >= n)
      break;
    if (mod == NULL)
      continue;
    st_error_clear(&err);
    if (run_init(reg, mod, own, &err) != ST_OK) {
      st_log(ST_LOG_WARNING,
             "repair of backend '%s': init of module '%s' failed again: %s",
             backend, mod->name, err.message);
      /* Out of memory is the lookup's failure, not the module's: the
       * caller must not fall back as if the module lacked the op. */
      if (rc != ST_ENOMEM)
        rc = err.code == ST_ENOMEM ? ST_ENOMEM : ST_EKERNEL;
    }
  }

  st__mutex_lock(&reg->lock);
  b = find_back(reg, backend, 0);
  if (b != NULL) {
    b->repairs++;
    /* Only a repair that succeeded is marked: a failed one is retried. */
    if (rc == ST_OK)
      b->repaired = 1;
  }
  st__mutex_unlock(&reg->lock);
  st__mutex_unlock(&reg->repair_lock);
  return rc;
}

/* Writes the backends that implement op, sorted (so the message does not
 * depend on registration order) and without duplicates. It allocates
 * nothing: the message must be right when memory has run out too. Each
 * pass picks the smallest name after the previous one. */
static int covers(const char *pattern, const char *op);

static void implementers(st_registry *reg, const char *op, char *buf,
                         size_t size) {
  size_t i, used = 0, count = 0;
  const char *prev = NULL;
  buf[0] = '\0';
  st__mutex_lock(&reg->lock);
  for (;;) {
    const char *next = NULL;
    int w;
    for (i = 0; i < reg->n_entries; i++) {
      const char *b = reg->entries[i].backend;
      if (!covers(reg->entries[i].op, op) ||
          (prev != NULL && strcmp(b, prev) <= 0))
        continue;
      if (next == NULL || strcmp(b, next) < 0)
        next = b;
    }
    if (next == NULL || used + 1 >= size)
      break;
    w = snprintf(buf + used, size - used, "%s%s", count ? ", " : "", next);
    if (w < 0)
      break;
    used += (size_t)w;
    count++;
    prev = next;
  }
  if (count == 0)
    snprintf(buf, size, "none");
  st__mutex_unlock(&reg->lock);
}

/* 1 if a registration named pattern covers op: the same name, or a family
 * "PREFIX*" and op starts with PREFIX. */
static int covers(const char *pattern, const char *op) {
  size_t n = strlen(pattern);
  if (n > 0 && pattern[n - 1] == '*')
    return strncmp(pattern, op, n - 1) == 0;
  return strcmp(pattern, op) == 0;
}

/* The registration of (op, backend): the op's own, else the family
 * ("PREFIX*") with the longest prefix that covers it. Needs reg->lock. */
static st__entry *find_covering(st_registry *reg, const char *op,
                                const char *backend) {
  st__entry *best = find_entry(reg, op, backend);
  size_t i, best_len = 0;
  if (best != NULL)
    return best;
  for (i = 0; i < reg->n_entries; i++) {
    st__entry *e = &reg->entries[i];
    size_t len = strlen(e->op);
    if (len > best_len && e->op[len - 1] == '*' && covers(e->op, op) &&
        strcmp(e->backend, backend) == 0) {
      best = e;
      best_len = len;
    }
  }
  return best;
}

static st_op_fn exact(st_registry *reg, const char *op, const char *backend) {
  st__entry *e;
  st_op_fn fn;
  st__mutex_lock(&reg->lock);
  e = find_covering(reg, op, backend);
  fn = e ? e->fn : NULL;
  st__mutex_unlock(&reg->lock);
  return fn;
}

st_status st_registry_lookup(st_registry *reg, const char *op,
                             const char *backend, st_lookup_kind kind,
                             st_op_fn *out, st_error *err) {
  st_op_fn fn;
  st_status repair_rc = ST_OK;
  char impl[512], why[448] = "";

  *out = NULL;
  /* 1. An exact registration wins. */
  fn = exact(reg, op, backend);
  if (fn != NULL)
    goto found;
  /* 2. Repair the backend once, unless called from inside an init (which
   *    may be running under the repair lock: it must neither wait nor
   *    repair). */
  if (tls_in_init == 0) {
    st__backrec b;
    if (!back_get(reg, backend, &b) || !b.repaired)
      repair_rc = repair(reg, backend);
    /* 3. Retry the exact registration. */
    fn = exact(reg, op, backend);
    if (fn != NULL)
      goto found;
    /* A repair cut short by memory may have missed the registration: a
     * fallback now would silently run some other implementation. */
    if (repair_rc == ST_ENOMEM)
      return st_error_set(err, ST_ENOMEM,
                          "out of memory repairing backend '%s'", backend);
  }
  /* 3. Then the op's common implementation. */
  fn = exact(reg, op, ST_BACKEND_COMMON);
  if (fn != NULL)
    goto found;
  /* 4. Fail, naming who does implement it. */
  implementers(reg, op, impl, sizeof impl);
  {
    st__backrec b;
    if (back_get(reg, backend, &b) && b.why[0] != '\0')
      snprintf(why, sizeof why, "; a lazy plugin did not load: %s", b.why);
  }
  /* docs/torch.md#aten-ops: an aten:: op without the torch plugin names it. */
  if (strncmp(op, "aten::", 6) == 0 && strcmp(backend, "torch") != 0 &&
      strlen(why) + 1 < sizeof why)
    snprintf(why + strlen(why), sizeof why - strlen(why),
             "; aten:: ops are run by the torch plugin, on backend 'torch' "
             "(--platform torch or --golden-platform torch; docs/torch.md)");
  /* A golden program without the torch plugin names it too. */
  if (strcmp(op, ST_PROGRAM_OP) == 0 && strlen(why) + 1 < sizeof why)
    snprintf(why + strlen(why), sizeof why - strlen(why),
             "; golden programs (golden: {torchscript|file|steps}) are run "
             "by the torch plugin (give --plugin PATH/scenetest_torch.so; "
             "docs/torch.md)");
  return st_error_set(err, ST_EMISSING,
                      "BackendImplementationMissing: backend '%s' is missing "
                      "required implementation: %s for op '%s' "
                      "(implemented by: %s)%s",
                      backend, kind == ST_LOOKUP_GOLDEN ? "golden" : "kernel",
                      op, impl, why);
found:
  *out = fn;
  return ST_OK;
}

int st_registry_has_platform(st_registry *reg, const char *platform) {
  size_t i, j;
  int found = 0;
  st__mutex_lock(&reg->lock);
  for (i = 0; i < reg->n_mods && !found; i++)
    for (j = 0; reg->mods[i].mod->platforms != NULL &&
                reg->mods[i].mod->platforms[j] != NULL;
         j++)
      if (strcmp(reg->mods[i].mod->platforms[j], platform) == 0)
        found = 1;
  for (i = 0; i < reg->n_lazies && !found; i++)
    found =
        has_str(reg->lazies[i].platforms, reg->lazies[i].n_platforms, platform);
  st__mutex_unlock(&reg->lock);
  return found;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void st_registry_platforms(st_registry *reg, char *buf, size_t size) {
  char **names = NULL;
  size_t n = 0, i, j, used = 0;
  int oom = 0;
  if (size == 0)
    return;
  buf[0] = '\0';
  st__mutex_lock(&reg->lock);
  for (i = 0; i < reg->n_mods && !oom; i++)
    for (j = 0; reg->mods[i].mod->platforms != NULL &&
                reg->mods[i].mod->platforms[j] != NULL && !oom;
         j++)
      oom = push_str(&names, &n, reg->mods[i].mod->platforms[j]) != 0;
  for (i = 0; i < reg->n_lazies && !oom; i++)
    for (j = 0; j < reg->lazies[i].n_platforms && !oom; j++)
      oom = push_str(&names, &n, reg->lazies[i].platforms[j]) != 0;
  st__mutex_unlock(&reg->lock);
  if (n > 0)
    qsort(names, n, sizeof *names, cmp_str);
  for (i = 0; i < n && used + 1 < size; i++) {
    int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", names[i]);
    if (w < 0)
      break;
    used += (size_t)w;
  }
  free_strs(names, n);
}

unsigned st__registry_repair_count(st_registry *reg, const char *backend) {
  st__backrec b;
  return back_get(reg, backend, &b) ? b.repairs : 0;
}

int st__registry_is_repaired(st_registry *reg, const char *backend) {
  st__backrec b;
  return back_get(reg, backend, &b) ? b.repaired : 0;
}

int st__registry_has_module(st_registry *reg, const st_module *mod) {
  st__modrec m;
  return mod_get(reg, mod->name, &m) && m.mod == mod;
}

int st__registry_module_complete(st_registry *reg, const char *module) {
  st__modrec m;
  return mod_get(reg, module, &m) ? m.complete : 0;
}

int st__registry_has_op(st_registry *reg, const char *op) {
  size_t i;
  int found = 0;
  st__mutex_lock(&reg->lock);
  for (i = 0; i < reg->n_entries && !found; i++)
    found = covers(reg->entries[i].op, op);
  for (i = 0; i < reg->n_declared && !found; i++)
    found = covers(reg->declared[i], op);
  st__mutex_unlock(&reg->lock);
  return found;
}
