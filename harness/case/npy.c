/* SPDX-License-Identifier: MIT */
/* The .npy writer behind --dump-on-fail: the NPY format, version 1.0, as
 * numpy/lib/format.py documents it (numpy.org/doc/stable/reference/
 * generated/numpy.lib.format.html): the magic "\x93NUMPY", version 1 0, a
 * little-endian uint16 header length, an ASCII dict literal with 'descr',
 * 'fortran_order' and 'shape', padded with spaces and ended by '\n' so
 * that the data starts at a multiple of 64 bytes (numpy pads so; 1.0
 * requires 16), then the data in C order. bfloat16 and FP8 have no numpy
 * dtype: they are written as float32, which holds every value of theirs
 * exactly. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "case/npy.h"

static const char *descr(st_dtype dt) {
  switch (dt) {
  case ST_DTYPE_FLOAT32:
  case ST_DTYPE_BFLOAT16: /* written as float32 */
    return "<f4";
  case ST_DTYPE_FLOAT64:
    return "<f8";
  case ST_DTYPE_FLOAT16:
    return "<f2";
  case ST_DTYPE_INT8:
    return "|i1";
  case ST_DTYPE_INT16:
    return "<i2";
  case ST_DTYPE_INT32:
    return "<i4";
  case ST_DTYPE_INT64:
    return "<i8";
  case ST_DTYPE_UINT8:
    return "|u1";
  case ST_DTYPE_UINT16:
    return "<u2";
  case ST_DTYPE_UINT32:
    return "<u4";
  case ST_DTYPE_UINT64:
    return "<u8";
  case ST_DTYPE_FLOAT8_E4M3FN: /* written as float32 */
  case ST_DTYPE_FLOAT8_E5M2:
    return "<f4";
  case ST_DTYPE_BOOL:
    return "|b1";
  default:
    return NULL;
  }
}

/* mkdir -p of the directory the user named (it may be a symlink of
 * theirs: followed). */
static int make_dirs(const char *dir) {
  char *p = strdup(dir);
  if (p == NULL)
    return -1;
  for (char *s = p + 1; *s; s++) {
    if (*s != '/')
      continue;
    *s = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      free(p);
      return -1;
    }
    *s = '/';
  }
  int rc = mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
  free(p);
  return rc;
}

/* A name the harness made (scene, case, file): one path component. */
static int one_component(const char *name) {
  return name[0] != '\0' && strchr(name, '/') == NULL &&
         strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* The directory name inside dfd, made if missing, opened without
 * following a symlink (docs/reliability.md: one planted in the dump
 * directory is refused, never followed). Closes dfd; -1 on failure. */
static int sub_dir(int dfd, const char *name) {
  int fd = -1;
  if (dfd >= 0 && one_component(name) &&
      (mkdirat(dfd, name, 0777) == 0 || errno == EEXIST))
    fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd >= 0)
    close(dfd);
  return fd;
}

/* A new file name in dfd: what was there (an earlier dump, or a symlink
 * planted in its place) is unlinked, never written through, and the file
 * is created with O_EXCL, so a symlink planted in between makes the open
 * fail rather than follow it. */
static FILE *new_file(int dfd, const char *name) {
  int fd;
  FILE *f;
  if (!one_component(name))
    return NULL;
  if (unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
    return NULL;
  fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
              0666);
  if (fd < 0)
    return NULL;
  if ((f = fdopen(fd, "wb")) == NULL)
    close(fd);
  return f;
}

static int host_is_little_endian(void) {
  const unsigned one = 1;
  return *(const unsigned char *)&one == 1;
}

st_status st__npy_write(const char *root, const char *scene, const char *kase,
                        const char *stem, const st_tensor *t, char *path,
                        size_t size) {
  const char *d = descr(t->dtype);
  char header[512], name[512];
  int dfd;
  /* Dtypes numpy lacks, written as their exact float32 values, say so in
   * the file name. */
  const char *as_f32 =
      t->dtype == ST_DTYPE_BFLOAT16        ? ".bf16-as-f32"
      : t->dtype == ST_DTYPE_FLOAT8_E4M3FN ? ".float8_e4m3fn-as-f32"
      : t->dtype == ST_DTYPE_FLOAT8_E5M2   ? ".float8_e5m2-as-f32"
                                           : NULL;
  if (d == NULL || !host_is_little_endian())
    return ST_EINVAL;
  if (make_dirs(root) != 0)
    return ST_EIO;
  snprintf(name, sizeof name, "%s%s.npy", stem, as_f32 ? as_f32 : "");
  snprintf(path, size, "%s/%s/%s/%s", root, scene, kase, name);
  size_t len = (size_t)snprintf(header, sizeof header,
                                "{'descr': '%s', 'fortran_order': False, "
                                "'shape': (",
                                d);
  for (int k = 0; k < t->ndim && len < sizeof header; k++)
    len += (size_t)snprintf(header + len, sizeof header - len, "%lld%s",
                            (long long)t->shape[k],
                            t->ndim == 1      ? ","
                            : k + 1 < t->ndim ? ", "
                                              : "");
  if (len < sizeof header)
    len += (size_t)snprintf(header + len, sizeof header - len, "), }");
  /* 10 bytes of preamble; the header, its padding and '\n' end on a
   * multiple of 64. */
  size_t total = (10 + len + 1 + 63) / 64 * 64;
  if (total - 10 > 65535 || total - 10 >= sizeof header)
    return ST_EINVAL;
  memset(header + len, ' ', total - 10 - len - 1);
  header[total - 10 - 1] = '\n';
  unsigned char pre[10] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           (unsigned char)((total - 10) & 0xff),
                           (unsigned char)((total - 10) >> 8)};
  dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  dfd = sub_dir(sub_dir(dfd, scene), kase);
  if (dfd < 0)
    return ST_EIO;
  FILE *f = new_file(dfd, name);
  close(dfd);
  if (f == NULL)
    return ST_EIO;
  int ok = fwrite(pre, 1, 10, f) == 10 &&
           fwrite(header, 1, total - 10, f) == total - 10;
  if (ok && as_f32 != NULL) {
    for (size_t i = 0; ok && i < t->numel; i++) {
      float v = (float)st_tensor_get_f64(t, i);
      ok = fwrite(&v, sizeof v, 1, f) == 1;
    }
  } else if (ok && t->nbytes > 0) {
    ok = fwrite(t->data, 1, t->nbytes, f) == t->nbytes;
  }
  if (fclose(f) != 0)
    ok = 0;
  return ok ? ST_OK : ST_EIO;
}
