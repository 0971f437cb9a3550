/* SPDX-License-Identifier: MIT */
/* The plugin ELF note parser (ops/note.c) over crafted files, each in a
 * heap buffer of exactly its size, so that ASan (and valgrind) see any
 * read past it: D9 of issue 13, where a crafted p_align made the old
 * reader compare a note name that lay past its buffer. The same inputs
 * seed tests/fuzz/note. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/plugin.h>

#include "ops/note.h"

/* A crafted file: an ELF64 header, n_ph program headers right after it,
 * then the segments' bytes. */
typedef struct {
  unsigned char *p;
  size_t len;
} file;

static void put_note(unsigned char *at, uint32_t namesz, uint32_t descsz,
                     uint32_t type) {
  memcpy(at, &namesz, 4);
  memcpy(at + 4, &descsz, 4);
  memcpy(at + 8, &type, 4);
}

/* One PT_NOTE segment holding the n bytes at seg, aligned as align says;
 * the segment is the file's last bytes. */
static file one_segment(const void *seg, size_t n, uint64_t align) {
  Elf64_Ehdr eh;
  Elf64_Phdr ph;
  file f;
  memset(&eh, 0, sizeof eh);
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_DYN;
  eh.e_phoff = sizeof eh;
  eh.e_phentsize = sizeof ph;
  eh.e_phnum = 1;
  memset(&ph, 0, sizeof ph);
  ph.p_type = PT_NOTE;
  ph.p_offset = sizeof eh + sizeof ph;
  ph.p_filesz = n;
  ph.p_align = align;
  f.len = sizeof eh + sizeof ph + n;
  f.p = malloc(f.len);
  assert_non_null(f.p);
  memcpy(f.p, &eh, sizeof eh);
  memcpy(f.p + sizeof eh, &ph, sizeof ph);
  memcpy(f.p + sizeof eh + sizeof ph, seg, n);
  return f;
}

/* Our note: "scenetest\0" padded to 12, then desc padded to 4. */
static size_t our_note(unsigned char *at, const char *desc) {
  size_t d = strlen(desc) + 1, padded = (d + 3) & ~(size_t)3;
  put_note(at, sizeof ST_NOTE_NAME, (uint32_t)d, ST_NOTE_TYPE_PLATFORMS);
  memset(at + 12, 0, 12 + padded);
  memcpy(at + 12, ST_NOTE_NAME, sizeof ST_NOTE_NAME);
  memcpy(at + 24, desc, d);
  return 24 + padded;
}

static st_status parse(file f, char **out, const char **why) {
  st_status rc = st__note_parse(f.p, f.len, out, why);
  free(f.p);
  return rc;
}

static void note_parse__finds_the_declaration(void **state) {
  unsigned char seg[64];
  char *out = NULL;
  const char *why = NULL;
  size_t n = our_note(seg, "a,b");
  (void)state;
  assert_int_equal(parse(one_segment(seg, n, 4), &out, &why), ST_OK);
  assert_string_equal(out, "a,b");
  free(out);
}

/* An ELF64 property note (8-aligned: "GNU\0" then the desc at 16) before
 * ours, in a segment of p_align 8. */
static void note_parse__after_an_8_aligned_note(void **state) {
  unsigned char seg[128];
  char *out = NULL;
  size_t n;
  (void)state;
  memset(seg, 0, sizeof seg);
  put_note(seg, 4, 16, NT_GNU_PROPERTY_TYPE_0);
  memcpy(seg + 12, "GNU", 4);
  /* name 12..16, desc 16..32 */
  n = 32 + our_note(seg + 32, "eight");
  assert_int_equal(parse(one_segment(seg, n, 8), &out, NULL), ST_OK);
  assert_string_equal(out, "eight");
  free(out);
}

/* D9: p_align 0xfffffffffffffff7 made the old reader's rounding of
 * namesz 10 come out as 0, so a note header that ends its segment passed
 * the checks and its "name", 10 bytes past the end, was compared. Now an
 * alignment other than 4 or 8 skips the segment, and with a sane one the
 * name must fit. */
static void d9__crafted_p_align_reads_nothing_past_the_end(void **state) {
  unsigned char seg[12];
  char *out = (char *)"not reset";
  const char *why = NULL;
  static const uint64_t aligns[] = {0xfffffffffffffff7ull, 0, 1, 4, 8,
                                    0x8000000000000000ull, 6, 16};
  size_t i;
  (void)state;
  put_note(seg, sizeof ST_NOTE_NAME, 0, ST_NOTE_TYPE_PLATFORMS);
  for (i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
    out = (char *)"not reset";
    assert_int_equal(parse(one_segment(seg, sizeof seg, aligns[i]), &out, &why),
                     ST_ENOTFOUND);
    assert_null(out);
    assert_non_null(why);
  }
}

