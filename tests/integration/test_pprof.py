# SPDX-License-Identifier: GPL-2.0
"""--pprof: the gzipped profile.proto, read by the program its users open it with, `go tool
pprof` (Debian's golang-go; a counted skip only when it is not installed).

Totals are compared exactly: pprof's -top with -unit=B and no node dropped (-nodefraction=0)
prints "Showing nodes accounting for NB", the bytes of the samples the tag filter kept; they
must equal the JSON's numbers per phase (its growth: the sampled bytes and a "[not sampled]"
sample for the rest), per cause and per request (the same samples).
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


def not_sampled(d, path, tagfocus):
    """Bytes of the "[not sampled]" node among the samples -tagfocus keeps (0: none)."""
    out = pprof(d, ["-top", "-unit=B", "-nodefraction=0", "-tagfocus=" + tagfocus], path)
    m = re.search(r"^\s*(\d+)B .* \[not sampled\]$", out, re.M)
    return int(m.group(1)) if m else 0


def growth(p):
    """A JSON phase's RSS growth as the stack views count it (swap aside)."""
    return sum(p["rss_growth_bytes"][c] for c in ("anon", "file", "shmem"))


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
    """llama-serve: -top's total is the growth (each phase's sampled bytes, or its growth when
    that is more: a "[not sampled]" sample carries the rest); -tagfocus=phase=^P$ gives each
    phase's, and -tagfocus=request=N (a numeric label) each request's sampled bytes by cause;
    -tags shows the labels; -traces the stand-in's functions; -raw the period (the sampling
    unit) and the mappings with their build ids."""
    harness.need_root()
    go_pprof()
    with harness.workdir() as d:
        doc, pb, rec = run(d, [SERVE, "--requests", "3", "--prompt-batches", "2",
                               "--batch-mib", "4", "--tokens", "6", "--slots", "2",
                               "--token-kib", "64", "--no-probe"])
        with gzip.open(pb) as f:
            assert f.read(3) == b"\x0a\x04\x08", "a Profile message starting with sample_type"
        phases = {p["name"]: max(p["stacks"]["sampled_bytes"], growth(p)) for p in doc["phases"]
                  if p["stacks"]["samples"] or growth(p)}
        sampled = {p["name"]: p["stacks"]["sampled_bytes"] for p in doc["phases"]}
        assert sampled["prompt"] >= 8 * MIB and sampled["generate"] > 0, sampled
        top = pprof(d, ["-top", "-unit=B"], pb)
        m = re.search(r"Total samples = (\d+)B", top)
        assert m and int(m.group(1)) == sum(phases.values()), (top[:600], phases)
        assert "Type: rss_growth" in top, top[:600]
        for name, want in phases.items():
            got = focused(d, pb, "phase=^%s$" % re.escape(name))
            assert got == want, "%s: pprof %d, JSON %d" % (name, got, want)
        t = tags(d, pb)
        assert set(t["phase"]) == set(phases), (t["phase"], phases)
        assert "anon" in t["class"], t["class"]
        reqs = doc["requests"]
        assert len(reqs) == 3 and set(t["request"]) == {"1", "2", "3"}, (reqs, t["request"])
        for i, q in enumerate(reqs):
            want = sum(c["bytes"] for c in q["causes"]) + q["causes_unmatched_bytes"]
            assert want > 4 * MIB, q
            got = focused(d, pb, "request=%d" % (i + 1))
            assert got == want, "request %d: pprof %d, JSON %d" % (i + 1, got, want)
        traces = pprof(d, ["-traces"], pb)
        for name in ("touch_pages", "llama_decode", "main"):
            assert re.search(r"\s%s\n" % name, traces), "-traces lacks %s" % name
        raw = pprof(d, ["-raw"], pb)
        assert "PeriodType: rss_growth bytes" in raw, raw[:400]
        assert "\nPeriod: %d\n" % doc["stack_sampling"]["sample_bytes"] in raw, raw[:400]
        assert doc["stack_sampling"]["sample_bytes"] == 64 * 1024, doc["stack_sampling"]
        # a number with its unit, not a string: -raw prints it as [N unit]
        assert re.search(r"request:\[2 request\]", raw), raw[:2000]
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


def test_go_tool_pprof_every_sample_has_its_mapping_and_every_phase_its_growth():
    """llama-driver, a sample per 3 MiB: the load's pages come in inside its
    mmap(MAP_POPULATE), before BPF can look the mapping up and before its origin is recorded;
    those samples carry the mapping label all the same (the origin's, as the JSON's load top
    mapping), and every sample carries one (-tagfocus=mapping=. keeps all the sampled
    bytes). Growth no sample carries is one "[not sampled]" sample per phase: each phase's
    total is its JSON growth (or its sampled bytes when those are more), its "[not sampled]"
    node the difference."""
    harness.need_root()
    go_pprof()
    with harness.workdir() as d:
        model = harness.make_model(os.path.join(d, "model.bin"), 16)
        doc, pb, _ = run(d, [harness.DRIVER, "--model", model, "--ctx-mib", "16",
                             "--prompt-batches", "2", "--batch-mib", "4", "--tokens", "8",
                             "--token-kib", "128", "--state-mib", "2"],
                         ["--sample-bytes", "3M"])
        assert doc["stack_sampling"]["sample_bytes"] == 3 * MIB, doc["stack_sampling"]
        raw = pprof(d, ["-raw"], pb)
        assert "\nPeriod: %d\n" % (3 * MIB) in raw, raw[:400]
        load = harness.phase(doc, "load")
        label = load["top_mappings"][0]["label"]
        assert label == "llama_model_load_from_file", load["top_mappings"][0]
        in_load = focused(d, pb, "phase=^load$") - not_sampled(d, pb, "phase=^load$")
        assert in_load == load["stacks"]["sampled_bytes"] >= 12 * MIB, (in_load, load["stacks"])
        by_label = focused(d, pb, "mapping=^%s$" % label)
        assert by_label == in_load, "mapping %s: %d, load phase %d" % (label, by_label, in_load)
        sampled = sum(p["stacks"]["sampled_bytes"] for p in doc["phases"])
        with_mapping = focused(d, pb, "mapping=.")
        assert with_mapping == sampled, "with a mapping label %d, sampled %d" % (
            with_mapping, sampled)
        rest = 0
        for p in doc["phases"]:
            want = max(growth(p), p["stacks"]["sampled_bytes"])
            if not want:
                continue
            tag = "phase=^%s$" % re.escape(p["name"])
            got, ns = focused(d, pb, tag), not_sampled(d, pb, tag)
            assert got == want, "%s: pprof %d, JSON %d" % (p["name"], got, want)
            assert ns == want - p["stacks"]["sampled_bytes"], (p["name"], ns, p["stacks"])
            rest += ns
        assert rest > 0, "no phase left growth unsampled: nothing checked"
        top = pprof(d, ["-top", "-unit=B"], pb)
        m = re.search(r"Total samples = (\d+)B", top)
        assert m and int(m.group(1)) == sampled + rest, (top[:600], sampled, rest)
