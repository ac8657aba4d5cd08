# SPDX-License-Identifier: GPL-2.0
"""The JSON summary's schema, docs/memphase.schema.json: a draft 2020-12 schema of the number
the writer puts in "schema", the same keys as docs/json.md documents, a check that fails a
summary that leaves it, and summaries no check could read counted as a skip.

Every summary a test reads through harness.load_json (or harness.check_summary) is checked
against it: the runs, attaches, reports, watch's per-process files and `--json -` of every
module. This module checks the schema itself and that machinery.
"""
import copy
import json
import os
import re
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

JSON_MD = os.path.join(harness.ROOT, "docs", "json.md")


def schema():
    with open(harness.SCHEMA) as f:
        return json.load(f)


def schema_paths(s):
    """Every key path the schema allows: "phases[].top_mappings[].origin.frames"; "*" for a
    key of an object whose keys are names (engine.settings.*.value)."""
    paths = set()

    def resolve(x):
        while "$ref" in x:
            x = s["$defs"][x["$ref"].rsplit("/", 1)[1]]
        return x

    def walk(x, path):
        x = resolve(x)
        for alt in x.get("anyOf", []):
            walk(alt, path)
        if "items" in x:
            walk(x["items"], path + "[]")
        for k, v in x.get("properties", {}).items():
            p = path + "." + k if path else k
            paths.add(p)
            walk(v, p)
        if isinstance(x.get("additionalProperties"), dict):
            paths.add(path + ".*")
            walk(x["additionalProperties"], path + ".*")

    walk(s, "")
    return paths


def json_md():
    with open(JSON_MD, encoding="utf-8") as f:
        return f.read()


def outline_paths(text):
    """The key paths of json.md's outline (the block after "## JSON"): "key" and NAME: are
    keys, { } and [ ] nest them, a string after a key's colon ("...", "why") is a value, and
    other words ("null or", "with units:", "request numbers") are prose."""
    block = re.search(r"(?ms)^## JSON.*?^```\n(.*?)^```", text).group(1)
    toks = re.findall(r'"[^"]*"|[{}\[\]:,]|\.\.\.|[A-Za-z_]+', block)
    paths, stack, pending, prev = set(), [], None, None
    for i, tok in enumerate(toks):
        if tok.startswith('"') or (tok.isupper() and toks[i + 1:i + 2] == [":"]):
            if pending is None:  # a key ("key", or NAME: for a name-keyed object)
                pending = "*" if tok.isupper() else tok[1:-1]
                paths.add(stack[-1] + "." + pending if stack and stack[-1] else pending)
                prev = "key"
                continue
        elif tok == ":" and prev == "key":
            prev = ":"
            continue
        elif tok in "{[":
            top = stack[-1] if stack else ""
            if pending is not None:
                top = top + "." + pending if top else pending
            stack.append(top + "[]" if tok == "[" else top)
            pending = None
        elif tok in "}]":
            stack.pop()
            pending = None
        elif tok == ",":
            pending = None
        prev = tok
    assert not stack, "json.md's outline leaves %s open" % stack
    return paths


def table_keys(text):
    """The backquoted keys of the first column of json.md's key table."""
    keys = []
    for line in text.splitlines():
        m = re.match(r"\| (`[^|]*) \|", line)
        if m:
            keys += re.findall(r"`([^`]+)`", m.group(1))
    return keys


def test_schema_number_is_the_writers():
    """The schema's "schema" is REPORT_JSON_SCHEMA, the number report_json.c writes, and the
    one docs/json.md and --help name."""
    with open(os.path.join(harness.ROOT, "user", "report", "report_json.h")) as f:
        n = int(re.search(r"#define REPORT_JSON_SCHEMA (\d+)", f.read()).group(1))
    s = schema()
    assert s["properties"]["schema"] == {"const": n}, \
        "schema's \"schema\" is %s, REPORT_JSON_SCHEMA %d" % (s["properties"]["schema"], n)
    assert "schema %d" % n in s["title"], s["title"]
    assert "## JSON (schema %d)" % n in json_md(), "docs/json.md does not name schema %d" % n
    with open(os.path.join(harness.ROOT, "user", "report", "report_json.c")) as f:
        assert "(schema %d)" % n in f.read(), "--json's help does not name schema %d" % n


def test_schema_is_a_valid_draft_2020_12_schema():
    """jsonschema's own meta-schema accepts it, and every object of it is closed or names its
    keys' shape (no object left open by omission)."""
    if harness._schema_validator() is None:
        raise harness.Skip(harness.SchemaCheck.why_not)
    s = schema()
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema", s["$schema"]
    harness.SchemaCheck.validator.check_schema(s)
    open_objects = []

    def walk(x, where):
        if isinstance(x, dict):
            if "properties" in x and "additionalProperties" not in x and \
                    where.rsplit("/", 1)[1] not in ("if", "then", "else"):
                open_objects.append(where)
            for k, v in x.items():
                walk(v, where + "/" + k)
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, "%s/%d" % (where, i))

    walk(s, "#")
    assert not open_objects, "objects without additionalProperties: %s" % open_objects


def test_json_md_outline_names_every_schema_key_and_no_other():
    """The outline at the top of docs/json.md and the schema hold the same key paths."""
    doc, sch = outline_paths(json_md()), schema_paths(schema())
    assert len(sch) > 250, "only %d key paths in the schema" % len(sch)
    assert doc == sch, "in the schema, not in json.md's outline: %s; in the outline, not in " \
        "the schema: %s" % (sorted(sch - doc), sorted(doc - sch))


