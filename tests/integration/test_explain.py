# SPDX-License-Identifier: GPL-2.0
"""What each mapping is and what grew: origins, labels, glibc arenas and causes.

The workload is llama-explain (tests/workload/explain.cpp): C++ with llama.cpp's class and
method names, touching known bytes for each cause (its --report lists them), and serving
each request on a fresh worker thread that stays alive, so every request creates a glibc
malloc arena. Samples are taken every 64 KiB of a thread's growth without a rate cap, into a
ring buffer that holds them all (none may be lost: a lost sample's bytes belong to no cause).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MIB  # noqa: E402

EXPLAIN = os.path.join(harness.WORKLOAD, "llama-explain")
# 128 MiB of ring buffer holds every sample of the run (~3,600 of 16 KiB): none is lost
# however slowly memphase is scheduled on a loaded machine
SAMPLE_OPTS = ["--sample-bytes", "64K", "--max-samples", "0", "--ringbuf-kib", "131072"]
# labels that name an allocator, not the code that asked for the memory
ALLOCATOR_LABELS = ("mmap", "sysmalloc", "_int_", "malloc", "posix_memalign", "operator new",
                    "ggml_aligned_malloc", "std::", "[no frame]")


def explain_run(d, extra=(), requests=4):
    model = harness.make_model(os.path.join(d, "model.bin"), 32)
    rep = os.path.join(d, "report.txt")
    js = os.path.join(d, "out.json")
    r = harness.memphase(["run", "--no-tui", "--json", js] + SAMPLE_OPTS + list(extra) +
                         ["--", EXPLAIN, "--model", model, "--requests", str(requests),
                          "--report", rep])
    assert r.returncode == 0, "memphase exited %d: %s" % (r.returncode, r.stderr)
    return r, harness.load_json(js), harness.read_report(rep), model


def test_every_mapping_over_1mib_has_an_origin_and_a_label():
    harness.need_root()
    with harness.workdir() as d:
        _, doc, rep, model = explain_run(d)
        assert doc["lost"]["stacks"] == 0 and doc["origins"]["lost"] == 0, doc["lost"]
        seen = 0
        for p in doc["phases"]:
            for m in p["top_mappings"]:
                if m["size"] < MIB or m["kind"] in ("stack", "heap", "unknown"):
                    continue
                seen += 1
                assert m["origin"] is not None and m["origin"]["frames"], \
                    "%s in %s has no origin" % (m["path"], p["name"])
                assert not m["label"].startswith(ALLOCATOR_LABELS), \
                    "%s is labelled by an allocator frame: %r" % (m["path"], m["label"])
                assert m["origin"]["frames"][-1] in ("mmap", "mmap64", "__mmap"), \
                    "the origin's innermost frame is the syscall's: %s" % m["origin"]["frames"]
        assert seen >= 8, "too few mappings to judge: %d" % seen
        labels = {m["path"]: m["label"] for p in doc["phases"] for m in p["top_mappings"]}
        assert labels.get(model) == "llama_mmap::llama_mmap", labels.get(model)
        every = set(labels.values())
        for want in ("llama_kv_cache::llama_kv_cache", "llama_context::graph_reserve",
                     "server_prompt_cache::alloc"):
            assert want in every, "no mapping labelled %s: %s" % (want, sorted(every))


def test_arenas_are_labelled_with_their_threads():
    harness.need_root()
    with harness.workdir() as d:
        r, doc, rep, _ = explain_run(d)
        tids = [rep["tid.%d" % i] for i in range(rep["requests"])]
        arenas = {a["tid"]: a for a in doc["arenas"]}
        assert sorted(arenas) == sorted(tids), "arenas of %s, request threads %s" % (
            sorted(arenas), tids)
        per_request = rep["cause.glibc malloc arenas"] // rep["requests"]
        for tid in tids:
            a = arenas[tid]
            assert a["label"] == "glibc arena of thread %d (llama-explain)" % tid, a["label"]
            # the arena's own growth, from the mapping counters: exact but for malloc's headers
            harness.assert_close(a["growth_bytes"], per_request, per_request // 20,
                                 "arena of thread %d" % tid)
        assert doc["origins"]["malloc_arenas"] == len(tids)
        assert "%d glibc malloc arenas created" % len(tids) in r.stdout, r.stdout
        assert "MALLOC_ARENA_MAX" in r.stdout


def test_each_cause_within_5_percent_of_what_the_stand_in_allocated():
    harness.need_root()
    with harness.workdir() as d:
        r, doc, rep, _ = explain_run(d)
        assert doc["lost"]["stacks"] == 0, "lost samples: %s" % doc["lost"]
        causes = {c["name"]: c for c in doc["causes"]}
        want = {k[len("cause."):]: v for k, v in rep.items() if k.startswith("cause.")}
        assert len(want) >= 7
        for name, expected in want.items():
            assert name in causes, "cause %r missing: %s" % (name, sorted(causes))
            harness.assert_close(causes[name]["bytes"], expected, expected // 20,
                                 "cause %r" % name)
            assert causes[name]["remedy"] and causes[name]["rule"], causes[name]
        assert "--cache-ram" in causes["prompt cache"]["remedy"]
        assert "MALLOC_ARENA_MAX" in causes["glibc malloc arenas"]["remedy"]
        # growth inside an arena by code no rule names is the arena's, by its origin
        assert causes["glibc malloc arenas"]["rule"].startswith("origin "), \
            causes["glibc malloc arenas"]
        # what no rule matches is shown as such, and it is small here (libc, start-up)
        assert doc["causes_unmatched_bytes"] < 8 * MIB, doc["causes_unmatched_bytes"]
        # the summary leads with the table, before the phase table
        out = r.stdout
        assert 0 <= out.index("What grew") < out.index("PHASE"), out
        line = [ln for ln in out.splitlines() if ln.startswith("prompt cache")]
        assert line and "MiB" in line[0], out


def test_causes_follow_the_rules_files():
    """--causes adds rules (a new preset-less cause wins its frames), --allocator-frame makes
    a frame an allocator (the label moves to its caller); a bad file is one line, exit 125."""
    harness.need_root()
    with harness.workdir() as d:
        rules = os.path.join(d, "extra.rules")
        with open(rules, "w") as f:
            f.write("# the tokenizer as a cause of its own\ncause my tokens\n"
                    "remedy shorter prompts\nframe llama_vocab::impl::tokenize*\n")
        _, doc, rep, _ = explain_run(
            d, ["--causes", rules, "--allocator-frame", "server_prompt_cache::*"])
        causes = {c["name"]: c for c in doc["causes"]}
        assert "my tokens" in causes and "tokenizer buffers" not in causes, sorted(causes)
        harness.assert_close(causes["my tokens"]["bytes"], rep["cause.tokenizer buffers"],
                             rep["cause.tokenizer buffers"] // 20, "my tokens")
        labels = {m["label"] for p in doc["phases"] for m in p["top_mappings"]}
        assert "server_prompt_cache::alloc" not in labels, labels
        assert "server_context::prompt_save" in labels, labels
        with open(rules, "w") as f:
            f.write("cause x\nfrmae typo\n")
        r = harness.memphase(["run", "--causes", rules, "--", EXPLAIN, "--requests", "1"])
        assert r.returncode == 125, (r.returncode, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "extra.rules:2" in lines[0] and "frmae" in lines[0], r.stderr


def test_a_buffer_mapped_in_a_loop_costs_one_origin():
    """2,000 mmap/munmap of the same 2 MiB range: BPF sends its origin once a second at most
    (the rest are counted as repeats), and the model keeps one origin for the range."""
    harness.need_root()
    with harness.workdir() as d:
        js = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--no-tui", "--json", js, "--", EXPLAIN, "--requests", "1",
                              "--remap", "2000"])
        assert r.returncode == 0, r.stderr
        o = harness.load_json(js)["origins"]
        assert o["repeats_skipped"] >= 1990, o
        assert o["recorded"] < 100, o


def test_each_requests_causes_match_what_it_allocated():
    """--request server_context::handle_request: each request is one worker's request;
    every stack sample goes to the request open when it was taken, so requests[].causes
    holds what that request allocated per cause (within 5%, as the totals above), and the
    summary's PER REQ column and causes[].per_request the mean over the requests the fit runs
    over (the 2nd to the 4th, which llama_free closes: the first is left out). A recording's
    report gives the same keys."""
    harness.need_root()
    with harness.workdir() as d:
        rec = os.path.join(d, "run.mpr")
        r, doc, rep, _ = explain_run(d, ["--request", "server_context::handle_request",
                                         "--record", rec])
        assert doc["lost"]["stacks"] == 0, "lost samples: %s" % doc["lost"]
        want = {k[len("request."):]: v for k, v in rep.items() if k.startswith("request.")}
        assert len(want) == 5, want
        reqs = doc["requests"]
        assert len(reqs) == rep["requests"], reqs
        for i, q in enumerate(reqs):
            got = {c["name"]: c["bytes"] for c in q["causes"]}
            for name, expected in want.items():
                # as llama-server's, a prompt is saved to the cache when the next one
                # takes its slot: the first request saves none
                if i == 0 and name == "prompt cache":
                    expected = 0
                harness.assert_close(got.get(name, 0), expected, expected // 20,
                                     "request %d cause %r" % (i + 1, name))
            # what the run did once (the model, the KV cache) is no request's
            assert "model weights" not in got and "KV cache" not in got, (i, got)
            assert q["causes_unmatched_bytes"] < MIB, q
        assert doc["causes_per_request_over"] == [2, 3, 4], doc["causes_per_request_over"]
        causes = {c["name"]: c for c in doc["causes"]}
        for name, expected in want.items():
            harness.assert_close(causes[name]["per_request"], expected, expected // 20,
                                 "per request %r" % name)
        assert causes["model weights"]["per_request"] == 0, causes["model weights"]
        out = r.stdout
        # a summary for an 80-column terminal, without the jargon of earlier ones
        wide = [ln for ln in out.splitlines() if len(ln) > 79]
        assert not wide, "lines over 79 columns: %s" % wide
        for jargon in ("sampled stacks,", "no rule matched", "by cause: unmatched",
                       "postponed by", "MUNMAP", "(RSS each kept)", "[anon 0x"):
            assert jargon not in out, (jargon, out)
        assert "PER REQ: the mean over requests 2-4 (the first's one-time costs left out)" \
            in out, out
        line = [ln for ln in out.splitlines() if ln.startswith("prompt cache")]
        per = float(line[0].split()[-2]) if line and line[0].endswith(" MiB") else 0
        assert abs(per - 16.0) <= 16.0 / 20, line
        js = os.path.join(d, "report.json")
        p = harness.memphase(["report", rec, "--json", js])
        assert p.returncode == 0, p.stderr
        again = harness.load_json(js)
        assert again["requests"] == reqs, "the report's requests differ from the live run's"
        assert again["causes"] == doc["causes"], "the report's causes differ"
