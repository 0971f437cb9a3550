/* SPDX-License-Identifier: MIT */
/* The readers of --rerun-failed (docs/cli.md, docs/reliability.md): the
 * failed cases of an earlier report, which may be anything a crash, a full
 * disk or a hostile hand left behind. Each reader is small and strict
 * about structure, lenient only about members it does not need: a byte
 * that cannot start or continue a value is the end of the reading (never
 * skipped, never a loop that consumes nothing), a NUL byte is never text,
 * and every field is as long as the file holds it (malloc'd), bounded by
 * the file size --rerun-failed accepts. JSON: the document, or --events
 * JSON Lines (objects one after another), with the members "scene",
 * "case" and "status" (the event objects inside have no "scene"). JUnit
 * XML: a <testcase> holding <failure> or <error>. TAP: "not ok N -
 * SCENE::CASE" without a TODO directive (an expected failure). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli/jsondoc.h"
#include "cli/rerun_parse.h"

typedef struct names {
  char **items;
  size_t n, cap;
  int oom;
  int all;        /* every case with its duration (st__durations_parse) */
  uint64_t *durs; /* with all: items[i]'s duration_ns */
  uint64_t dur;   /* with all: the duration of the name being added */
} names;

void st__names_free(char **items, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    free(items[i]);
  free(items);
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Appends "scene::case" with a trailing "@k" (digits) dropped from the
 * case. */
static void add_name(names *l, const char *scene, size_t scene_len,
                     const char *kase, size_t kase_len) {
  size_t k = kase_len;
  char *s;

  while (k > 0 && kase[k - 1] >= '0' && kase[k - 1] <= '9')
    k--;
  if (k > 0 && k < kase_len && kase[k - 1] == '@')
    kase_len = k - 1;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 16;
    char **grown = st__array_resize(l->items, cap, sizeof *grown);
    if (grown == NULL) {
      l->oom = 1;
      return;
    }
    l->items = grown;
    if (l->all) {
      uint64_t *d = st__array_resize(l->durs, cap, sizeof *d);
      if (d == NULL) {
        l->oom = 1;
        return;
      }
      l->durs = d;
    }
    l->cap = cap;
  }
  if (l->all)
    l->durs[l->n] = l->dur;
  s = malloc(scene_len + kase_len + 3);
  if (s == NULL) {
    l->oom = 1;
    return;
  }
  memcpy(s, scene, scene_len);
  memcpy(s + scene_len, "::", 2);
  memcpy(s + scene_len + 2, kase, kase_len);
  s[scene_len + 2 + kase_len] = '\0';
  l->items[l->n++] = s;
}

static int failed_status(const char *s, size_t n) {
  return (n == 4 && memcmp(s, "fail", 4) == 0) ||
         (n == 5 && memcmp(s, "error", 5) == 0) ||
         (n == 5 && memcmp(s, "xpass", 5) == 0);
}

/* --- JSON (RFC 8259) --------------------------------------------------- */

typedef struct jp {
  const char *p, *end;
  int bad;
  int depth;
  names *out;
} jp;

/* A decoded string: text[0..len), malloc'd. */
typedef struct jstr {
  char *text;
  size_t len;
} jstr;

static void skip_ws(jp *j) {
  while (j->p < j->end && is_space(*j->p))
    j->p++;
}

/* After a member of an object or array: 1 at a ',' (consumed, another
 * member follows), 0 at close (consumed, the end) or, with j->bad set, at
 * anything else. */
static int next_member(jp *j, char close) {
  skip_ws(j);
  if (j->p < j->end && (*j->p == ',' || *j->p == close))
    return *j->p++ == ',';
  j->bad = 1;
  return 0;
}

/* The ':' between a member's name and value, with the spaces around it:
 * 1, or 0 with j->bad set. */
static int colon(jp *j) {
  skip_ws(j);
  if (j->p >= j->end || *j->p != ':') {
    j->bad = 1;
    return 0;
  }
  j->p++;
  skip_ws(j);
  return 1;
}

/* Decodes the escape after a '\' at j->p into enc (1 to 3 bytes, its
 * count in *add; st__json_escape): 0, or -1 for what RFC 8259 section 7
 * does not allow, with j->p where the reading stops (its position is the
 * --shard-by error's): past the letter, and past the digits of a \u0000. */
