# SPDX-License-Identifier: GPL-2.0
"""--pprof: the gzipped profile.proto, read by the program its users open it with, `go tool
pprof` (Debian's golang-go; a counted skip only when it is not installed).

Totals are compared exactly: pprof's -top with -unit=B and no node dropped (-nodefraction=0)
prints "Showing nodes accounting for NB", the bytes of the samples the tag filter kept; they
must equal the JSON's sampled bytes per phase, per cause and per request (the same samples).
"""
import gzip
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MIB  # noqa: E402

SERVE = os.path.join(harness.WORKLOAD, "llama-serve")
EXPLAIN = os.path.join(harness.WORKLOAD, "llama-explain")
# every sample kept (see test_explain.py): totals compare exactly anyway, but a lost sample's
# bytes would be missing from the per-request checks against the stand-in
SAMPLE_OPTS = ["--sample-bytes", "64K", "--max-samples", "0", "--ringbuf-kib", "131072"]


def go_pprof():
    go = shutil.which("go")
    if not go:
        raise harness.Skip("go tool pprof is not installed (Debian golang-go)")
    return go


def pprof(d, args, path):
    # PPROF_TMPDIR: pprof may save fetched profiles there; never in the caller's home
    r = harness.run([go_pprof(), "tool", "pprof"] + args + [path], timeout=120,
                    env={"PPROF_TMPDIR": d})
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout


def focused(d, path, tagfocus):
    """Bytes of the samples -tagfocus keeps."""
    out = pprof(d, ["-top", "-unit=B", "-nodefraction=0", "-tagfocus=" + tagfocus], path)
    m = re.search(r"Showing nodes accounting for (\d+)B", out)
    assert m, out
    return int(m.group(1))


def tags(d, path):
    """-tags: {key: {value: text}} (pprof prints the bytes rounded: used for presence)."""
    out, key, res = pprof(d, ["-tags"], path), None, {}
    for line in out.splitlines():
        m = re.match(r"^\s*(\S+): Total ", line)
        if m:
            key = m.group(1)
            res[key] = {}
            continue
        m = re.match(r"^\s+\S+ \(\s*[\d.]+%\): (.*)$", line)
        if m and key:
            res[key][m.group(1)] = line
    return res


def build_id(path):
    r = harness.run(["readelf", "-n", path])
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
    assert m, r.stdout
    return m.group(1)


def run(d, cmd, extra=()):
    js, pb, rec = (os.path.join(d, n) for n in ("out.json", "out.pb.gz", "run.mpr"))
    r = harness.memphase(["run", "--no-tui", "--json", js, "--pprof", pb, "--record", rec] +
                         SAMPLE_OPTS + list(extra) + ["--"] + cmd, timeout=180)
    assert r.returncode == 0, (r.returncode, r.stderr)
    return harness.load_json(js), pb, rec


def test_go_tool_pprof_totals_per_phase_and_request_equal_the_json():
    """llama-serve: -top's total is the sampled bytes; -tagfocus=phase=^P$ gives each phase's
    sampled bytes (prompt, generate and every other phase with samples), and
    -tagfocus=request=^N$ each request's sampled bytes by cause; -tags shows the labels;
    -traces the stand-in's functions; -raw the mappings with their build ids."""
    harness.need_root()
    go_pprof()
    with harness.workdir() as d:
        doc, pb, rec = run(d, [SERVE, "--requests", "3", "--prompt-batches", "2",
                               "--batch-mib", "4", "--tokens", "6", "--slots", "2",
                               "--token-kib", "64", "--no-probe"])
        with gzip.open(pb) as f:
            assert f.read(3) == b"\x0a\x04\x08", "a Profile message starting with sample_type"
        phases = {p["name"]: p["stacks"]["sampled_bytes"] for p in doc["phases"]
                  if p["stacks"]["samples"]}
        assert phases.get("prompt", 0) >= 8 * MIB and phases.get("generate", 0) > 0, phases
        top = pprof(d, ["-top", "-unit=B"], pb)
        m = re.search(r"Total samples = (\d+)B", top)
        assert m and int(m.group(1)) == sum(phases.values()), (top[:600], phases)
        assert "Type: rss_growth" in top, top[:600]
        for name, sampled in phases.items():
            assert focused(d, pb, "phase=^%s$" % re.escape(name)) == sampled, name
        t = tags(d, pb)
        assert set(t["phase"]) == set(phases), (t["phase"], phases)
        assert "anon" in t["class"], t["class"]
        reqs = doc["requests"]
        assert len(reqs) == 3 and set(t["request"]) == {"1", "2", "3"}, (reqs, t["request"])
        for i, q in enumerate(reqs):
            want = sum(c["bytes"] for c in q["causes"]) + q["causes_unmatched_bytes"]
            assert want > 4 * MIB, q
            assert focused(d, pb, "request=^%d$" % (i + 1)) == want, i + 1
        traces = pprof(d, ["-traces"], pb)
        for name in ("touch_pages", "llama_decode", "main"):
            assert re.search(r"\s%s\n" % name, traces), "-traces lacks %s" % name
        raw = pprof(d, ["-raw"], pb)
        assert "PeriodType: rss_growth bytes" in raw, raw[:400]
        assert re.search(r"^Time: 20\d\d-", raw, re.M), raw[:400]
        maps = raw[raw.index("Mappings"):]
        lib = os.path.join(harness.WORKLOAD, "libllama.so")
        for path in (os.path.realpath(SERVE), os.path.realpath(lib)):
            assert re.search(r"%s %s \[FN\]" % (re.escape(path), build_id(path)), maps), \
                (path, maps)
        # locations: addresses inside their mappings, named
        assert re.search(r"^\s+\d+: 0x[0-9a-f]+ M=\d+ touch_pages ", raw, re.M), raw[-2000:]
        # the same profile from the recording
        again = os.path.join(d, "again.pb.gz")
        r = harness.memphase(["report", rec, "--pprof", again])
        assert r.returncode == 0, r.stderr
        with gzip.open(pb) as a, gzip.open(again) as b:
            assert a.read() == b.read(), "memphase report --pprof differs from the live run's"


def test_go_tool_pprof_causes_and_mapping_labels():
    """llama-explain (C++ with llama.cpp's names): -tagfocus=cause=^C$ gives each cause's
    bytes as the JSON's causes[]; the mapping label names the code that created the mapping;
    -traces shows the C++ methods."""
    harness.need_root()
    go_pprof()
    with harness.workdir() as d:
        model = harness.make_model(os.path.join(d, "model.bin"), 32)
        doc, pb, _ = run(d, [EXPLAIN, "--model", model, "--requests", "2"])
        causes = doc["causes"]
        assert len(causes) >= 7, causes
        for c in causes:
            assert focused(d, pb, "cause=^%s$" % re.escape(c["name"])) == c["bytes"], c
        t = tags(d, pb)
        assert set(t["cause"]) == {c["name"] for c in causes}, t["cause"]
        for label in ("server_prompt_cache::alloc", "llama_kv_cache::llama_kv_cache",
                      "llama_mmap::llama_mmap"):
            assert label in t["mapping"], (label, sorted(t["mapping"]))
        traces = pprof(d, ["-traces"], pb)
        for name in ("server_prompt_cache::alloc", "common_prompt_checkpoint::update_tgt",
                     "llama_vocab::impl::tokenize", "llama_model_loader::load_all_data"):
            assert name in traces, "-traces lacks %s" % name
