/* SPDX-License-Identifier: MIT */
/* The YAML node tree of the scene loader (scene/yaml_tree.c), its only
 * view of libyaml: nodes with their marks (1-based line and column),
 * scalars typed as docs/scene-format.md#values-and-scalars-in-yaml says,
 * aliases shared, merge keys applied. No libyaml type appears here. */
#ifndef SCENETEST_HARNESS_SCENE_YAML_TREE_H
#define SCENETEST_HARNESS_SCENE_YAML_TREE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A node's kind, and a scalar's type. */
enum { ST__YN_SCALAR, ST__YN_SEQ, ST__YN_MAP };
enum {
  ST__YS_NULL,
  ST__YS_INT,
  ST__YS_FLOAT,
  ST__YS_BOOL,
  ST__YS_STR,
  ST__YS_NAME
};

typedef struct st__ynode {
  unsigned char kind;   /* ST__YN_* */
  unsigned char sk;     /* ST__YS_*, scalars */
  unsigned char poison; /* stands for an unknown alias (already reported):
                           errors about it would only repeat that one */
  unsigned char nul;    /* a scalar whose value holds a NUL byte (a "\0"
                           escape): found once here, not by a strlen at
                           every st__ynode_is_str */
  int line, col;        /* 1-based */
  int text_col;         /* scalars: the column of the value's first
                           character when its bytes map one to one onto
                           columns (one line, no escapes), else 0: where
                           an expression's error points (st__val) */
  size_t size;          /* nodes in this subtree, aliases expanded */
  /* Kept small (56 bytes): a values list of a million numbers is a
   * million nodes. */
  union {
    struct { /* ST__YN_SEQ, ST__YN_MAP (key, value, key, ...) */
      struct st__ynode **kids;
      size_t n;
    };
    struct {           /* ST__YN_SCALAR */
      const char *str; /* NUL-terminated, len bytes */
      size_t len;
      int64_t i; /* ST__YS_INT, ST__YS_BOOL (0/1) */
      double f;  /* ST__YS_INT (as double), ST__YS_FLOAT, ST__YS_BOOL */
    };
  };
} st__ynode;

/* The tree of the document being parsed (its nodes and strings live in
 * an arena that the next document reuses). */
typedef struct st__ytree st__ytree;

/* Where st__ytree_parse hands its results; every function returns 0 to
 * go on, non-zero to stop parsing (the caller is out of memory). */
typedef struct st__ytree_sink {
  void *ctx;
  /* A problem at node at (its position; a poisoned one only counts, its
   * problem was reported), or, at NULL, at line:col. One line, printf
   * format. */
  int (*error)(void *ctx, const st__ynode *at, int line, int col,
               const char *fmt, va_list ap);
  /* A document's root, valid until document returns. */
  int (*document)(void *ctx, st__ytree *t, const st__ynode *root);
} st__ytree_sink;

/* Parses buf (len bytes, one YAML stream) document by document, each
 * into a tree of at most max_nodes nodes (aliases expanded, counted over
 * the whole stream): problems go to sink->error, roots to
 * sink->document. A stream without documents is an error ("empty
 * file"). Returns 0, or -1 when out of memory (or a sink function asked
 * to stop). Thread-safety: any thread. */
int st__ytree_parse(const char *buf /* IN */, size_t len, size_t max_nodes,
                    const st__ytree_sink *sink /* IN */);

/* A copy of s[0..len) that lives as long as t's document; NULL when out
 * of memory (then st__ytree_parse returns -1). */
const char *st__ytree_keep(st__ytree *t /* IN/OUT */, const char *s /* IN */,
                           size_t len);

/* n as an error message shows it: "a mapping", "a list", "nothing
 * (null)", a string quoted (its first 80 bytes, a NUL as \0), or a
 * number's text. */
void st__ynode_describe(const st__ynode *n /* IN */, char *buf /* OUT */,
                        size_t size);

/* libyaml's events one by one, for a reader that wants the stream as it
 * comes and stops at its first problem (the configuration file,
 * scene/config_file.c) rather than a tree. */
typedef enum st__yevent_type {
  ST__YE_OTHER, /* stream and document start and end */
  ST__YE_STREAM_END,
  ST__YE_SCALAR,
  ST__YE_SEQ_START,
  ST__YE_SEQ_END,
  ST__YE_MAP_START,
  ST__YE_MAP_END,
  ST__YE_ALIAS
} st__yevent_type;

typedef struct st__yevent {
  st__yevent_type type;
  int line, col;     /* where it starts, 1-based */
  const char *value; /* ST__YE_SCALAR: len bytes and a NUL; valid until
                        the next st__yevents_next */
  size_t len;
  int has_anchor; /* ST__YE_SCALAR, _SEQ_START, _MAP_START */
  int has_tag;
} st__yevent;

typedef struct st__yevents st__yevents;

/* A reader of f's YAML (f stays the caller's, open until
 * st__yevents_close); NULL when out of memory. Thread-safety: one
 * thread per reader. */
st__yevents *st__yevents_open(FILE *f /* IN */);
/* The next event into *ev: 0; -1 at a syntax error, with libyaml's
 * problem (NULL when it gives none) and its position (1-based) in
 * *problem, *line and *col; -2 when out of memory. */
int st__yevents_next(st__yevents *r /* IN/OUT */, st__yevent *ev /* OUT */,
                     const char **problem /* OUT */, int *line /* OUT */,
                     int *col /* OUT */);
/* Frees r (NULL accepted). */
void st__yevents_close(st__yevents *r /* IN, freed */);

/* FNV-1a of a string: the tree's anchors, and the loader's sets. */
static inline size_t st__ytree_hash(const char *s) {
  size_t h = 1469598103934665603ULL;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

/* A string scalar (quoted, or plain and not a number, bool or null)
 * without a NUL byte. */
static inline int st__ynode_is_str(const st__ynode *n) {
  return n->kind == ST__YN_SCALAR &&
         (n->sk == ST__YS_STR || n->sk == ST__YS_NAME) && !n->nul;
}

static inline int st__ynode_is_num(const st__ynode *n) {
  return n->kind == ST__YN_SCALAR &&
         (n->sk == ST__YS_INT || n->sk == ST__YS_FLOAT);
}

#endif