static int decode_escape(jp *j, char enc[4], size_t *add) {
  const int took = st__json_escape(j->p, j->end, enc, add);
  if (took > 0) {
    j->p += took;
    return 0;
  }
  if (j->p < j->end)
    j->p += took == -2 ? 5 : 1;
  return -1;
}

/* Parses a string at j->p (at '"'); with s, decodes it into *s (UTF-8,
 * malloc'd, as long as the file holds it). A raw byte below 0x20 (a NUL
 * among them) is not JSON text. */
static void parse_string(jp *j, jstr *s) {
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int keep = s != NULL;

  if (s != NULL)
    s->text = NULL;
  j->p++;
  for (;;) {
    char enc[4];
    size_t add = 1;
    unsigned char c;
    if (j->p >= j->end) {
      j->bad = 1;
      break;
    }
    c = (unsigned char)*j->p++;
    if (c == '"')
      break;
    if (c < 0x20) {
      j->bad = 1;
      break;
    }
    enc[0] = (char)c;
    if (c == '\\' && decode_escape(j, enc, &add) != 0) {
      j->bad = 1;
      break;
    }
    if (!keep)
      continue;
    if (len + add + 1 > cap) {
      size_t ncap = cap ? cap * 2 : 32;
      char *grown = st__array_resize(buf, ncap, 1);
      if (grown == NULL) {
        j->out->oom = 1;
        j->bad = 1;
        break;
      }
      buf = grown;
      cap = ncap;
    }
    memcpy(buf + len, enc, add);
    len += add;
  }
  if (keep && !j->bad) {
    if (buf == NULL)
      buf = calloc(1, 1);
    else
      buf[len] = '\0';
    if (buf == NULL) {
      j->out->oom = 1;
      j->bad = 1;
      return;
    }
    s->text = buf;
    s->len = len;
    return;
  }
  free(buf);
}

static void parse_number(jp *j) {
  if (!st__json_number(&j->p, j->end))
    j->bad = 1;
}

static void parse_literal(jp *j, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0) {
    j->bad = 1;
    return;
  }
  j->p += n;
}

static void parse_value(jp *j);

/* Steps over the opening byte of an object or array ending in `close`;
 * 0 when it is empty, having stepped over `close` as well. */
static int enter(jp *j, char close) {
  j->p++;
  skip_ws(j);
  if (j->p < j->end && *j->p == close) {
    j->p++;
    return 0;
  }
  return 1;
}

/* A non-negative integer at s[0..n) (digits only) into *v: 1, else 0. */
static int read_u64(const char *s, size_t n, uint64_t *v) {
  size_t i;
  *v = 0;
  if (n == 0)
    return 0;
  for (i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9' || *v > (UINT64_MAX - 9) / 10)
      return 0;
    *v = *v * 10 + (uint64_t)(s[i] - '0');
  }
  return 1;
}

static void parse_object(jp *j) {
  jstr scene = {NULL, 0}, kase = {NULL, 0}, status = {NULL, 0};
  uint64_t dur = 0;
  int has_dur = 0;
  if (!enter(j, '}'))
    return;
  while (!j->bad) {
    jstr key = {NULL, 0};
    jstr *slot = NULL;
    skip_ws(j);
    if (j->p >= j->end || *j->p != '"') {
      j->bad = 1;
      break;
    }
    parse_string(j, &key);
    if (j->bad)
      break;
    if (strcmp(key.text, "duration_ns") == 0) {
      const char *at;
      free(key.text);
      if (!colon(j))
        break;
      at = j->p;
      parse_value(j);
      has_dur = !j->bad && read_u64(at, (size_t)(j->p - at), &dur);
      if (!j->bad && !next_member(j, '}'))
        break;
      continue;
    }
    if (strcmp(key.text, "scene") == 0)
      slot = &scene;
    else if (strcmp(key.text, "case") == 0)
      slot = &kase;
    else if (strcmp(key.text, "status") == 0)
      slot = &status;
    free(key.text);
    if (!colon(j))
      break;
    if (slot != NULL && j->p < j->end && *j->p == '"') {
      free(slot->text);
      parse_string(j, slot);
    } else {
      parse_value(j);
    }
    if (!j->bad && !next_member(j, '}'))
      break;
  }
  if (!j->bad && scene.text && kase.text && status.text &&
      (j->out->all ? has_dur : failed_status(status.text, status.len))) {
    j->out->dur = dur;
    add_name(j->out, scene.text, scene.len, kase.text, kase.len);
  }
  free(scene.text);
  free(kase.text);
  free(status.text);
}

