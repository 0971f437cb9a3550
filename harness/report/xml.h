/* SPDX-License-Identifier: MIT */
/* XML 1.0 escaping for the JUnit report: character data and attribute
 * values that are well-formed whatever the input bytes. CLI-private. */
#ifndef SCENETEST_HARNESS_XML_H
#define SCENETEST_HARNESS_XML_H

#include <stdio.h>

/* Writes s as XML 1.0 character data (attr 0) or as the inside of a
 * double-quoted attribute value (attr 1): invalid UTF-8 and characters
 * XML 1.0 does not allow (controls other than tab, newline and carriage
 * return; U+FFFE, U+FFFF) become U+FFFD; '&', '<' and '>' are escaped
 * (so "]]>" cannot occur), and '"' in attributes; carriage return is
 * written as &#13; (and, in attributes, tab and newline as &#9; and
 * &#10;) so that a reader's line-end and attribute normalisation gives
 * the text back unchanged. NULL writes nothing.
 * Thread-safety: one thread per f. */
void st__xml_escape(FILE *f /* IN */, const char *s /* IN, may be NULL */,
                    int attr);

#endif
