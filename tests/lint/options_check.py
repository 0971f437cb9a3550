#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every field of a size-first public options struct is taken by
harness/base/options.c (TAKE(out, in, TYPE, FIELD)): a field added to
st_run_options or st_load_options without its TAKE line would be silently
ignored by the library (the copy the run works on keeps its default).
Prints TAP 13. Usage: options_check.py SOURCE_ROOT"""
import os
import re
import sys

STRUCTS = {"st_run_options": "run.h", "st_load_options": "scene.h"}


def fields(header, name):
    text = open(header).read()
    m = re.search(r"typedef struct %s \{(.*?)\} %s;" % (name, name), text,
                  re.S)
    if not m:
        return None
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    out = []
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        out.append(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", decl)[-1])
    return out


def main(root):
    taken = open(os.path.join(root, "harness", "base", "options.c")).read()
    print("TAP version 13")
    print("1..%d" % len(STRUCTS))
    failed = 0
    for i, (name, hdr) in enumerate(sorted(STRUCTS.items()), 1):
        fs = fields(os.path.join(root, "include", "scenetest", hdr), name)
        if fs is None:
            print("not ok %d - %s: struct not found in %s" % (i, name, hdr))
            failed += 1
            continue
        missing = [f for f in fs if f != "size" and
                   not re.search(r"TAKE\(out, in, %s, %s\)" % (name, f),
                                 taken)]
        if missing:
            failed += 1
            print("not ok %d - %s: fields without a TAKE line in "
                  "base/options.c: %s" % (i, name, ", ".join(missing)))
        else:
            print("ok %d - %s: all %d fields taken" % (i, name, len(fs) - 1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
