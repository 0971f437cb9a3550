# SPDX-License-Identifier: MIT
"""The installed library exports exactly the public API (as curl's test
1119 checks its symbols): every function declared ST_EXTERN in
include/scenetest/*.h is exported by libscenetest.so, and the library
exports nothing else (no internal st__ symbol, nothing unprefixed).
Prints TAP 13. Usage: symbols_check.py SOURCE_ROOT LIBSCENETEST_SO"""
import glob
import os
import re
import subprocess
import sys

root, lib = sys.argv[1], sys.argv[2]
declared = set()
for path in glob.glob(os.path.join(root, "include", "scenetest", "*.h")):
    text = open(path, encoding="utf-8").read()
    # A declaration: ST_EXTERN <type words and stars> st_name(
    for m in re.finditer(r"ST_EXTERN\b[^;{]*?\b(st_[a-z0-9_]+)\s*\(", text):
        declared.add(m.group(1))

out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                     text=True, check=True).stdout
exported = {line.split()[-1] for line in out.splitlines() if line.strip()}

points = [
    ("the headers declare public functions", len(declared) > 20,
     sorted(declared)),
    ("every ST_EXTERN function is exported", declared <= exported,
     sorted(declared - exported)),
    ("only ST_EXTERN functions are exported", exported <= declared,
     sorted(exported - declared)),
]
print("TAP version 13")
print("1..%d" % len(points))
for i, (name, ok, detail) in enumerate(points, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
    if not ok:
        print("  ---")
        print("  message: %r" % (detail[:50],))
        print("  ...")
