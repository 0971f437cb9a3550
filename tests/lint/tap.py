# SPDX-License-Identifier: MIT
"""The TAP 13 test point the lints print: `ok N - WHAT`, or `not ok N -
WHAT` with a YAML block listing the problems found."""


def point(n, ok, what, problems):
    print(("ok" if ok else "not ok") + " %d - %s" % (n, what))
    if not ok:
        print("  ---")
        print("  problems:")
        for p in problems:
            print("    - %r" % p)
        print("  ...")
