/* SPDX-License-Identifier: MIT */
/* The plugin ELF note parser: a pure function over a file's bytes, so
 * that every bound can be checked in one place and fuzzed
 * (tests/fuzz/note). plugin.c maps the file and calls it. */
#ifndef SCENETEST_HARNESS_NOTE_H
#define SCENETEST_HARNESS_NOTE_H
#include <stddef.h>

#include <scenetest/common.h>

/* Finds the platform declaration (ST_PLUGIN_PLATFORMS's note: name
 * ST_NOTE_NAME, type ST_NOTE_TYPE_PLATFORMS) in the PT_NOTE segments of
 * the 64-bit, host-endian ELF file whose first len bytes are buf (any
 * alignment). Every offset and size in the file is checked against len
 * without overflow; nothing outside buf is read. Returns ST_OK with *out
 * a malloc'd copy of the note's text (up to its first NUL; the caller
 * frees), ST_ENOTFOUND when no segment holds the note, ST_EPLUGIN when
 * the file is not such an ELF file or its program headers lie outside
 * it, ST_ENOMEM. On failure *out is NULL and *why (when why is not NULL)
 * a static sentence saying what was wrong. Malformed note segments (a
 * note running past its segment, an alignment other than 4 or 8) are
 * skipped like segments without our note, as readelf does. Thread-safety:
 * any thread. */
st_status st__note_parse(const void *buf /* IN: len bytes */, size_t len,
                         char **out /* OUT */,
                         const char **why /* OUT: may be NULL */) ST_WUR;

#endif
