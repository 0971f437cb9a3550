/* SPDX-License-Identifier: MIT */
/* The TIMING log parser: finds the [TIMING] token anywhere in a line (CI
 * logs add timestamps and prefixes, docs/measuring.md#the-phase-line), then
 * reads a `phase` line or a `torch_backend_autoload` record field by field
 * (docs/measuring.md#the-autoload-record). Every copy is bounded by its
 * destination; every number is range-checked; a line that is not what it claims
 * is ST__TL_BAD with a column and a reason, never a partial result. */
#include <string.h>

#include "tools/timelog.h"

#define TOKEN "[TIMING] "

typedef struct cursor {
  const char *s;
  size_t len, pos;
} cursor;

static st__tl_kind bad(st__tl_line *out, const cursor *c, const char *why) {
  memset(out, 0, sizeof *out);
  out->kind = ST__TL_BAD;
  out->column = c->pos + 1;
  out->error = why;
  return ST__TL_BAD;
}

/* memmem without the GNU extension. */
static const char *find_token(const char *s, size_t len) {
  size_t k = sizeof TOKEN - 1, i;
  for (i = 0; i + k <= len; i++)
    if (s[i] == '[' && memcmp(s + i, TOKEN, k) == 0)
      return s + i;
  return NULL;
}

static void skip_spaces(cursor *c) {
  while (c->pos < c->len && c->s[c->pos] == ' ')
    c->pos++;
}

/* A bare word: up to the next space, '=' or the end. */
static size_t word(cursor *c, const char **start, int stop_at_eq) {
  size_t b = c->pos;
  while (c->pos < c->len && c->s[c->pos] != ' ' &&
         !(stop_at_eq && c->s[c->pos] == '='))
    c->pos++;
  *start = c->s + b;
  return c->pos - b;
}

static int word_is(const char *w, size_t n, const char *lit) {
  return strlen(lit) == n && memcmp(w, lit, n) == 0;
}

/* A name: at least one byte, no control byte (a NUL among them). */
static int name_ok(const char *w, size_t n) {
  size_t i;
  if (n == 0)
    return -1;
  for (i = 0; i < n; i++)
    if ((unsigned char)w[i] < 0x20 || (unsigned char)w[i] == 0x7f)
      return -1;
  return 0;
}

/* A name as long as the line holds it, borrowed from the line. */
static int take_name(st__tl_text *dst, const char *w, size_t n) {
  if (name_ok(w, n) != 0)
    return -1;
  dst->s = w;
  dst->n = n;
  return 0;
}

static int copy_name(char *dst, size_t cap, const char *w, size_t n) {
  if (name_ok(w, n) != 0 || n >= cap)
    return -1;
  memcpy(dst, w, n);
  dst[n] = '\0';
  return 0;
}