def test_json_md_table_explains_only_schema_keys_and_every_top_level_one():
    """Each key the table of docs/json.md explains (`phases[].name`, `entries`, ...) ends a
    key path of the schema, and each top-level key has a row."""
    keys, paths = table_keys(json_md()), schema_paths(schema())
    assert len(keys) > 40, keys
    unknown = [k for k in keys if not any(p == re.sub(r"\[\]$", "", k) or
                                          p.endswith("." + re.sub(r"\[\]$", "", k))
                                          for p in paths)]
    assert not unknown, "json.md's table explains keys the schema does not have: %s" % unknown
    top = set(schema()["properties"])
    rows = {re.split(r"[.\[]", k)[0] for k in keys}
    assert top <= rows, "top-level keys without a row in json.md's table: %s" % sorted(
        top - rows)


def broken(doc):
    """Copies of doc each broken in one way the schema must catch: (what, copy, path the
    error names)."""
    out = []

    def case(what, where, fn):
        d = copy.deepcopy(doc)
        fn(d)
        out.append((what, d, where))

    case("an unknown top-level key", "(top)", lambda d: d.update(surprise=1))
    case("a phase without calls", "phases/0", lambda d: d["phases"][0].pop("calls"))
    case("negative growth", "phases/0/rss_growth_bytes/anon",
         lambda d: d["phases"][0]["rss_growth_bytes"].update(anon=-1))
    case("a string for a number", "duration_s", lambda d: d.update(duration_s="1.5"))
    case("no NVML and no reason", "gpu/nvml_unavailable",
         lambda d: d["gpu"].update(vram=None, nvml_unavailable=None))
    case("a class that is none", "timeline/samples/0",
         lambda d: d["timeline"]["samples"][0].update(rss=1))
    m = next((i, j) for i, p in enumerate(doc["phases"]) for j, t in enumerate(p["top_mappings"])
             if t["origin"])
    case("a mapping kind that is none", "phases/%d/top_mappings/%d/kind" % m,
         lambda d: d["phases"][m[0]]["top_mappings"][m[1]].update(kind="bogus"))
    case("a label without its origin", "phases/%d/top_mappings/%d/label" % m,
         lambda d: d["phases"][m[0]]["top_mappings"][m[1]].update(origin=None))
    return out


def test_a_summary_off_the_schema_fails_its_check():
    """A real summary passes; each copy of it broken in one way (an unknown key, a missing
    one, a wrong type or sign, a name no enum holds, keys null apart that go together) fails,
    and the failure names the key."""
    harness.need_root()
    if harness._schema_validator() is None:
        raise harness.Skip(harness.SchemaCheck.why_not)
    with harness.workdir() as d:
        model = harness.make_model(os.path.join(d, "model.bin"), 8)
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--json", out, "--", harness.DRIVER, "--model", model,
                              "--ctx-mib", "8", "--prompt-batches", "2", "--batch-mib", "4",
                              "--tokens", "8", "--token-kib", "128"])
        assert r.returncode == 0, "memphase exited %d: %s" % (r.returncode, r.stderr)
        doc = harness.load_json(out)
    for what, bad, where in broken(doc):
        try:
            harness.check_summary(bad, what)
        except AssertionError as e:
            assert "\n  %s: " % where in str(e), "%s: the error does not name %s: %s" % (
                what, where, e)
            continue
        raise AssertionError("%s passed the check" % what)


MODULE = '''
import json, os, sys
sys.path.insert(0, %r)
import harness

def test_reads_a_summary():
    p = os.path.join(%r, "doc.json")
    with open(p, "w") as f:
        json.dump(%s, f)
    harness.load_json(p)
'''


def run_module(d, doc, block_jsonschema):
    """run.py --module on a module whose one test reads doc with harness.load_json, with or
    without jsonschema importable: its output."""
    path = os.path.join(d, "test_reads.py")
    with open(path, "w") as f:
        f.write(MODULE % (os.path.dirname(os.path.abspath(__file__)), d, repr(doc)))
    code = textwrap.dedent("""
        import runpy, sys
        if %r:
            sys.modules["jsonschema"] = None  # import jsonschema raises ImportError
        sys.argv = ["run.py", "--module", %r]
        runpy.run_path(%r, run_name="__main__")
    """) % (block_jsonschema, path, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "run.py"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60)
    return r.stdout + r.stderr


def test_summaries_nothing_checked_are_a_skip_and_bad_ones_a_failure():
    """Without jsonschema a module whose test read a summary ends with one skip more, which
    says why ("1 passed, 0 failed, 1 skipped"), never with a silent pass; with it, a summary
    off the schema fails the test that read it."""
    with harness.workdir() as d:
        out = run_module(d, {"schema": 1}, True)
        last = out.strip().splitlines()[-1]
        assert last == "1 passed, 0 failed, 1 skipped", out
        assert re.search(r"(?m)^SKIP test_reads \(JSON Schema\): 1 summary not checked "
                         r"against docs/memphase.schema.json: .*no jsonschema module", out), out
        if harness._schema_validator() is None:
            raise harness.Skip(harness.SchemaCheck.why_not)
        out = run_module(d, {"schema": 1}, False)
        assert out.strip().splitlines()[-1] == "0 passed, 1 failed, 0 skipped", out
        assert "does not match docs/memphase.schema.json" in out, out