/* The name fits but the desc's size runs past the segment; a desc that
 * fits exactly without its padding is read. */
static void note_parse__desc_sizes_checked(void **state) {
  unsigned char seg[64];
  char *out = NULL;
  (void)state;
  memset(seg, 0, sizeof seg);
  put_note(seg, sizeof ST_NOTE_NAME, 0xffffffffu, ST_NOTE_TYPE_PLATFORMS);
  memcpy(seg + 12, ST_NOTE_NAME, sizeof ST_NOTE_NAME);
  assert_int_equal(parse(one_segment(seg, 40, 4), &out, NULL), ST_ENOTFOUND);
  assert_null(out);
  /* descsz 3, "abc" with no NUL and no padding: the segment is 27 bytes. */
  put_note(seg, sizeof ST_NOTE_NAME, 3, ST_NOTE_TYPE_PLATFORMS);
  memcpy(seg + 24, "abc", 3);
  assert_int_equal(parse(one_segment(seg, 27, 4), &out, NULL), ST_OK);
  assert_string_equal(out, "abc");
  free(out);
  /* A huge namesz on another note ends the scan, no wrap. */
  put_note(seg, 0xfffffff0u, 0xfffffff0u, 7);
  assert_int_equal(parse(one_segment(seg, 40, 4), &out, NULL), ST_ENOTFOUND);
}

/* Headers and segments that lie outside the file are refused, not read. */
static void note_parse__out_of_file_offsets_refused(void **state) {
  unsigned char seg[64];
  Elf64_Ehdr eh;
  Elf64_Phdr ph;
  char *out = NULL;
  const char *why = NULL;
  file f;
  size_t n = our_note(seg, "x");
  (void)state;

  f = one_segment(seg, n, 4);
  memcpy(&eh, f.p, sizeof eh);
  eh.e_phoff = 0xffffffffffffffc0ull; /* + 56 wraps */
  memcpy(f.p, &eh, sizeof eh);
  assert_int_equal(parse(f, &out, &why), ST_EPLUGIN);
  assert_string_equal(why, "truncated program headers");

  f = one_segment(seg, n, 4);
  memcpy(&eh, f.p, sizeof eh);
  eh.e_phnum = 0xffff;
  memcpy(f.p, &eh, sizeof eh);
  assert_int_equal(parse(f, &out, &why), ST_EPLUGIN);

  f = one_segment(seg, n, 4);
  memcpy(&ph, f.p + sizeof eh, sizeof ph);
  ph.p_offset = 0xfffffffffffffff0ull; /* + p_filesz wraps */
  memcpy(f.p + sizeof eh, &ph, sizeof ph);
  assert_int_equal(parse(f, &out, &why), ST_EPLUGIN);
  assert_string_equal(why, "truncated note");

  f = one_segment(seg, n, 4);
  memcpy(&ph, f.p + sizeof eh, sizeof ph);
  ph.p_filesz = n + 1;
  memcpy(f.p + sizeof eh, &ph, sizeof ph);
  assert_int_equal(parse(f, &out, &why), ST_EPLUGIN);

  f = one_segment(seg, n, 4);
  memcpy(&eh, f.p, sizeof eh);
  eh.e_phentsize = 32;
  memcpy(f.p, &eh, sizeof eh);
  assert_int_equal(parse(f, &out, &why), ST_EPLUGIN);
  assert_string_equal(why, "not a 64-bit ELF shared object");

  /* Every prefix of a good file: refused or not found, never a read past
   * the prefix (ASan checks each exactly sized copy). */
  f = one_segment(seg, n, 4);
  {
    size_t k;
    for (k = 0; k < f.len; k++) {
      unsigned char *cut = malloc(k ? k : 1);
      assert_non_null(cut);
      memcpy(cut, f.p, k);
      assert_int_not_equal(st__note_parse(cut, k, &out, &why), ST_OK);
      assert_null(out);
      free(cut);
    }
  }
  free(f.p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(note_parse__finds_the_declaration),
      cmocka_unit_test(note_parse__after_an_8_aligned_note),
      cmocka_unit_test(d9__crafted_p_align_reads_nothing_past_the_end),
      cmocka_unit_test(note_parse__desc_sizes_checked),
      cmocka_unit_test(note_parse__out_of_file_offsets_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