/* Decimal digits only, no sign, no overflow. */
static int parse_u64(const char *w, size_t n, uint64_t *out) {
  uint64_t v = 0;
  size_t i;
  if (n == 0 || n > 20)
    return -1;
  for (i = 0; i < n; i++) {
    unsigned d;
    if (w[i] < '0' || w[i] > '9')
      return -1;
    d = (unsigned)(w[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

static int parse_long(const char *w, size_t n, long max, long *out) {
  uint64_t v;
  if (parse_u64(w, n, &v) != 0 || v > (uint64_t)max)
    return -1;
  *out = (long)v;
  return 0;
}

/* ---- phase lines -------------------------------------------------------- */

enum {
  F_PID = 1 << 0,
  F_SCENE = 1 << 1,
  F_CASE = 1 << 2,
  F_NAME = 1 << 3,
  F_ROUND = 1 << 4,
  F_DUR = 1 << 5,
  F_STATUS = 1 << 6,
  F_DEVICE = 1 << 7,
  F_COPY = 1 << 8,
  F_ITER = 1 << 9,
  F_REQUIRED = F_PID | F_SCENE | F_CASE | F_NAME | F_ROUND | F_DUR | F_STATUS
};

static const char *const statuses[] = {"ok", "fail", "error", "skip"};

/* Drops a "@k" repeat suffix (docs/cli.md) from a case name. */
static void strip_repeat(st__tl_text *kase) {
  size_t k = kase->n;
  while (k > 0 && kase->s[k - 1] >= '0' && kase->s[k - 1] <= '9')
    k--;
  if (k > 1 && k < kase->n && kase->s[k - 1] == '@')
    kase->n = k - 1;
}

static int name_value(cursor *c, st__tl_text *dst, char *buf, size_t cap);

static st__tl_kind parse_phase(cursor *c, st__tl_line *out) {
  st__tl_phase *ph = &out->u.phase;
  unsigned seen = 0;
  int bench_round = 0;

  /* The phase only: the union's record is 8 KiB, and this runs for
   * every line of a log. */
  memset(ph, 0, sizeof *ph);
  for (;;) {
    const char *k, *v;
    size_t kn, vn, at;
    unsigned bit = 0;
    int r = 0;

    skip_spaces(c);
    if (c->pos >= c->len)
      break;
    at = c->pos;
    kn = word(c, &k, 1);
    if (c->pos >= c->len || c->s[c->pos] != '=')
      return bad(out, c, "expected KEY=VALUE");
    c->pos++;
    if (word_is(k, kn, "scene") || word_is(k, kn, "case")) {
      bit = k[0] == 's' ? F_SCENE : F_CASE;
      r = name_value(c, bit == F_SCENE ? &ph->scene : &ph->kase,
                     out->qname[bit == F_SCENE ? 0 : 1], sizeof out->qname[0]);
      v = NULL;
      vn = 0;
    } else {
      vn = word(c, &v, 0);
    }
    if (bit != 0) {
      /* read above */
    } else if (word_is(k, kn, "pid")) {
      bit = F_PID;
      r = parse_long(v, vn, 0x7fffffffL, &ph->pid);
    } else if (word_is(k, kn, "name")) {
      bit = F_NAME;
      r = take_name(&ph->name, v, vn);
    } else if (word_is(k, kn, "round")) {
      long rv;
      bit = F_ROUND;
      if (word_is(v, vn, "-"))
        ph->round = -1;
      else if ((r = parse_long(v, vn, 0x7fffffffL, &rv)) == 0)
        ph->round = (int)rv;
    } else if (word_is(k, kn, "dur_ns")) {
      bit = F_DUR;
      r = parse_u64(v, vn, &ph->dur_ns);
    } else if (word_is(k, kn, "status")) {
      size_t i;
      bit = F_STATUS;
      r = -1;
      for (i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        if (word_is(v, vn, statuses[i])) {
          memcpy(ph->status, v, vn);
          ph->status[vn] = '\0';
          r = 0;
        }
    } else if (word_is(k, kn, "device_ns")) {
      bit = F_DEVICE;
      r = parse_u64(v, vn, &ph->device_ns);
      ph->has_device = 1;
    } else if (word_is(k, kn, "copy_ns")) {
      bit = F_COPY;
      r = parse_u64(v, vn, &ph->copy_ns);
      ph->has_copy = 1;
    } else if (word_is(k, kn, "iter")) {
      bit = F_ITER;
      r = parse_long(v, vn, 0x7fffffffL, &ph->iter);
    } else if ((word_is(k, kn, "warmup") || word_is(k, kn, "check")) &&
               word_is(v, vn, "1")) {
      /* A bench's warm-up or checked round (docs/bench.md): not a
       * sample of timing or compare. */
      bench_round = 1;
    }
    /* Unknown keys are a later version's fields: ignored. */
    if (bit != 0 && (seen & bit) != 0) {
      c->pos = at;
      return bad(out, c, "duplicate field");
    }
    if (r != 0) {
      c->pos = (size_t)(v - c->s);
      return bad(out, c, "bad field value");
    }
    seen |= bit;
  }
  if ((seen & F_REQUIRED) != F_REQUIRED)
    return bad(out, c,
               "phase line lacks one of pid, scene, case, name, round, "
               "dur_ns, status");
  strip_repeat(&ph->kase);
  if (bench_round) {
    out->kind = ST__TL_NONE;
    return ST__TL_NONE;
  }
  out->kind = ST__TL_PHASE;
  return ST__TL_PHASE;
}

/* ---- record lines ------------------------------------------------------- */

/* Expects "KEY=" at the cursor; leaves it on the value. */
static int expect_key(cursor *c, const char *key) {
  size_t n = strlen(key);
  skip_spaces(c);
  if (c->len - c->pos < n + 1 || memcmp(c->s + c->pos, key, n) != 0 ||
      c->s[c->pos + n] != '=')
    return -1;
  c->pos += n + 1;
  return 0;
}

/* A double-quoted value as the record's raw and the phase line's quoted
 * names print it (case/record.c st__timing_escape): escaped as \\ \" \n
 * \t \r and \ooo for every other byte below 0x20 or from 0x7f; nothing
 * else may appear unescaped, and a space or the end follows. Decodes
 * into dst (at most cap bytes, no NUL added) with the cursor on the
 * opening quote. */
static int decode_quoted(cursor *c, char *dst, size_t cap, size_t *len) {
  size_t n = 0;
  if (c->pos >= c->len || c->s[c->pos] != '"')
    return -1;
  c->pos++;
  for (;;) {
    unsigned char ch;
    if (c->pos >= c->len)
      return -1; /* unterminated */
    ch = (unsigned char)c->s[c->pos];
    if (ch == '"') {
      c->pos++;
      break;
    }
    if (ch < 0x20 || ch >= 0x7f)
      return -1; /* the printer escapes these */
    if (ch == '\\') {
      unsigned char e;
      if (c->pos + 1 >= c->len)
        return -1;
      e = (unsigned char)c->s[c->pos + 1];
      c->pos += 2;
      switch (e) {
      case '\\':
      case '"':
        ch = e;
        break;
      case 'n':
        ch = '\n';
        break;
      case 't':
        ch = '\t';
        break;
      case 'r':
        ch = '\r';
        break;
      default: {
        unsigned v = 0, i;
        if (c->pos + 2 > c->len)
          return -1;
        c->pos--; /* back onto the first digit */
        for (i = 0; i < 3; i++) {
          char d = c->s[c->pos + i];
          if (d < '0' || d > '7')
            return -1;
          v = v * 8 + (unsigned)(d - '0');
        }
        c->pos += 3;
        /* Only bytes the printer writes as octal may be octal. */
        if (v > 0377 || (v >= 0x20 && v < 0x7f) || v == '\n' || v == '\t' ||
            v == '\r')
          return -1;
        ch = (unsigned char)v;
        break;
      }
      }
    } else {
      c->pos++;
    }
    if (n >= cap)
      return -1;
    dst[n++] = (char)ch;
  }
  if (c->pos < c->len && c->s[c->pos] != ' ')
    return -1;
  *len = n;
  return 0;
}

/* A phase line's scene= or case= value: a bare word, or a quoted one
 * (a name holding a space, a quote, a backslash or a byte outside
 * 0x20..0x7e). */
static int name_value(cursor *c, st__tl_text *dst, char *buf, size_t cap) {
  const char *v;
  size_t n;
  if (c->pos < c->len && c->s[c->pos] == '"') {
    if (decode_quoted(c, buf, cap, &n) != 0 || n == 0 ||
        memchr(buf, '\0', n) != NULL)
      return -1;
    dst->s = buf;
    dst->n = n;
    return 0;
  }
  n = word(c, &v, 0);
  return take_name(dst, v, n);
}

/* The raw field exactly as docs/measuring.md#the-autoload-record prints it:
 * `-`, or a double-quoted string of the value's first 64 bytes (then `...`
 * inside the quotes), escaped as decode_quoted reads. Copies the printed text
 * and the decoded value. */
static int parse_raw(cursor *c, st__tl_record *rec) {
  size_t b = c->pos, n = 0;
  char tmp[64 + 3];

  if (c->pos < c->len && c->s[c->pos] == '-' &&
      (c->pos + 1 == c->len || c->s[c->pos + 1] == ' ')) {
    c->pos++;
    strcpy(rec->raw, "-");
    rec->value_len = 0;
    return 0;
  }
  /* Longer than 64 bytes plus "..." fails the cap. */
  if (decode_quoted(c, tmp, sizeof tmp, &n) != 0)
    return -1;
  if (n > 64) {
    /* Only a truncated value is longer than 64 bytes, and it is exactly
     * 64 bytes and "...". */
    if (n != 67 || memcmp(tmp + 64, "...", 3) != 0)
      return -1;
    rec->truncated = 1;
    n = 64;
  }
  if (c->pos - b >= sizeof rec->raw)
    return -1;
  memcpy(rec->raw, c->s + b, c->pos - b);
  rec->raw[c->pos - b] = '\0';
  memcpy(rec->value, tmp, n);
  rec->value[n] = '\0';
  rec->value_len = n;
  return 0;
}

static int parse_bool(cursor *c, int *out) {
  const char *v;
  size_t n = word(c, &v, 0);
  if (word_is(v, n, "true"))
    *out = 1;
  else if (word_is(v, n, "false"))
    *out = 0;
  else
    return -1;
  return 0;
}

static st__tl_kind parse_record(cursor *c, st__tl_line *out) {
  st__tl_record *rec = &out->u.record;
  static const char *const settings[] = {"unset", "0", "1", "invalid"};
  const char *v;
  size_t n, i;
  int ok = 0;

  memset(out, 0, sizeof *out);
  if (expect_key(c, "setting") != 0)
    return bad(out, c, "expected setting=");
  n = word(c, &v, 0);
  for (i = 0; i < sizeof settings / sizeof settings[0]; i++)
    if (word_is(v, n, settings[i])) {
      strcpy(rec->setting, settings[i]);
      ok = 1;
    }
  if (!ok)
    return bad(out, c, "setting must be unset, 0, 1 or invalid");
  if (expect_key(c, "raw") != 0)
    return bad(out, c, "expected raw=");
  if (parse_raw(c, rec) != 0)
    return bad(out, c,
               "bad raw value (not escaped as "
               "docs/measuring.md#the-autoload-record says)");
  if ((strcmp(rec->setting, "unset") == 0) != (strcmp(rec->raw, "-") == 0))
    return bad(out, c, "raw disagrees with setting");
  if (expect_key(c, "effective") != 0)
    return bad(out, c, "expected effective=");
  n = word(c, &v, 0);
  if (!word_is(v, n, "enabled") && !word_is(v, n, "disabled"))
    return bad(out, c, "effective must be enabled or disabled");
  memcpy(rec->effective, v, n);
  rec->effective[n] = '\0';
  if (expect_key(c, "torch_imported") != 0)
    return bad(out, c, "expected torch_imported=");
  strcpy(rec->modules[0].field, "torch_imported");
  if (parse_bool(c, &rec->modules[0].loaded) != 0)
    return bad(out, c, "expected true or false");
  if (expect_key(c, "torch_npu_loaded") != 0)
    return bad(out, c, "expected torch_npu_loaded=");
  strcpy(rec->modules[1].field, "torch_npu_loaded");
  if (parse_bool(c, &rec->modules[1].loaded) != 0)
    return bad(out, c, "expected true or false");
  rec->n_modules = 2;
  /* NAME_loaded=... fields of --watch modules, then pid. */
  for (;;) {
    const char *k;
    size_t kn;
    skip_spaces(c);
    kn = word(c, &k, 1);
    if (c->pos >= c->len || c->s[c->pos] != '=')
      return bad(out, c, "expected KEY=VALUE");
    if (word_is(k, kn, "pid")) {
      c->pos++;
      n = word(c, &v, 0);
      if (parse_long(v, n, 0x7fffffffL, &rec->pid) != 0)
        return bad(out, c, "bad pid");
      break;
    }
    if (kn <= 7 || memcmp(k + kn - 7, "_loaded", 7) != 0)
      return bad(out, c, "expected NAME_loaded= or pid=");
    if (rec->n_modules >= ST__TL_MODULES_MAX)
      return bad(out, c, "too many watched modules");
    for (i = 0; i < rec->n_modules; i++)
      if (word_is(k, kn, rec->modules[i].field))
        return bad(out, c, "duplicate field");
    if (copy_name(rec->modules[rec->n_modules].field, ST__TL_NAME_MAX, k, kn) !=
        0)
      return bad(out, c, "field name too long");
    c->pos++;
    if (parse_bool(c, &rec->modules[rec->n_modules].loaded) != 0)
      return bad(out, c, "expected true or false");
    rec->n_modules++;
  }
  skip_spaces(c);
  if (c->pos != c->len)
    return bad(out, c, "unexpected text after pid");
  out->kind = ST__TL_RECORD;
  return ST__TL_RECORD;
}

st__tl_kind st__timelog_parse(const char *line, size_t len, st__tl_line *out) {
  const char *tok;
  const char *w;
  size_t n;
  cursor c;

  out->kind = ST__TL_NONE;
  out->column = 0;
  out->error = NULL;
  if (len > 0 && line[len - 1] == '\n')
    len--;
  if (len > 0 && line[len - 1] == '\r')
    len--;
  tok = find_token(line, len);
  if (tok == NULL)
    return ST__TL_NONE;
  c.s = line;
  c.len = len;
  c.pos = (size_t)(tok - line) + sizeof TOKEN - 1;
  n = word(&c, &w, 0);
  if (word_is(w, n, "phase"))
    return parse_phase(&c, out);
  if (word_is(w, n, "torch_backend_autoload"))
    return parse_record(&c, out);
  return ST__TL_NONE;
}

int st__timelog_record_same(const st__tl_record *a, const st__tl_record *b) {
  size_t i;
  if (strcmp(a->setting, b->setting) != 0 || strcmp(a->raw, b->raw) != 0 ||
      strcmp(a->effective, b->effective) != 0 || a->n_modules != b->n_modules)
    return 0;
  /* Watched modules as a set: two runs may name their --watch options in
   * another order. Fields are unique within a record (the parser refuses a
   * duplicate), so equal counts and every field of a found in b suffice. */
  for (i = 0; i < a->n_modules; i++) {
    size_t j;
    for (j = 0; j < b->n_modules; j++)
      if (strcmp(a->modules[i].field, b->modules[j].field) == 0)
        break;
    if (j == b->n_modules || a->modules[i].loaded != b->modules[j].loaded)
      return 0;
  }
  return 1;
}
