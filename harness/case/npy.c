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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* mkdir -p. */
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

static int host_is_little_endian(void) {
  const unsigned one = 1;
  return *(const unsigned char *)&one == 1;
}

st_status st__npy_write(const char *dir, const char *stem, const st_tensor *t,
                        char *path, size_t size) {
  const char *d = descr(t->dtype);
  char header[512];
  /* Dtypes numpy lacks, written as their exact float32 values, say so in
   * the file name. */
  const char *as_f32 = t->dtype == ST_DTYPE_BFLOAT16        ? ".bf16-as-f32"
                       : t->dtype == ST_DTYPE_FLOAT8_E4M3FN ? ".float8_e4m3fn-as-f32"
                       : t->dtype == ST_DTYPE_FLOAT8_E5M2   ? ".float8_e5m2-as-f32"
                                                            : NULL;
  if (d == NULL || !host_is_little_endian())
    return ST_EINVAL;
  if (make_dirs(dir) != 0)
    return ST_EIO;
  snprintf(path, size, "%s/%s%s.npy", dir, stem, as_f32 ? as_f32 : "");
  size_t len = (size_t)snprintf(header, sizeof header,
                                "{'descr': '%s', 'fortran_order': False, "
                                "'shape': (",
                                d);
  for (int k = 0; k < t->ndim && len < sizeof header; k++)
    len += (size_t)snprintf(header + len, sizeof header - len, "%lld%s",
                            (long long)t->shape[k],
                            t->ndim == 1 ? "," : k + 1 < t->ndim ? ", " : "");
  if (len < sizeof header)
    len += (size_t)snprintf(header + len, sizeof header - len, "), }");
  /* 10 bytes of preamble; the header, its padding and '\n' end on a
   * multiple of 64. */
  size_t total = (10 + len + 1 + 63) / 64 * 64;
  if (total - 10 > 65535 || total - 10 >= sizeof header)
    return ST_EINVAL;
  memset(header + len, ' ', total - 10 - len - 1);
  header[total - 10 - 1] = '\n';
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                           (unsigned char)((total - 10) & 0xff),
                           (unsigned char)((total - 10) >> 8)};
  FILE *f = fopen(path, "wbe");
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