static void parse_array(jp *j) {
  if (!enter(j, ']'))
    return;
  while (!j->bad) {
    parse_value(j);
    if (j->bad || !next_member(j, ']'))
      break;
  }
}

/* One value at j->p (after whitespace). Every branch consumes at least
 * one byte or sets j->bad: the loops above rely on it. */
static void parse_value(jp *j) {
  skip_ws(j);
  if (j->p >= j->end || j->depth >= 64) {
    j->bad = 1; /* our reports nest 4 deep: deeper is not one of them */
    return;
  }
  j->depth++;
  switch (*j->p) {
  case '{':
    parse_object(j);
    break;
  case '[':
    parse_array(j);
    break;
  case '"':
    parse_string(j, NULL);
    break;
  case 't':
    parse_literal(j, "true");
    break;
  case 'f':
    parse_literal(j, "false");
    break;
  case 'n':
    parse_literal(j, "null");
    break;
  default:
    parse_number(j);
  }
  j->depth--;
}

/* The JSON document, or JSON Lines: objects one after another, separated
 * by whitespace only. */
static int read_json(const char *text, size_t len, names *out, size_t *stop) {
  jp j;
  memset(&j, 0, sizeof j);
  j.p = text;
  j.end = text + len;
  j.out = out;
  for (;;) {
    skip_ws(&j);
    if (j.p >= j.end)
      break;
    if (*j.p != '{') {
      j.bad = 1;
      break;
    }
    parse_value(&j);
    if (j.bad)
      break;
  }
  if (stop != NULL)
    *stop = (size_t)(j.p - text);
  return j.bad ? -1 : 0;
}

/* --- JUnit XML ------------------------------------------------------- */

/* A character reference's value at s[0..n) after "&#" ("N;" or "xN;"),
 * with *used the bytes it took past "&#"; -1 when it is not one. At most
 * 8 digits: every character fits. */
static long char_ref(const char *s, size_t n, size_t *used) {
  int hex = n > 0 && s[0] == 'x';
  size_t i = (size_t)hex, digits = 0;
  long v = 0;
  for (; i < n && digits <= 8; i++, digits++) {
    int d = hex ? st__json_hexval(s[i])
                : (s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1);
    if (d < 0)
      break;
    v = v * (hex ? 16 : 10) + d;
  }
  if (digits == 0 || digits > 8 || i >= n || s[i] != ';')
    return -1;
  *used = i + 1;
  return v;
}

/* Decodes an attribute value's entities (the five predefined ones and
 * character references) into a malloc'd string. */
static char *xml_unescape(const char *s, size_t n) {
  char *out = malloc(n + 1), *o = out;
  size_t i = 0;
  if (out == NULL)
    return NULL;
  while (i < n) {
    static const struct {
      const char *name;
      char c;
    } ents[] = {{"amp;", '&'},
                {"lt;", '<'},
                {"gt;", '>'},
                {"quot;", '"'},
                {"apos;", '\''}};
    size_t e, used;
    long v;
    if (s[i] != '&') {
      *o++ = s[i++];
      continue;
    }
    for (e = 0; e < sizeof ents / sizeof ents[0]; e++) {
      size_t l = strlen(ents[e].name);
      if (n - i - 1 >= l && memcmp(s + i + 1, ents[e].name, l) == 0) {
        *o++ = ents[e].c;
        i += 1 + l;
        break;
      }
    }
    if (e < sizeof ents / sizeof ents[0])
      continue;
    if (i + 1 < n && s[i + 1] == '#' &&
        (v = char_ref(s + i + 2, n - i - 2, &used)) >= 0) {
      /* Names are identifiers, so only ASCII matters; anything else
       * (and &#0;, which XML forbids) is kept as '?': it matches no
       * case. */
      *o++ = v > 0 && v < 0x80 ? (char)v : '?';
      i += 2 + used;
      continue;
    }
    *o++ = s[i++];
  }
  *o = '\0';
  return out;
}

