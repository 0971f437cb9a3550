#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Counts test results in meson's testlog.json files (one JSON object per
line, one line per test) and prints two plain lines, "N skipped" and,
last, "N passed, N failed" (CI reads the last line as it is).

OK and EXPECTEDFAIL count as passed, SKIP as skipped, every other result
(FAIL, UNEXPECTEDPASS, TIMEOUT, ERROR, ...) as failed. A missing log (a
build that failed before its tests ran) counts as one failure, so the line
never reads "0 failed" for a run that did not happen. Exits 1 when anything
failed."""
import json
import sys

PASSED = {"OK", "EXPECTEDFAIL"}
NEUTRAL = {"SKIP"}


def main(paths):
    passed = failed = skipped = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
        except OSError as e:
            print(f"summarize-testlog: {path}: {e.strerror}", file=sys.stderr)
            failed += 1
            continue
        for line in lines:
            line = line.strip()
            if not line:
                continue
            try:
                result = json.loads(line).get("result")
            except ValueError:
                print(f"summarize-testlog: {path}: unreadable line",
                      file=sys.stderr)
                failed += 1
                continue
            if result in PASSED:
                passed += 1
            elif result in NEUTRAL:
                skipped += 1
            else:
                failed += 1
    print(f"{skipped} skipped")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
