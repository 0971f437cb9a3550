/* SPDX-License-Identifier: MIT */
/* A scene's golden program (docs/torch.md): `golden:` written as a mapping
 * (TorchScript source inline or from a file, or a list of ATen steps), as
 * the loader builds it, with what the loader knows of where each part is
 * written, so that errors the torch plugin reports inside the program can
 * be placed at a line of the YAML file (or of the `file:`). The program
 * itself is the public st_program (include/scenetest/program.h) that the
 * plugin receives; this file owns its storage. No libyaml here. */
#ifndef SCENETEST_HARNESS_PROGRAM_H
#define SCENETEST_HARNESS_PROGRAM_H

#include <scenetest/program.h>

/* golden_device: unset, cpu, cuda. */
enum { ST__DEVICE_UNSET = 0, ST__DEVICE_CPU = 1, ST__DEVICE_CUDA = 2 };

typedef struct st__program {
  st_program pub;   /* strings and arrays below are its storage; device
                       is NULL here (each call sets the case's) */
  int line, column; /* the `golden:` mapping */
  /* TorchScript: where line 1, column 1 of the source is written: in the
   * scene file for inline source (the block's first line and its
   * indentation), line 1 column 1 of src_file for `file:`. */
  char *src_file; /* the scene file, or the `file:` path joined to the
                     scene file's directory */
  int in_file;    /* 1: `file:` (src_file is not the scene file) */
  int src_line, src_column;
  int function_line, function_column; /* `function:`, else the mapping */
  int *step_line, *step_column;       /* STEPS: n_steps each */
  /* Where returns: is written (the mapping's position when absent). */
  int returns_line, returns_column;
} st__program;

/* A zeroed program of kind, pub.size set. NULL when out of memory.
 * Thread-safety: any thread. */
st__program *st__program_new(st_program_kind kind);
/* Frees p and everything it owns; accepts NULL. */
void st__program_free(st__program *p /* IN, owned */);

/* Appends a step (op copied); returns its index, or -1 when out of memory.
 * Args and outs are added with the calls below, to the last step. */
long st__program_add_step(st__program *p /* IN/OUT */, const char *op, int line,
                          int column);
/* Appends an arg to the last step; text (NAME, STRING) and ints are
 * copied. Returns 0, or -1 when out of memory. */
int st__program_add_arg(st__program *p /* IN/OUT */, const char *name,
                        const st_program_value *value /* IN */);
/* Appends a return name to the last step. 0, or -1 out of memory. */
int st__program_add_out(st__program *p /* IN/OUT */, const char *name);
/* Appends `output: value` to returns (and sets has_returns). */
int st__program_add_return(st__program *p /* IN/OUT */, const char *output,
                           const char *value);

/* Where line, column (1-based, of the program's source; column 0 unknown)
 * is in src_file. Thread-safety: any thread. */
void st__program_source_pos(const st__program *p /* IN */, int line, int column,
                            int *out_line /* OUT */, int *out_column /* OUT */);

#endif