/* The value of attribute name in the tag text [tag, end); NULL when it is
 * absent (*oom left alone) or cannot be held (*oom set). */
static char *xml_attr(const char *tag, const char *end, const char *name,
                      int *oom) {
  size_t nl = strlen(name);
  const char *p = tag;
  while (p < end) {
    const char *q;
    /* An attribute: whitespace, name, '=', a quoted value. */
    if ((p == tag || is_space(p[-1])) && (size_t)(end - p) > nl + 1 &&
        memcmp(p, name, nl) == 0 && p[nl] == '=' &&
        (p[nl + 1] == '"' || p[nl + 1] == '\'')) {
      char *v;
      q = memchr(p + nl + 2, p[nl + 1], (size_t)(end - p - nl - 2));
      if (q == NULL)
        return NULL;
      v = xml_unescape(p + nl + 2, (size_t)(q - p - nl - 2));
      if (v == NULL)
        *oom = 1;
      return v;
    }
    if (*p == '"' || *p == '\'') {
      /* Skip a value so that text inside it never reads as a name. */
      q = memchr(p + 1, *p, (size_t)(end - p - 1));
      p = q != NULL ? q + 1 : end;
      continue;
    }
    p++;
  }
  return NULL;
}

static const char *find(const char *p, const char *end, const char *s) {
  size_t n = strlen(s);
  for (; p < end && (size_t)(end - p) >= n; p++)
    if (*p == *s && memcmp(p, s, n) == 0)
      return p;
  return NULL;
}

/* Whether a tag <name follows at p (name then space, '>' or '/'). */
static int tag_is(const char *p, const char *end, const char *name) {
  size_t n = strlen(name);
  char after;
  if ((size_t)(end - p) <= n + 1 || p[0] != '<' || memcmp(p + 1, name, n) != 0)
    return 0;
  after = p[n + 1];
  return is_space(after) || after == '/' || after == '>';
}

static int read_junit(const char *text, size_t len, names *out) {
  const char *p = text, *end = text + len;
  int cases = 0;
  while ((p = find(p, end, "<testcase")) != NULL) {
    const char *gt, *body_end, *q;
    char *scene, *kase;
    int failed = 0;
    if (!tag_is(p, end, "testcase")) {
      p++;
      continue;
    }
    if ((gt = memchr(p, '>', (size_t)(end - p))) == NULL)
      return -1;
    cases++;
    scene = xml_attr(p + 9, gt, "classname", &out->oom);
    kase = xml_attr(p + 9, gt, "name", &out->oom);
    if (gt[-1] == '/') {
      body_end = gt;
    } else {
      body_end = find(gt, end, "</testcase>");
      if (body_end == NULL) {
        free(scene);
        free(kase);
        return -1;
      }
      for (q = gt; q < body_end; q++)
        if (tag_is(q, body_end, "failure") || tag_is(q, body_end, "error"))
          failed = 1;
    }
    if (failed && scene != NULL && kase != NULL)
      add_name(out, scene, strlen(scene), kase, strlen(kase));
    free(scene);
    free(kase);
    p = body_end;
  }
  return cases > 0 || find(text, end, "<testsuites") != NULL ? 0 : -1;
}

/* --- TAP (docs/reports.md) ------------------------------------------- */

/* Whether line[0..n) starts with the literal s. */
static int starts(const char *line, size_t n, const char *s) {
  size_t k = strlen(s);
  return n >= k && memcmp(line, s, k) == 0;
}

/* A point "not ok N - SCENE::CASE[ # DIRECTIVE]": a failure unless the
 * directive is TODO (an expected failure, docs/reports.md). -1 when the
 * line is not such a point of ours. */
