/* SPDX-License-Identifier: MIT */
/* --rerun-failed FILE (SPEC §10, pytest's --lf): the cases an earlier
 * report says failed, errored or passed unexpectedly. FILE is one of our
 * own reports, told apart by its first byte: '<' JUnit XML (a <testcase>
 * holding <failure> or <error>), '{' either the JSON document or --events
 * JSON Lines (an object with string members "scene", "case" and "status";
 * the event objects inside have no "scene"). Both readers are small and
 * strict about structure, lenient about what they do not need; a file
 * that is neither is a usage error. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_internal.h"
#include "report/json.h"

#define MAX_REPORT_BYTES (1u << 30)

typedef struct names {
  char **items;
  size_t n, cap;
  int oom;
} names;

void st__names_free(char **items, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    free(items[i]);
  free(items);
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
    char **grown = realloc(l->items, cap * sizeof *grown);
    if (grown == NULL) {
      l->oom = 1;
      return;
    }
    l->items = grown;
    l->cap = cap;
  }
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

/* --- JSON ------------------------------------------------------------ */

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
  while (j->p < j->end &&
         (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
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

static int hexval(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* The byte a one-letter escape \c stands for (RFC 8259 section 7, \u
 * aside): \n \t \r \b \f their control bytes, \" \\ \/ (and, leniently,
 * any other letter) the letter itself. */
static char escaped_byte(char c) {
  static const char letter[] = "ntrbf", byte[] = "\n\t\r\b\f";
  const char *at = c != '\0' ? strchr(letter, c) : NULL;
  return at != NULL ? byte[at - letter] : c;
}

/* Parses a string at j->p (at '"'); with keep, decodes it into *s
 * (UTF-8; \u escapes decoded; a \u naming a surrogate, paired or not,
 * becomes U+FFFD: our reports write characters past U+FFFF as UTF-8, so
 * the names they hold never need one).
 * Long because: one loop over the string's bytes whose switch has a case
 * per JSON escape (RFC 8259 §7), \u with its UTF-8 encoding the
 * longest. */
static void parse_string(jp *j, jstr *s, int keep) {
  char *buf = NULL;
  size_t len = 0, cap = 0;

  if (s != NULL)
    s->text = NULL;
  j->p++;
  for (;;) {
    char c;
    char enc[4];
    size_t add = 1;
    if (j->p >= j->end) {
      j->bad = 1;
      break;
    }
    c = *j->p++;
    if (c == '"')
      break;
    enc[0] = c;
    if (c == '\\') {
      if (j->p >= j->end) {
        j->bad = 1;
        break;
      }
      c = *j->p++;
      switch (c) {
      case 'u': {
        uint32_t cp = 0;
        int k;
        if (j->end - j->p < 4) {
          j->bad = 1;
          goto out;
        }
        for (k = 0; k < 4; k++) {
          int h = hexval(j->p[k]);
          if (h < 0) {
            j->bad = 1;
            goto out;
          }
          cp = cp << 4 | (uint32_t)h;
        }
        j->p += 4;
        if (cp >= 0xD800 && cp <= 0xDFFF)
          cp = 0xFFFD; /* names never hold them; keep the reader small */
        if (cp < 0x80) {
          enc[0] = (char)cp;
        } else if (cp < 0x800) {
          enc[0] = (char)(0xC0 | (cp >> 6));
          enc[1] = (char)(0x80 | (cp & 0x3F));
          add = 2;
        } else {
          enc[0] = (char)(0xE0 | (cp >> 12));
          enc[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
          enc[2] = (char)(0x80 | (cp & 0x3F));
          add = 3;
        }
        break;
      }
      default:
        enc[0] = escaped_byte(c);
      }
    }
    if (!keep)
      continue;
    if (len + add + 1 > cap) {
      size_t ncap = cap ? cap * 2 : 32;
      char *grown = realloc(buf, ncap);
      if (grown == NULL) {
        j->out->oom = 1;
        keep = 0;
        continue;
      }
      buf = grown;
      cap = ncap;
    }
    memcpy(buf + len, enc, add);
    len += add;
  }
out:
  if (keep && s != NULL && !j->bad) {
    if (buf == NULL)
      buf = calloc(1, 1);
    else
      buf[len] = '\0';
    s->text = buf;
    s->len = len;
    return;
  }
  free(buf);
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

static void parse_object(jp *j) {
  jstr scene = {NULL, 0}, kase = {NULL, 0}, status = {NULL, 0};
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
    parse_string(j, &key, 1);
    if (j->bad || key.text == NULL)
      break;
    if (strcmp(key.text, "scene") == 0)
      slot = &scene;
    else if (strcmp(key.text, "case") == 0)
      slot = &kase;
    else if (strcmp(key.text, "status") == 0)
      slot = &status;
    free(key.text);
    skip_ws(j);
    if (j->p >= j->end || *j->p != ':') {
      j->bad = 1;
      break;
    }
    j->p++;
    skip_ws(j);
    if (slot != NULL && j->p < j->end && *j->p == '"') {
      free(slot->text);
      parse_string(j, slot, 1);
    } else {
      parse_value(j);
    }
    if (!next_member(j, '}'))
      break;
  }
  if (!j->bad && scene.text && kase.text && status.text &&
      failed_status(status.text, status.len))
    add_name(j->out, scene.text, scene.len, kase.text, kase.len);
  free(scene.text);
  free(kase.text);
  free(status.text);
}

static void parse_array(jp *j) {
  if (!enter(j, ']'))
    return;
  while (!j->bad) {
    parse_value(j);
    if (!next_member(j, ']'))
      break;
  }
}

static void parse_value(jp *j) {
  skip_ws(j);
  if (j->p >= j->end || ++j->depth > 64) {
    j->bad = 1; /* our reports nest 4 deep: deeper is not one of them */
    return;
  }
  switch (*j->p) {
  case '{':
    parse_object(j);
    break;
  case '[':
    parse_array(j);
    break;
  case '"':
    parse_string(j, NULL, 0);
    break;
  default:
    /* A number, true, false or null: its characters, not checked. */
    if (strchr("-0123456789tfn", *j->p) == NULL) {
      j->bad = 1;
      break;
    }
    while (j->p < j->end && strchr(",]} \t\r\n", *j->p) == NULL)
      j->p++;
  }
  j->depth--;
}

/* The JSON document, or JSON Lines (values one after another). */
static int read_json(const char *text, size_t len, names *out) {
  jp j;
  memset(&j, 0, sizeof j);
  j.p = text;
  j.end = text + len;
  j.out = out;
  for (;;) {
    skip_ws(&j);
    if (j.p >= j.end || j.bad)
      break;
    parse_value(&j);
  }
  return j.bad ? -1 : 0;
}

/* --- JUnit XML ------------------------------------------------------- */

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
    size_t e;
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
    if (i + 2 < n && s[i + 1] == '#') {
      /* &#N; or &#xN;: names are identifiers, so only ASCII matters;
       * anything else is kept as '?' (it matches no case). */
      char *end;
      unsigned long v = s[i + 2] == 'x' ? strtoul(s + i + 3, &end, 16)
                                        : strtoul(s + i + 2, &end, 10);
      if (end < s + n && *end == ';') {
        *o++ = v > 0 && v < 0x80 ? (char)v : '?';
        i = (size_t)(end - s) + 1;
        continue;
      }
    }
    *o++ = s[i++];
  }
  *o = '\0';
  return out;
}

/* The value of attribute name in the tag text [tag, end). */
static char *xml_attr(const char *tag, const char *end, const char *name) {
  size_t nl = strlen(name);
  const char *p = tag;
  while (p < end) {
    const char *q;
    char quote;
    /* An attribute: whitespace, name, '=', a quoted value. */
    if ((p == tag || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n' ||
         p[-1] == '\r') &&
        (size_t)(end - p) > nl + 1 && memcmp(p, name, nl) == 0 &&
        p[nl] == '=' && (p[nl + 1] == '"' || p[nl + 1] == '\'')) {
      quote = p[nl + 1];
      q = memchr(p + nl + 2, quote, (size_t)(end - p - nl - 2));
      if (q == NULL)
        return NULL;
      return xml_unescape(p + nl + 2, (size_t)(q - p - nl - 2));
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
  for (; p + n <= end; p++)
    if (memcmp(p, s, n) == 0)
      return p;
  return NULL;
}

/* Whether a tag <name follows at p (name then space, '>' or '/'). */
static int tag_is(const char *p, const char *end, const char *name) {
  size_t n = strlen(name);
  return (size_t)(end - p) > n + 1 && p[0] == '<' &&
         memcmp(p + 1, name, n) == 0 && strchr(" \t\r\n/>", p[n + 1]) != NULL;
}

static int read_junit(const char *text, size_t len, names *out) {
  const char *p = text, *end = text + len;
  int cases = 0;
  while ((p = find(p, end, "<testcase")) != NULL) {
    const char *gt, *body_end;
    char *scene, *kase;
    int failed = 0;
    if (!tag_is(p, end, "testcase")) {
      p++;
      continue;
    }
    if ((gt = memchr(p, '>', (size_t)(end - p))) == NULL)
      return -1;
    cases++;
    scene = xml_attr(p + 9, gt, "classname");
    kase = xml_attr(p + 9, gt, "name");
    if (gt[-1] == '/') {
      body_end = gt;
    } else {
      body_end = find(gt, end, "</testcase>");
      if (body_end == NULL) {
        free(scene);
        free(kase);
        return -1;
      }
      {
        const char *q;
        for (q = gt; q < body_end; q++)
          if (tag_is(q, body_end, "failure") || tag_is(q, body_end, "error"))
            failed = 1;
      }
    }
    if (failed && scene != NULL && kase != NULL)
      add_name(out, scene, strlen(scene), kase, strlen(kase));
    free(scene);
    free(kase);
    p = body_end;
  }
  return cases > 0 || find(text, end, "<testsuites") != NULL ? 0 : -1;
}

int st__rerun_read(const char *path, char ***out_names, size_t *n) {
  FILE *f = fopen(path, "rbe");
  char *text = NULL;
  size_t len = 0, cap = 0, i = 0;
  names l;
  int rc;

  *out_names = NULL;
  *n = 0;
  memset(&l, 0, sizeof l);
  if (f == NULL)
    return st__cli_usage("--rerun-failed: cannot read '%s': %s", path,
                         strerror(errno));
  for (;;) {
    size_t got;
    if (cap - len < 65536) {
      char *grown;
      cap = cap ? cap * 2 : 65536;
      if (cap > MAX_REPORT_BYTES + 1 || (grown = realloc(text, cap)) == NULL) {
        free(text);
        fclose(f);
        return st__cli_usage("--rerun-failed: '%s' is too large to be a report",
                             path);
      }
      text = grown;
    }
    got = fread(text + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0)
      break;
  }
  if (ferror(f)) {
    free(text);
    fclose(f);
    return st__cli_usage("--rerun-failed: cannot read '%s'", path);
  }
  fclose(f);
  text[len] = '\0';
  while (i < len && strchr(" \t\r\n", text[i]) != NULL)
    i++;
  if (i == len)
    rc = 0; /* an --events file of a run that selected nothing */
  else if (text[i] == '<')
    rc = read_junit(text, len, &l);
  else if (text[i] == '{')
    rc = read_json(text, len, &l);
  else
    rc = -1;
  free(text);
  if (l.oom) {
    st__names_free(l.items, l.n);
    fputs("scenetest: error: internal error: out of memory reading "
          "--rerun-failed\n",
          stderr);
    return 3;
  }
  if (rc != 0) {
    st__names_free(l.items, l.n);
    return st__cli_usage(
        "--rerun-failed: '%s' is not an --events, json or junit "
        "report of scenetest",
        path);
  }
  *out_names = l.items;
  *n = l.n;
  return 0;
}
