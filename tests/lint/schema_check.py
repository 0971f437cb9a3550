#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/scene.schema.json against the loader and the scenes, as TAP 13.

Usage: schema_check.py SOURCE_ROOT   (run with /usr/bin/python3, which has
Debian's python3-jsonschema and python3-yaml)

  - keys: every mapping's keys in the schema are exactly the loader's
    (the key tables of the loader's files in harness/scene/: arrays of
    names, or X-macro tables of rows X(ID, "name")), plus the merge key
    "<<";
  - the schema is a valid draft 2020-12 schema, with no union "type"
    arrays (which ajv's strict mode refuses);
  - every scene in scenes/ and the good test scenes validate;
  - the structural bad fixtures (unknown keys, wrong types) do not.

PyYAML reads YAML 1.1, whose float regex wants a dot; docs/scene-format.md#values-and-scalars-in-yaml makes any
plain scalar strtod parses a number, so the loader here resolves those as
floats too. Merge keys PyYAML resolves itself.
"""
import glob
import json
import os
import re
import sys

try:
    import jsonschema
    import yaml
except ImportError as e:  # a machine without Debian's python3-jsonschema
    print("TAP version 13")
    print("1..0 # SKIP %s" % e)
    sys.exit(0)

ROOT = sys.argv[1]
SCENE_DIR = os.path.join(ROOT, "harness", "scene")
SCHEMA = os.path.join(ROOT, "docs", "scene.schema.json")


class SpecLoader(yaml.SafeLoader):
    pass


SpecLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)$"),
    list("-+0123456789."))

# strtod also reads nan, inf and infinity (any case, signed): numbers to
# the loader. PyYAML already takes YAML's own .nan and .inf spellings.
SpecLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?i:[-+]?(?:nan|inf|infinity))$"),
    list("-+nNiI"))

# Nor timestamps: to the loader `until: 2026-06-30` is a plain string, as
# in YAML 1.2's core schema (docs/scene-format.md#quarantine).
SpecLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in SpecLoader.yaml_implicit_resolvers.items()}

points = []


def point(ok, name, diag=""):
    points.append((ok, name, diag))


def c_array(name):
    """The names of key table `name` in the loader's files: an array of
    strings, or one made from an X-macro table (`{TABLE(ST__KEY_NAME)}`,
    whose `#define TABLE(X)` has one row X(ID, "name") a key)."""
    src = "".join(open(os.path.join(SCENE_DIR, f)).read()
                  for f in sorted(os.listdir(SCENE_DIR)) if f.endswith(".c"))
    m = re.search(r"static const char \*const %s\[\] = \{(.*?)\};" % name,
                  src, re.S)
    if not m:
        return None
    table = re.fullmatch(r"\s*(\w+)\(ST__KEY_NAME\)\s*", m.group(1))
    if table is None:
        return re.findall(r'"([^"]+)"', m.group(1))
    d = re.search(r"#define %s\(X\)((?:.*\\\n)*.*)" % table.group(1), src)
    return re.findall(r'X\(\w+,\s*"([^"]+)"\)', d.group(1)) if d else None


schema = json.load(open(SCHEMA))
defs = schema["$defs"]
init_obj = [s for s in defs["init"]["oneOf"] if s.get("type") == "object"][0]
pairs = {
    "scene_keys": defs["scene"],
    "case_keys": defs["case"],
    "tensor_keys": defs["tensor"],
    "scalar_keys": defs["scalar"],
    "init_forms": init_obj,
    "range_keys": init_obj["properties"]["range"],
    "golden_keys": defs["golden_program"],
    "step_keys": defs["golden_step"],
}
for arr, sub in pairs.items():
    code = c_array(arr)
    keys = set(sub["properties"]) - {"<<"}
    ok = code is not None and set(code) == keys
    point(ok, "schema keys = loader's %s" % arr,
          "loader: %r\nschema: %r" % (sorted(code or []), sorted(keys)))

try:
    jsonschema.Draft202012Validator.check_schema(schema)
    point(True, "a valid draft 2020-12 schema")
except jsonschema.SchemaError as e:
    point(False, "a valid draft 2020-12 schema", str(e))
validator = jsonschema.Draft202012Validator(schema)


def union_types(node, where="#"):
    """Where a "type" keyword lists several types: ajv's strict mode
    refuses those without its allowUnionTypes option, so the schema says
    anyOf: [{type: A}, {type: B}] instead."""
    found = []
    if isinstance(node, dict):
        if isinstance(node.get("type"), list):
            found.append(where)
        for k, v in node.items():
            found += union_types(v, where + "/" + k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found += union_types(v, "%s/%d" % (where, i))
    return found


unions = union_types(schema)
point(not unions, "no union types (ajv strict mode)", "\n".join(unions))


def errors(path):
    with open(path) as f:
        docs = list(yaml.load_all(f, Loader=SpecLoader))
    return [e.message for d in docs for e in validator.iter_errors(d)]


good = sorted(glob.glob(os.path.join(ROOT, "scenes", "*.yaml")) +
              glob.glob(os.path.join(ROOT, "scenes", "torch", "*.yaml")) +
              glob.glob(os.path.join(ROOT, "tests", "scenes", "good", "*.y*ml")) +
              glob.glob(os.path.join(ROOT, "tests", "scenes", "matrix", "*.yaml")) +
              glob.glob(os.path.join(ROOT, "tests", "scenes", "params", "*.yaml")) +
              glob.glob(os.path.join(ROOT, "tests", "scenes", "sig", "*.yaml")) +
              glob.glob(os.path.join(ROOT, "examples", "plugins", "scenes", "*.yaml")) +
              glob.glob(os.path.join(ROOT, "examples", "plugins", "scenes-torch", "*.yaml")))
for path in good:
    errs = errors(path)
    point(not errs, "validates " + os.path.relpath(path, ROOT), "\n".join(errs))

# The quarantine form of `expect`, at scene and case level.
QUARANTINE = """\
scene: q
kernel: add
expect: {fail: true, reason: "gh-1", until: 2026-06-30}
args:
  - {tensor: a, dtype: float32, shape: [4]}
cases:
  - name: c
    expect: {fail: true, reason: r, until: 2026-06-30, platforms: [cpu],
             strict: false}
  - name: d
    expect: error
"""
errs = [e.message for e in validator.iter_errors(
    yaml.load(QUARANTINE, Loader=SpecLoader))]
point(not errs, "validates a quarantine", "\n".join(errs))

# Structural mistakes the schema can see (semantic ones, such as a param
# that does not fit its dtype, are the loader's).
BAD = ["unknown_key", "unknown_case_key", "init_unknown_form",
       "kernel_not_string", "args_not_list", "cases_not_list", "bad_role",
       "bad_level", "expect_bad", "equal_nan_bad", "matrix_not_mapping",
       "sig_expect_forms", "sig_golden_args_unknown",
       "matrix_empty_list", "merge_unknown_key", "missing_key", "no_cases",
       "quarantine_bad"]
for name in BAD:
    path = os.path.join(ROOT, "tests", "scenes", "bad", name + ".yaml")
    exists = os.path.exists(path)
    point(exists and bool(errors(path)), "rejects tests/scenes/bad/%s.yaml"
          % name, "" if exists else "no such fixture")

print("TAP version 13")
print("1..%d" % len(points))
for i, (ok, name, diag) in enumerate(points, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
    if not ok and diag:
        print("  ---\n  message: |")
        for line in diag.splitlines():
            print("    " + line)
        print("  ...")
sys.exit(0 if all(p[0] for p in points) else 1)