static int tap_point(const char *line, size_t n, names *out) {
  size_t i = 7, d; /* past "not ok " */
  const char *desc, *sep, *hash;
  if (i >= n || line[i] < '0' || line[i] > '9')
    return -1;
  while (i < n && line[i] >= '0' && line[i] <= '9')
    i++;
  if (n - i < 3 || memcmp(line + i, " - ", 3) != 0)
    return -1;
  desc = line + i + 3;
  d = n - i - 3;
  /* Case ids hold no '#' (report_tap.c), so the first " #" is a
   * directive. */
  hash = find(desc, desc + d, " #");
  if (hash != NULL) {
    const char *dir = hash + 2;
    while (dir < desc + d && *dir == ' ')
      dir++;
    if ((size_t)(desc + d - dir) >= 4 && (dir[0] | 0x20) == 't' &&
        (dir[1] | 0x20) == 'o' && (dir[2] | 0x20) == 'd' &&
        (dir[3] | 0x20) == 'o')
      return 0;
    d = (size_t)(hash - desc);
  }
  sep = find(desc, desc + d, "::");
  if (sep == NULL || sep == desc || sep + 2 == desc + d)
    return -1;
  add_name(out, desc, (size_t)(sep - desc), sep + 2,
           (size_t)(desc + d - sep - 2));
  return 0;
}

/* TAP 13 as our reporter writes it: a version line or a plan first, then
 * points, YAML blocks and comments, which only "not ok" points matter
 * among. */
static int read_tap(const char *text, size_t len, names *out) {
  const char *p = text, *end = text + len;
  int first = 1;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl != NULL ? nl : end) - p);
    if (n > 0 && p[n - 1] == '\r')
      n--;
    if (first && n > 0) {
      if (!starts(p, n, "TAP version ") && !starts(p, n, "1.."))
        return -1;
      first = 0;
    } else if (starts(p, n, "not ok ") && tap_point(p, n, out) != 0) {
      return -1;
    }
    p = nl != NULL ? nl + 1 : end;
  }
  return 0;
}

int st__rerun_parse(const char *text, size_t len, char ***out_names,
                    size_t *n) {
  names l;
  size_t i = 0;
  int rc;

  *out_names = NULL;
  *n = 0;
  memset(&l, 0, sizeof l);
  while (i < len && is_space(text[i]))
    i++;
  if (i == len)
    return 0; /* an --events file of a run that selected nothing */
  /* None of our reports holds a NUL byte (JSON and XML cannot; TAP is
   * text): a file that does is a report lost in a crash, never "nothing
   * failed". */
  if (memchr(text, '\0', len) != NULL)
    return ST__RERUN_NOT_A_REPORT;
  if (text[i] == '<')
    rc = read_junit(text + i, len - i, &l);
  else if (text[i] == '{')
    rc = read_json(text + i, len - i, &l, NULL);
  else if (text[i] == 'T' || text[i] == '1')
    rc = read_tap(text + i, len - i, &l);
  else
    rc = -1;
  if (l.oom || rc != 0) {
    st__names_free(l.items, l.n);
    return l.oom ? ST__RERUN_NOMEM : ST__RERUN_NOT_A_REPORT;
  }
  *out_names = l.items;
  *n = l.n;
  return 0;
}

int st__durations_parse(const char *text, size_t len, char ***out_names,
                        uint64_t **durs, size_t *n, size_t *stop) {
  names l;
  size_t i = 0, at = 0;
  const char *nul;
  int rc;

  *out_names = NULL;
  *durs = NULL;
  *n = 0;
  memset(&l, 0, sizeof l);
  l.all = 1;
  while (i < len && is_space(text[i]))
    i++;
  *stop = i;
  if (i == len)
    return 0;
  if ((nul = memchr(text, '\0', len)) != NULL) {
    *stop = (size_t)(nul - text);
    return ST__RERUN_NOT_A_REPORT;
  }
  rc = text[i] == '{' ? read_json(text + i, len - i, &l, &at) : -1;
  *stop = i + at;
  if (l.oom || rc != 0) {
    st__names_free(l.items, l.n);
    free(l.durs);
    return l.oom ? ST__RERUN_NOMEM : ST__RERUN_NOT_A_REPORT;
  }
  *out_names = l.items;
  *durs = l.durs;
  *n = l.n;
  return 0;
}
