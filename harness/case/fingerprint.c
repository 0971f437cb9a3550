/* SPDX-License-Identifier: MIT */
/* The environment fingerprint (fingerprint.h). */
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include <scenetest/log.h>

#include "base/log_sink.h"
#include "base/proc.h"
#include "case/fingerprint.h"
#include "case/record.h"

/* src into dst (cap bytes), cut to fit. */
static void copy_cut(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap)
    n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static void add(st__fingerprint *fp, const char *key, const char *value) {
  if (fp->n >= ST__FP_MAX)
    return;
  copy_cut(fp->key[fp->n], sizeof fp->key[0], key);
  copy_cut(fp->value[fp->n], sizeof fp->value[0], value);
  fp->n++;
}

/* The first line of path starting with prefix, after its ':' and
 * spaces; "" when none. */
static void read_field(const char *path, const char *prefix, char *out,
                       size_t size) {
  char line[512];
  FILE *f = fopen(path, "re");
  out[0] = '\0';
  if (f == NULL)
    return;
  while (fgets(line, sizeof line, f) != NULL) {
    char *colon;
    if (prefix != NULL && strncmp(line, prefix, strlen(prefix)) != 0)
      continue;
    colon = prefix != NULL ? strchr(line, ':') : line - 1;
    if (colon == NULL)
      continue;
    colon++;
    while (*colon == ' ' || *colon == '\t')
      colon++;
    colon[strcspn(colon, "\n")] = '\0';
    copy_cut(out, size, colon);
    break;
  }
  fclose(f);
}

static int find_torch(struct dl_phdr_info *info, size_t size, void *data) {
  const char *name = info->dlpi_name, *base, *so;
  char *out = data;
  (void)size;
  if (name == NULL || (base = strrchr(name, '/')) == NULL)
    return 0;
  base++;
  if (strncmp(base, "libtorch_cpu.so", 15) != 0 &&
      strncmp(base, "libtorch.so", 11) != 0)
    return 0;
  so = strstr(base, ".so");
  /* libtorch_cpu.so.1.13: the version Debian's soname carries. */
  snprintf(out, 64, "%s", so[3] == '.' ? so + 4 : "loaded");
  return 1;
}

/* The platform's describe text `KEY="VALUE" ...` into fp, each key
 * prefixed with "PLATFORM."; stops at the first malformed pair. */
static void add_described(st__fingerprint *fp, const char *platform,
                          const char *s) {
  while (*s != '\0') {
    char key[64], value[256];
    size_t kn = 0, vn = 0;
    while (*s == ' ')
      s++;
    if (*s == '\0')
      break;
    while (*s != '\0' && *s != '=' && *s != ' ' && kn + 1 < sizeof key)
      key[kn++] = *s++;
    key[kn] = '\0';
    if (kn == 0 || s[0] != '=' || s[1] != '"')
      return;
    s += 2;
    while (*s != '\0' && *s != '"') {
      if (*s == '\\' && s[1] != '\0')
        s++;
      if (vn + 1 < sizeof value)
        value[vn++] = *s;
      s++;
    }
    value[vn] = '\0';
    if (*s != '"')
      return;
    s++;
    {
      char full[128];
      snprintf(full, sizeof full, "%s.%s", platform, key);
      add(fp, full, value);
    }
  }
}

void st__fingerprint_collect(st_registry *reg, const char *platform,
                             st__fingerprint *fp) {
  char buf[512];
  struct utsname u;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  const st_platform_hooks *h;

  memset(fp, 0, sizeof *fp);
  read_field("/proc/cpuinfo", "model name", buf, sizeof buf);
  add(fp, "cpu", buf[0] ? buf : "-");
  snprintf(buf, sizeof buf, "%ld", n > 0 ? n : 0);
  add(fp, "cpus", buf);
  read_field("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", NULL, buf,
             sizeof buf);
  add(fp, "governor", buf[0] ? buf : "-");
  add(fp, "kernel", uname(&u) == 0 ? u.release : "-");
#ifdef __GLIBC__
  snprintf(buf, sizeof buf, "glibc %s", gnu_get_libc_version());
#else
  snprintf(buf, sizeof buf, "-");
#endif
  add(fp, "libc", buf);
  snprintf(buf, sizeof buf, "-");
  dl_iterate_phdr(find_torch, buf);
  add(fp, "torch", buf);
  if (reg != NULL && platform != NULL &&
      (h = st_registry_platform_hooks(reg, platform)) != NULL &&
      h->describe != NULL) {
    char text[2048];
    text[0] = '\0';
    if (h->describe(text, sizeof text) == ST_OK) {
      text[sizeof text - 1] = '\0';
      add_described(fp, platform, text);
    }
  }
}

void st__fingerprint_format(const st__fingerprint *fp, char *buf, size_t size) {
  size_t i, used;
  char esc[4 * 256 + 1];
  used = (size_t)snprintf(buf, size, "fingerprint");
  for (i = 0; i < fp->n && used < size; i++) {
    st__timing_escape(fp->value[i], strlen(fp->value[i]), esc);
    used += (size_t)snprintf(buf + used, size - used, " %s=\"%s\"", fp->key[i],
                             esc);
  }
}

static pthread_mutex_t fp_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t fp_pid; /* guarded by: fp_lock; the process that logged it */

void st__fingerprint_log_once(st_registry *reg, const char *platform) {
  pid_t self = st__proc_pid();
  st__fingerprint fp;
  char line[ST__FP_MAX * (64 + 4 * 256 + 4) + 16];
  if (!st_log_enabled(ST_LOG_TIMING))
    return;
  pthread_mutex_lock(&fp_lock);
  if (fp_pid != self) {
    fp_pid = self;
    st__fingerprint_collect(reg, platform, &fp);
    st__fingerprint_format(&fp, line, sizeof line);
    st__log_timing("%s", line);
  }
  pthread_mutex_unlock(&fp_lock);
}
