#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every field of a size-first public options struct is taken by
harness/base/options.c (TAKE(out, in, TYPE, FIELD)): a field added to
st_run_options or st_load_options without its TAKE line would be silently
ignored by the library (the copy the run works on keeps its default).

And every row of the command's option table (harness/cli/options.c) is
in `scenetest --help` and in docs/cli.md, by each of its names (--NAME and
-S), and every report format (harness/report/formats.c) in --format's
line of both, so that an option or a format added to its table cannot go
unexplained; first a self-test that a name missing from both is
reported.

Prints TAP 13. Usage: options_check.py SOURCE_ROOT [SCENETEST]"""
import os
import re
import subprocess
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


def option_rows(root):
    """(long name, short name or None) of every row of the option table."""
    text = open(os.path.join(root, "harness", "cli", "options.c")).read()
    start = text.index("const optdef st__cli_options[] = {")
    body = text[start:text.index("\n};", start)]
    rows = []
    for row in re.findall(r"\{\s*\.name = .*?\},?\n", body, re.S):
        name = re.search(r'\.name = "([^"]+)"', row).group(1)
        short = re.search(r"\.short_name = '(.)'", row)
        rows.append((name, short.group(1) if short else None))
    return rows


def missing_names(rows, help_text, docs):
    """'--NAME (where)' for each name of rows absent from help or docs: a
    name counts when it is followed by neither a letter, a digit nor '-'
    (so --shuffle is not found in --shuffle-seed)."""
    out = []
    for name, short in rows:
        for flag in ["--" + name] + (["-" + short] if short else []):
            pat = re.compile(re.escape(flag) + r"(?![A-Za-z0-9-])")
            for where, text in (("--help", help_text), ("docs/cli.md", docs)):
                if not pat.search(text):
                    out.append("%s (%s)" % (flag, where))
    return out


def format_rows(root):
    """The names of the report formats (harness/report/formats.c)."""
    text = open(os.path.join(root, "harness", "report", "formats.c")).read()
    start = text.index("const st__report_format st__report_formats[] = {")
    body = text[start:text.index("\n};", start)]
    return re.findall(r'^    \{"([a-z0-9_]+)",', body, re.M)


def missing_formats(names, help_text, docs):
    """Each report format absent from --format's line of --help or its row
    in docs/cli.md ("`NAME`")."""
    line = [l for l in help_text.split("\n") if l.startswith("  --format F")]
    row = [l for l in docs.split("\n") if l.startswith("| `--format FMT`")]
    out = []
    for n in names:
        if not line or n not in line[0]:
            out.append("%s (--help's --format)" % n)
        if not row or "`%s`" % n not in row[0]:
            out.append("%s (docs/cli.md's --format)" % n)
    return out


def check_table(root, exe, first):
    """TAP points first, first + 1: the self-test and the table."""
    rows = option_rows(root)
    help_text = subprocess.run([exe, "--help"], stdout=subprocess.PIPE,
                               check=True, universal_newlines=True).stdout
    docs = open(os.path.join(root, "docs", "cli.md")).read()
    bad = missing_names([("no-such-option", "Q")], help_text, docs)
    bad += missing_formats(["nosuchformat"], help_text, docs)
    ok = len(bad) == 6 and len(rows) > 40
    print("%s %d - the table check reports a missing option (%d rows "
          "read)" % ("ok" if ok else "not ok", first, len(rows)))
    failed = 0 if ok else 1
    bad = missing_names(rows, help_text, docs)
    formats = format_rows(root)
    if len(formats) < 5:
        bad.append("report/formats.c: %d formats read" % len(formats))
    bad += missing_formats(formats, help_text, docs)
    if bad:
        failed += 1
        print("not ok %d - option table rows or report formats missing "
              "from --help or docs/cli.md: %s" % (first + 1, ", ".join(bad)))
    else:
        print("ok %d - every option table row and report format is in "
              "--help and docs/cli.md" % (first + 1))
    return failed


def main(root, exe=None):
    taken = open(os.path.join(root, "harness", "base", "options.c")).read()
    print("TAP version 13")
    print("1..%d" % (len(STRUCTS) + (2 if exe else 0)))
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
    if exe:
        failed += check_table(root, exe, len(STRUCTS) + 1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
