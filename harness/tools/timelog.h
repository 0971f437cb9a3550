/* SPDX-License-Identifier: MIT */
/* The TIMING log parser (docs/measuring.md): one line of any log in, one
 * phase sample or autoload record out. A pure function over a buffer: no
 * allocation, no global state, work linear in the line; a phase line's
 * names point into the line (as long as the line, so a valid run's long
 * case name is read whole), a record's fields are of fixed size. Hostile
 * lines are refused rather than trusted. CLI-private (tools layer). */
#ifndef SCENETEST_HARNESS_TIMELOG_H
#define SCENETEST_HARNESS_TIMELOG_H

#include <stddef.h>
#include <stdint.h>

/* Longest watched module field a record may carry, and the most watched
 * modules. Longer or more is a malformed line. */
#define ST__TL_NAME_MAX 256
#define ST__TL_MODULES_MAX 32
/* The raw field as printed: at most 64 escaped bytes (4 each), "...",
 * two quotes. */
#define ST__TL_RAW_MAX (64 * 4 + 3 + 2 + 1)

typedef enum st__tl_kind {
  ST__TL_NONE = 0,   /* no [TIMING] token, a TIMING line of another kind,
                        or a bench warm-up/checked round (warmup=1,
                        check=1: docs/bench.md) */
  ST__TL_PHASE = 1,  /* a phase sample */
  ST__TL_RECORD = 2, /* a torch_backend_autoload record */
  ST__TL_BAD = 3     /* a phase or record line that does not parse */
} st__tl_kind;

/* Bytes of the parsed line: s[0..n), n > 0, no control byte; not
 * NUL-terminated. Borrowed: valid while the line is. */
typedef struct st__tl_text {
  const char *s;
  size_t n;
} st__tl_text;

typedef struct st__tl_phase {
  long pid;
  st__tl_text scene;
  st__tl_text kase; /* without a "@k" repeat suffix */
  st__tl_text name;
  int round; /* -1 for "-" */
  long iter; /* 0 when absent */
  uint64_t dur_ns;
  char status[8]; /* ok, fail, error, skip */
  int has_device, has_copy;
  uint64_t device_ns, copy_ns;
} st__tl_phase;

typedef struct st__tl_module {
  char field[ST__TL_NAME_MAX]; /* the field name as printed: torch_imported,
                                  torch_npu_loaded, NAME_loaded */
  int loaded;
} st__tl_module;

typedef struct st__tl_record {
  long pid;
  char setting[8];          /* unset, 0, 1, invalid */
  char raw[ST__TL_RAW_MAX]; /* as printed: - or "..." with its escapes */
  char value[65];           /* raw decoded (may hold NUL bytes: value_len) */
  size_t value_len;
  int truncated;     /* raw ended in ... (value longer than 64) */
  char effective[9]; /* enabled, disabled */
  size_t n_modules;
  st__tl_module modules[ST__TL_MODULES_MAX];
} st__tl_record;

/* The longest scene or case name a quoted scene=/case= value decodes to
 * (names holding a space, a quote or a byte outside 0x20..0x7e are written
 * quoted); bare names have no bound. */
#define ST__TL_QNAME_MAX 4096

typedef struct st__tl_line {
  st__tl_kind kind;
  size_t column;     /* ST__TL_BAD: 1-based column of the problem */
  const char *error; /* ST__TL_BAD: a static message */
  union {
    st__tl_phase phase;
    st__tl_record record;
  } u;
  /* Where quoted scene and case names are decoded to (phase.scene and
   * phase.kase then point here). */
  char qname[2][ST__TL_QNAME_MAX];
} st__tl_line;

/* Parses one line (line[0..len), without or with its '\n'; a trailing
 * '\r' is dropped). The [TIMING] token may be anywhere; "phase" and
 * "torch_backend_autoload" lines are parsed in full, other TIMING lines
 * are ST__TL_NONE. Returns out->kind. Thread-safety: any thread. */
st__tl_kind st__timelog_parse(const char *line /* IN */, size_t len,
                              st__tl_line *out /* OUT */);

/* 1 if two records describe the same conditions: every field but pid,
 * raw compared as printed, watched modules in any order.
 * Thread-safety: any thread. */
int st__timelog_record_same(const st__tl_record *a /* IN */,
                            const st__tl_record *b /* IN */);

#endif
