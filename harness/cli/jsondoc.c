/* SPDX-License-Identifier: MIT */
/* The JSON tree reader of jsondoc.h. Every branch consumes a byte or
 * stops the reading with where it stopped and what was expected; nesting
 * is bounded (64), so no input recurses without end. */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli/jsondoc.h"

typedef struct rd {
  const char *p, *end, *line_start;
  size_t line;
  int depth;
  int oom;
  const char *expected; /* set when the reading stopped */
  const char *stop;
  size_t stop_line, stop_col;
} rd;

static void fail(rd *r, const char *expected) {
  if (r->expected != NULL || r->oom)
    return;
  r->expected = expected;
  r->stop_line = r->line;
  r->stop_col = (size_t)(r->p - r->line_start) + 1;
}

static int bad(const rd *r) { return r->expected != NULL || r->oom; }

static void skip_ws(rd *r) {
  while (r->p < r->end &&
         (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n')) {
    if (*r->p == '\n') {
      r->line++;
      r->line_start = r->p + 1;
    }
    r->p++;
  }
}

static void val_free(st__jval *v) {
  size_t i;
  free(v->str);
  if (v->type == ST__J_ARR || v->type == ST__J_OBJ) {
    for (i = 0; i < v->n; i++) {
      val_free(&v->items[i]);
      if (v->keys != NULL)
        free(v->keys[i]);
    }
  }
  free(v->items);
  free(v->keys);
}

void st__json_free(st__jval *vals, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    val_free(&vals[i]);
  free(vals);
}

int st__json_hexval(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* UTF-8 of cp (< 0x10000) into out; its length. */
static size_t utf8(unsigned cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  out[0] = (char)(0xe0 | (cp >> 12));
  out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[2] = (char)(0x80 | (cp & 0x3f));
  return 3;
}

int st__json_escape(const char *p, const char *end, char enc[4], size_t *add) {
  static const char letter[] = "\"\\/bfnrt", byte[] = "\"\\/\b\f\n\r\t";
  const char *at;
  unsigned cp = 0;
  int k;
  *add = 1;
  if (p < end && *p == 'u') {
    for (k = 1; k <= 4; k++) {
      int h = p + k < end ? st__json_hexval(p[k]) : -1;
      if (h < 0)
        return -1;
      cp = cp * 16 + (unsigned)h;
    }
    if (cp == 0)
      return -2;
    if (cp >= 0xd800 && cp <= 0xdfff)
      cp = 0xfffd;
    *add = utf8(cp, enc);
    return 5;
  }
  if (p >= end || *p == '\0' || (at = strchr(letter, *p)) == NULL)
    return 0;
  enc[0] = byte[at - letter];
  return 1;
}

/* A string at r->p ('"'): decoded into *out (malloc'd), *len. A \u
 * surrogate becomes U+FFFD; \u0000 and raw control bytes are refused. */
static void parse_string(rd *r, char **out, size_t *len) {
  size_t cap = 16, n = 0;
  char *buf = malloc(cap);

  *out = NULL;
  *len = 0;
  if (buf == NULL) {
    r->oom = 1;
    return;
  }
  r->p++;
  for (;;) {
    char enc[4];
    size_t add = 1;
    if (r->p >= r->end) {
      fail(r, "'\"' closing the string");
      break;
    }
    if ((unsigned char)*r->p < 0x20) {
      fail(r, "a character of the string (a control byte must be escaped)");
      break;
    }
    if (*r->p == '"') {
      r->p++;
      break;
    }
    if (*r->p == '\\') {
      const int took = st__json_escape(++r->p, r->end, enc, &add);
      if (took == 0) {
        fail(r, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
        break;
      }
      if (took < 0) {
        fail(r, "four hex digits (not 0000) after \\u");
        break;
      }
      r->p += took;
    } else {
      enc[0] = *r->p++;
    }
    if (cap - n < add + 1) {
      char *grown = st__array_resize(buf, cap * 2, 1);
      if (grown == NULL) {
        r->oom = 1;
        break;
      }
      buf = grown;
      cap *= 2;
    }
    memcpy(buf + n, enc, add);
    n += add;
  }
  if (bad(r)) {
    free(buf);
    return;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
}

static int is_digit(const char *p, const char *end) {
  return p < end && *p >= '0' && *p <= '9';
}

/* One or more digits at *p: 1, or 0 with *p where one was expected. */
static int digits(const char **p, const char *end) {
  if (!is_digit(*p, end))
    return 0;
  while (is_digit(*p, end))
    (*p)++;
  return 1;
}

int st__json_number(const char **p, const char *end) {
  if (*p < end && **p == '-')
    (*p)++;
  if (is_digit(*p, end) && **p == '0')
    (*p)++;
  else if (!digits(p, end))
    return 0;
  if (*p < end && **p == '.') {
    (*p)++;
    if (!digits(p, end))
      return 0;
  }
  if (*p < end && (**p == 'e' || **p == 'E')) {
    (*p)++;
    if (*p < end && (**p == '+' || **p == '-'))
      (*p)++;
    if (!digits(p, end))
      return 0;
  }
  return 1;
}

static void parse_number(rd *r, st__jval *v) {
  const char *start = r->p;
  if (!st__json_number(&r->p, r->end)) {
    fail(r, "a digit");
    return;
  }
  v->type = ST__J_NUM;
  v->len = (size_t)(r->p - start);
  if ((v->str = malloc(v->len + 1)) == NULL) {
    r->oom = 1;
    return;
  }
  memcpy(v->str, start, v->len);
  v->str[v->len] = '\0';
}

static void parse_value(rd *r, st__jval *v);

/* Appends a zeroed slot to v's items (and keys for an object). */
static st__jval *grow(rd *r, st__jval *v, size_t *cap) {
  if (v->n == *cap) {
    size_t ncap = *cap ? *cap * 2 : 4;
    st__jval *items = st__array_resize(v->items, ncap, sizeof *items);
    if (items == NULL) {
      r->oom = 1;
      return NULL;
    }
    v->items = items;
    if (v->type == ST__J_OBJ) {
      char **keys = st__array_resize(v->keys, ncap, sizeof *keys);
      if (keys == NULL) {
        r->oom = 1;
        return NULL;
      }
      v->keys = keys;
    }
    *cap = ncap;
  }
  memset(&v->items[v->n], 0, sizeof v->items[v->n]);
  if (v->keys != NULL)
    v->keys[v->n] = NULL;
  return &v->items[v->n++];
}

/* An array or object at r->p ('[' or '{'). */
static void parse_container(rd *r, st__jval *v, int obj) {
  size_t cap = 0;
  char close = obj ? '}' : ']';
  v->type = obj ? ST__J_OBJ : ST__J_ARR;
  r->p++;
  skip_ws(r);
  if (r->p < r->end && *r->p == close) {
    r->p++;
    return;
  }
  for (;;) {
    st__jval *slot;
    char *key = NULL;
    size_t klen;
    skip_ws(r);
    if (obj) {
      if (r->p >= r->end || *r->p != '"') {
        fail(r, "'\"' starting a member name");
        return;
      }
      parse_string(r, &key, &klen);
      if (bad(r))
        return;
      skip_ws(r);
      if (r->p >= r->end || *r->p != ':') {
        free(key);
        fail(r, "':' after the member name");
        return;
      }
      r->p++;
    }
    if ((slot = grow(r, v, &cap)) == NULL) {
      free(key);
      return;
    }
    if (obj)
      v->keys[v->n - 1] = key;
    parse_value(r, slot);
    if (bad(r))
      return;
    skip_ws(r);
    if (r->p < r->end && *r->p == ',') {
      r->p++;
      continue;
    }
    if (r->p < r->end && *r->p == close) {
      r->p++;
      return;
    }
    fail(r, obj ? "',' or '}'" : "',' or ']'");
    return;
  }
}

static void literal(rd *r, st__jval *v, const char *word, st__jtype t, int b) {
  size_t n = strlen(word);
  if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0) {
    fail(r, "a value");
    return;
  }
  r->p += n;
  v->type = t;
  v->b = b;
}

static void parse_value(rd *r, st__jval *v) {
  skip_ws(r);
  v->line = r->line;
  v->col = (size_t)(r->p - r->line_start) + 1;
  if (r->p >= r->end) {
    fail(r, "a value");
    return;
  }
  if (r->depth >= 64) {
    fail(r, "at most 64 nested arrays and objects");
    return;
  }
  r->depth++;
  switch (*r->p) {
  case '{':
  case '[':
    parse_container(r, v, *r->p == '{');
    break;
  case '"':
    v->type = ST__J_STR;
    parse_string(r, &v->str, &v->len);
    break;
  case 't':
    literal(r, v, "true", ST__J_BOOL, 1);
    break;
  case 'f':
    literal(r, v, "false", ST__J_BOOL, 0);
    break;
  case 'n':
    literal(r, v, "null", ST__J_NULL, 0);
    break;
  default:
    if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))
      parse_number(r, v);
    else
      fail(r, "a value");
  }
  r->depth--;
}

int st__json_parse(const char *text, size_t len, st__jval **vals, size_t *n,
                   st__jerr *err) {
  rd r;
  st__jval top;
  size_t cap = 0;
  const char *nul = memchr(text, '\0', len);

  *vals = NULL;
  *n = 0;
  memset(err, 0, sizeof *err);
  memset(&r, 0, sizeof r);
  memset(&top, 0, sizeof top);
  top.type = ST__J_ARR;
  r.p = r.line_start = text;
  /* A NUL byte is never JSON: the reading ends there. */
  r.end = nul != NULL ? nul : text + len;
  r.line = 1;
  for (;;) {
    st__jval *slot;
    skip_ws(&r);
    if (r.p >= r.end)
      break;
    if ((slot = grow(&r, &top, &cap)) == NULL)
      break;
    parse_value(&r, slot);
    if (bad(&r))
      break;
  }
  if (!bad(&r) && nul != NULL)
    fail(&r, "JSON text (a NUL byte is not)");
  if (bad(&r)) {
    int oom = r.oom;
    st__json_free(top.items, top.n);
    if (oom)
      return ST__JSON_NOMEM;
    err->line = r.stop_line;
    err->col = r.stop_col;
    err->expected = r.expected;
    return ST__JSON_BAD;
  }
  *vals = top.items;
  *n = top.n;
  return 0;
}

const st__jval *st__json_get(const st__jval *v, const char *key) {
  size_t i;
  const st__jval *hit = NULL;
  if (v == NULL || v->type != ST__J_OBJ)
    return NULL;
  for (i = 0; i < v->n; i++)
    if (strcmp(v->keys[i], key) == 0)
      hit = &v->items[i];
  return hit;
}

int st__json_u64(const st__jval *v, uint64_t *out) {
  size_t i;
  uint64_t x = 0;
  if (v == NULL || v->type != ST__J_NUM || v->len == 0)
    return 0;
  for (i = 0; i < v->len; i++) {
    unsigned d;
    if (v->str[i] < '0' || v->str[i] > '9')
      return 0;
    d = (unsigned)(v->str[i] - '0');
    if (x > (UINT64_MAX - d) / 10)
      return 0;
    x = x * 10 + d;
  }
  *out = x;
  return 1;
}
