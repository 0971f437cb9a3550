/* SPDX-License-Identifier: MIT */
/* The plugin ELF note parser (D9 of issue 13): finds the platform
 * declaration that ST_PLUGIN_PLATFORMS puts in a PT_NOTE segment, over a
 * buffer holding the file, reading nothing outside it. Every offset and
 * size in the file is untrusted: each is checked against what is left of
 * the buffer by subtraction (never by an addition that could wrap), and
 * alignments are 4 or 8 only, as readelf takes them. The old reader
 * rounded with the segment's p_align as given, so a crafted p_align made
 * it compare a note name that lay past its buffer. */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/plugin.h>

#include "ops/note.h"

/* Our declaration is a few bytes; a bigger note segment is someone
 * else's (and not worth a copy). */
#define MAX_NOTE_BYTES (1u << 20)

static int host_is_lsb(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* Rounds *x up to a multiple of align (4 or 8); -1 if that wraps. */
static int align_up(size_t *x, size_t align) {
  if (*x > SIZE_MAX - (align - 1))
    return -1;
  *x = (*x + align - 1) & ~(align - 1);
  return 0;
}

/* Scans one note segment, n bytes at p, whose notes are aligned to align
 * (4 or 8) from the segment's start. ST_ENOTFOUND when our note is not
 * there, or the segment is malformed before it. */
static st_status scan_segment(const unsigned char *p, size_t n, size_t align,
                              char **out) {
  size_t off = 0;
  /* The gABI's note header: namesz, descsz, type, each 4 bytes. */
  while (n - off >= 12) {
    uint32_t namesz, descsz, type;
    size_t name_at, desc_at, next;
    memcpy(&namesz, p + off, 4);
    memcpy(&descsz, p + off + 4, 4);
    memcpy(&type, p + off + 8, 4);
    name_at = off + 12;
    if (namesz > n - name_at)
      return ST_ENOTFOUND;
    /* name_at + namesz <= n, so no wrap; the padding may end the segment. */
    desc_at = name_at + namesz;
    if (align_up(&desc_at, align) != 0 || desc_at > n || descsz > n - desc_at)
      return ST_ENOTFOUND;
    if (type == ST_NOTE_TYPE_PLATFORMS && namesz == sizeof ST_NOTE_NAME &&
        memcmp(p + name_at, ST_NOTE_NAME, sizeof ST_NOTE_NAME) == 0) {
      *out = strndup((const char *)p + desc_at, descsz);
      return *out != NULL ? ST_OK : ST_ENOMEM;
    }
    next = desc_at + descsz;
    if (align_up(&next, align) != 0 || next > n)
      return ST_ENOTFOUND;
    off = next;
  }
  return ST_ENOTFOUND;
}

st_status st__note_parse(const void *buf, size_t len, char **out,
                         const char **why) {
  const unsigned char *file = buf;
  const char *dummy;
  Elf64_Ehdr eh;
  size_t i;

  *out = NULL;
  if (why == NULL)
    why = &dummy;
  *why = NULL;
  if (len < sizeof eh) {
    *why = "not a 64-bit ELF shared object";
    return ST_EPLUGIN;
  }
  memcpy(&eh, file, sizeof eh);
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != (host_is_lsb() ? ELFDATA2LSB : ELFDATA2MSB) ||
      (eh.e_phnum != 0 && eh.e_phentsize != sizeof(Elf64_Phdr))) {
    *why = "not a 64-bit ELF shared object";
    return ST_EPLUGIN;
  }
  /* e_phnum < 2^16, so the product cannot wrap. */
  if (eh.e_phoff > len ||
      (size_t)eh.e_phnum * sizeof(Elf64_Phdr) > len - eh.e_phoff) {
    *why = "truncated program headers";
    return ST_EPLUGIN;
  }
  for (i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    size_t align;
    st_status rc;
    memcpy(&ph, file + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type != PT_NOTE || ph.p_filesz == 0 ||
        ph.p_filesz > MAX_NOTE_BYTES)
      continue;
    if (ph.p_offset > len || ph.p_filesz > len - ph.p_offset) {
      *why = "truncated note";
      return ST_EPLUGIN;
    }
    /* readelf's rule: up to 4 means 4; 8 is 8 (ELF64 property notes);
     * anything else is a corrupt segment, skipped. */
    if (ph.p_align <= 4)
      align = 4;
    else if (ph.p_align == 8)
      align = 8;
    else
      continue;
    rc = scan_segment(file + ph.p_offset, (size_t)ph.p_filesz, align, out);
    if (rc != ST_ENOTFOUND) {
      if (rc != ST_OK)
        *why = "out of memory";
      return rc;
    }
  }
  *why = "no platform declaration (an ELF note made by "
         "ST_PLUGIN_PLATFORMS)";
  return ST_ENOTFOUND;
}
