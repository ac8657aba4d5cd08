# SPDX-License-Identifier: GPL-2.0
"""Phases that tell the truth, requests and the context, on the llama-serve stand-in.

llama-serve drives the stand-in libllama.so the way llama-server does: a --fit probe (a
model and a context freed before any decode), the real ones, a warm-up decode between
llama_set_warmup(true/false), then requests: tokenize, prompt batches (logits on the last
token), generation steps of one token per slot (all logits set), optionally the first step
joined with a prompt chunk (a mixed batch), detokenize. Its amounts are exact page counts.
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KIB, MIB  # noqa: E402
from test_oom import Cgroup  # noqa: E402
import traceformat  # noqa: E402

SERVE = os.path.join(harness.WORKLOAD, "llama-serve")


def serve(d, args, opts=(), expect=0):
    out, rep = os.path.join(d, "out.json"), os.path.join(d, "report.txt")
    r = harness.memphase(["run", "--no-tui", "--json", out] + list(opts) + ["--", SERVE] +
                         list(args) + ["--report", rep], timeout=180)
    assert r.returncode == expect, (r.returncode, r.stderr)
    return r, harness.load_json(out), harness.read_report(rep)


def anon(doc, name):
    return harness.phase(doc, name)["rss_growth_bytes"]["anon"]


def test_server_phases_requests_and_context():
    """probe, warmup, tokenize, prompt, mixed and generate under two slots; per-request
    growth within 5% of what the stand-in allocates; n_ctx read and the full-context
    projection consistent with the fit."""
    harness.need_root()
    nreq, batches, batch_mib, tokens, slots, token_kib, tok_kib, ctx_mib, n_ctx = \
        4, 2, 4, 8, 2, 64, 512, 8, 40960
    with harness.workdir() as d:
        r, doc, rep = serve(d, ["--n-ctx", str(n_ctx), "--ctx-mib", str(ctx_mib),
                                "--requests", str(nreq), "--prompt-batches", str(batches),
                                "--batch-mib", str(batch_mib), "--tokens", str(tokens),
                                "--slots", str(slots), "--token-kib", str(token_kib),
                                "--tokenize-kib", str(tok_kib), "--mixed"])
    names = [p["name"] for p in doc["phases"]]
    # the --fit probe's context is freed before any decode: probe:teardown, not teardown,
    # and it comes before the warm-up
    assert "probe:teardown" in names, names
    assert names.index("probe:teardown") < names.index("warmup"), names
    probe = harness.phase(doc, "probe:teardown")
    assert probe["rss_shrink_bytes"]["anon"] == ctx_mib * MIB, probe
    # the real teardown comes last and frees the rest
    assert names[-1] == "teardown", names
    # warm-up: one decode of two tokens (one prompt mapping), bracketed by llama_set_warmup
    # (give or take a page or two, here and below: the thread's stack, page tables, the
    # uprobe trampoline)
    harness.assert_close(anon(doc, "warmup"), batch_mib * MIB, 8 * KIB, "warmup")
    # tokenize: its own phase, one call per request (+ detokenize), tok_kib kept each
    harness.assert_close(anon(doc, "tokenize"), nreq * tok_kib * KIB, 16 * KIB, "tokenize")
    assert harness.phase(doc, "tokenize")["calls"] == 2 * nreq
    # prompt batches only in prompt: the one-token-per-slot steps are generation
    harness.assert_close(anon(doc, "prompt"), nreq * batches * batch_mib * MIB, 16 * KIB,
                         "prompt")
    assert harness.phase(doc, "prompt")["calls"] == nreq * batches
    gen = harness.phase(doc, "generate")
    assert gen["calls"] == nreq * (tokens - 1), gen
    harness.assert_close(anon(doc, "generate"), nreq * (tokens - 1) * slots * token_kib * KIB,
                         16 * KIB, "generate")
    # the first step of each request joins a prompt chunk: mixed
    mixed = harness.phase(doc, "mixed")
    assert mixed["calls"] == nreq, mixed
    harness.assert_close(anon(doc, "mixed"), nreq * (batch_mib * MIB + slots * token_kib * KIB),
                         16 * KIB, "mixed")
    # the time after a decode returns is the host's, not decode's
    assert "host" in names

    per_req = (batches * batch_mib * MIB + tokens * slots * token_kib * KIB +
               batch_mib * MIB + tok_kib * KIB)
    reqs = doc["requests"]
    assert len(reqs) == nreq, reqs
    for q in reqs:
        g = sum(q["rss_growth_bytes"][c] for c in ("anon", "file", "shmem"))
        assert abs(g - per_req) <= 0.05 * per_req, (g, per_req, q)
        assert q["tokens"]["prompt"] == batches * 64 + 64, q["tokens"]
        assert q["tokens"]["generated"] == tokens * slots, q["tokens"]
        by = {p["name"]: p["growth_bytes"] for p in q["phases"]}
        assert abs(by.get("tokenize", 0) - tok_kib * KIB) <= 8 * KIB, by
        assert q["end_s"] > q["start_s"] and not q["oom_killed"], q
    fit = doc["request_fit"]
    assert abs(fit["growth_per_request_bytes"] - per_req) <= 0.05 * per_req, fit
    # the context: n_ctx from llama_init_from_model's parameters, tokens from the batches
    cx = doc["context"]
    assert cx["n_ctx"] == n_ctx, cx
    seen = nreq * (batches * 64 + 64 + tokens * slots)
    assert cx["tokens_seen"] == seen, cx
    # a context is a slot's: each request is a new prompt in its slot, so the longest slot
    # reached one request's positions (prompt batches, the mixed chunk, the generation),
    # not the tokens of all requests summed
    longest = batches * 64 + 64 + tokens
    assert cx["positions_known"] and cx["slots_seen"] == slots, cx
    assert cx["longest_slot_tokens"] == longest, cx
    assert cx["slot_n_ctx"] == n_ctx, cx
    # growth per token: the fit over the decodes that reached further (the first
    # request's): between the prompt's batch_mib per 64 positions and the generation's
    # slots * token_kib per position
    lo, hi = batch_mib * MIB / 64, slots * token_kib * KIB
    assert 0.9 * lo <= cx["growth_per_token_bytes"] <= 1.1 * hi, (cx, lo, hi)
    assert abs(cx["projected_full_context_bytes"] -
               cx["growth_per_token_bytes"] * (n_ctx - longest)) <= 1, cx
    # split by cause as the growth since the first decode was sampled: the parts add up
    by = cx["projected_by_cause"]
    assert by is not None, cx
    parts = sum(c["bytes"] for c in by) + cx["projected_unmatched_bytes"]
    assert abs(parts - cx["projected_full_context_bytes"]) <= len(by) + 1, (parts, cx)
    assert {c["name"] for c in by} <= {c["name"] for c in doc["causes"]}, (by, doc["causes"])
    assert [c["bytes"] for c in by] == sorted((c["bytes"] for c in by), reverse=True), by
    # the summary
    out = " ".join(r.stdout.split())    # the summary wraps its long lines
    assert "%d requests: each kept +" % nreq in out, out
    assert "context: n_ctx 40,960, %s tokens decoded; the longest of %d slots reached %d" % (
        format(seen, ","), slots, longest) in out, out
    assert "at 40,960 tokens in a slot this run would hold about " in out, out


def test_parallel_slots_generate_without_mixing():
    """--parallel 2 without continuous batching: one token per slot per step is generation."""
    harness.need_root()
    with harness.workdir() as d:
        _, doc, _ = serve(d, ["--requests", "3", "--prompt-batches", "1", "--batch-mib", "2",
                              "--tokens", "5", "--slots", "2", "--token-kib", "64",
                              "--no-probe"])
    names = [p["name"] for p in doc["phases"]]
    assert "mixed" not in names and "probe:teardown" not in names, names
    assert harness.phase(doc, "generate")["calls"] == 15
    harness.assert_close(anon(doc, "generate"), 15 * 2 * 64 * KIB, 16 * KIB, "generate")
    assert harness.phase(doc, "prompt")["calls"] == 3
    assert [q["tokens"]["generated"] for q in doc["requests"]] == [10, 10, 10], doc["requests"]


def test_request_projection_under_a_cgroup():
    """Killed by its cgroup: the OOM report names the request, and the projection made
    after the third request lands within 10% of the request it really died in."""
    harness.need_root()
    batch_mib, batches = 4, 2
    with harness.workdir() as d, Cgroup(160 * MIB) as cg:
        out, rep = os.path.join(d, "out.json"), os.path.join(d, "report.txt")
        r = harness.memphase(["run", "--no-tui", "--json", out, "--"] + cg.wrap(
            [SERVE, "--requests", "0", "--prompt-batches", str(batches), "--batch-mib",
             str(batch_mib), "--tokens", "4", "--token-kib", "64", "--sleep-ms", "60",
             "--no-probe", "--report", rep]), timeout=180)
        assert r.returncode == 128 + 9, (r.returncode, r.stderr)
        doc, died = harness.load_json(out), harness.read_report(rep)["request"]
    reqs = doc["requests"]
    assert len(reqs) == died and reqs[-1]["oom_killed"], (died, len(reqs))
    assert all(not q["oom_killed"] for q in reqs[:-1]), reqs
    third = reqs[2]
    left = third["cgroup_requests_left"]
    assert left is not None, third
    projected = 3 + left
    assert abs(projected - died) <= 0.1 * died, (projected, died)
    assert "in request %d of %d" % (died, died) in r.stdout, r.stdout
    assert "each request added: " in r.stdout, r.stdout


def test_request_marker_defines_requests():
    """--request SYMBOL: each call starts a request; unknown symbols are reported as such."""
    harness.need_root()
    with harness.workdir() as d:
        r, doc, _ = serve(d, ["--requests", "3", "--prompt-batches", "1", "--batch-mib", "4",
                              "--tokens", "2", "--token-kib", "64", "--no-probe"],
                          opts=["--request", "llama_detokenize"])
        # detokenize ends each request: three boundaries, the first request from the
        # first detokenize to the second, the last from the third to the teardown (empty)
        reqs = doc["requests"]
        assert len(reqs) == 3, reqs
        per = 4 * MIB + 2 * 64 * KIB
        g = [sum(q["rss_growth_bytes"][c] for c in ("anon", "file", "shmem")) for q in reqs]
        assert all(abs(x - per) <= 16 * KIB for x in g[:2]) and abs(g[2]) <= 16 * KIB, g
        r, doc, _ = serve(d, ["--requests", "1", "--no-probe"], opts=["--request", "nosuchsym"])
        assert "--request nosuchsym never attached" in r.stdout, r.stdout
        assert doc["requests"] == [], doc["requests"]
        assert [u["symbol"] for u in doc["unmatched_markers"]] == ["nosuchsym"], doc


def model_file(d, mib):
    """A model file of mib MiB that the stand-in maps with MAP_POPULATE (file RSS)."""
    path = os.path.join(d, "model.gguf")
    with open(path, "wb") as f:
        f.write(os.urandom(mib * MIB))
    os.chmod(path, 0o644)
    return path


def test_fit_probe_load_and_context_are_shown_as_the_probe():
    """llama-server's --fit probe: a model and a context freed before any decode. The free
    shows the load and context before it as probe:load and probe:context, everywhere: the
    phase table (growth, shrink, faults, calls, entries, time), the intervals, the timeline,
    the trace's slices and the HTML report. The real load and context keep exactly theirs;
    a run without the probe shows no probe phase."""
    harness.need_root()
    model_mib, ctx_mib = 3, 8
    with harness.workdir() as d:
        model = model_file(d, model_mib)
        t, h, fo = (os.path.join(d, n) for n in ("t.json", "r.html", "f.txt"))
        args = ["--model", model, "--ctx-mib", str(ctx_mib), "--requests", "2",
                "--batch-mib", "4"]
        # no rate cap: a postponed sample would carry one phase's bytes into the next
        r, doc, _ = serve(d, args, opts=["--trace", t, "--html", h, "--folded", fo,
                                         "--sample-bytes", "64K", "--max-samples", "0"])
        trace = json.load(open(t))
        traceformat.check(t, doc["duration_s"])
        with open(h) as f:
            html = f.read()
        with open(fo) as f:
            folded = [ln.rsplit(" ", 1) for ln in f.read().splitlines()]
        _, plain, _ = serve(d, args + ["--no-probe"])
    names = [p["name"] for p in doc["phases"]]
    assert names[:7] == ["startup", "probe:load", "probe:context", "probe:teardown", "load",
                         "context", "warmup"], names
    pl, pc, pt = (harness.phase(doc, n) for n in ("probe:load", "probe:context",
                                                  "probe:teardown"))
    ld, cx = harness.phase(doc, "load"), harness.phase(doc, "context")
    # the real load maps the model again: exactly its pages (MAP_POPULATE), the code it
    # runs was faulted in by the probe's; the real context touches exactly ctx_mib
    assert ld["rss_growth_bytes"] == {"anon": 0, "file": model_mib * MIB, "shmem": 0,
                                      "swap": 0}, ld
    assert cx["rss_growth_bytes"]["anon"] == ctx_mib * MIB, cx
    # the probe's: the model's pages plus the first run of the loader's code (as the first
    # load of a run without a probe), its context exactly, all freed by its teardown
    assert 0 <= pl["rss_growth_bytes"]["file"] - model_mib * MIB <= 256 * KIB, pl
    first = harness.phase(plain, "load")["rss_growth_bytes"]["file"]
    assert abs(pl["rss_growth_bytes"]["file"] - first) <= 128 * KIB, (pl, first)
    assert pc["rss_growth_bytes"]["anon"] == ctx_mib * MIB, pc
    assert pt["rss_shrink_bytes"]["anon"] == ctx_mib * MIB, pt
    assert pt["rss_shrink_bytes"]["file"] == model_mib * MIB, pt
    # the address space's counters moved too: each load mapped the model once
    assert pl["mmap_bytes"] >= model_mib * MIB and ld["mmap_bytes"] == model_mib * MIB, ld
    assert pt["munmap_bytes"] >= (model_mib + ctx_mib) * MIB, pt
    # faults moved with the bytes: a fault per page of the context
    assert pc["faults"] >= ctx_mib * MIB // 4096 and cx["faults"] >= ctx_mib * MIB // 4096
    for p in (pl, pc, ld, cx):
        assert p["entries"] == 1 and p["calls"] == 1, p
        assert len(p["intervals"]) == 1, p
        iv = p["intervals"][0]
        assert abs((iv["end_s"] - iv["start_s"]) - p["time_s"]) < 1e-6, p
    assert pl["intervals"][0]["end_s"] <= pc["intervals"][0]["start_s"] + 1e-9
    assert pc["intervals"][0]["end_s"] <= pt["intervals"][0]["start_s"] + 1e-9
    assert pt["intervals"][0]["end_s"] <= ld["intervals"][0]["start_s"] + 1e-9
    # the RSS timeline names no phase the table lacks
    assert {s["phase"] for s in doc["timeline"]["samples"]} <= set(names), doc["timeline"]
    # the trace: the timeline's slices and the main thread's
    root = doc["target"]["pid"]
    for tid in (0, root):
        sl = [e["name"] for e in sorted((e for e in trace["traceEvents"] if e["ph"] == "X" and
                                         e["pid"] == root and e["tid"] == tid),
                                        key=lambda e: e["ts"])]
        assert sl[:6] == ["startup", "probe:load", "probe:context", "probe:teardown", "load",
                          "context"], (tid, sl[:8])
    assert '"probe:load"' in html and '"probe:context"' in html, "HTML phases"
    # the stack samples went with their intervals: the folded lines per phase (samples and
    # "[not sampled]") add up to the larger of its growth and its sampled bytes, none empty
    by = {}
    for stack, n in folded:
        assert int(n) > 0, (stack, n)
        by[stack.split(";")[0]] = by.get(stack.split(";")[0], 0) + int(n)
    for p in (pl, pc, ld, cx):
        assert p["stacks"]["sampled_bytes"] > 0, p
        g = sum(p["rss_growth_bytes"][c] for c in ("anon", "file", "shmem"))
        assert by.get(p["name"]) == max(g, p["stacks"]["sampled_bytes"]), (p["name"], by)
        # a sample carries the growth since the thread's last one (64 KiB): no more
        assert p["stacks"]["sampled_bytes"] <= g + 64 * KIB, p
    # the summary's phase table
    assert "\nprobe:context " in r.stdout and "\nprobe:load " in r.stdout, r.stdout
    # without a probe: as before
    pnames = [p["name"] for p in plain["phases"]]
    assert not [n for n in pnames if n.startswith("probe:")], pnames
    assert pnames[:4] == ["startup", "load", "context", "warmup"], pnames
    assert harness.phase(plain, "context")["rss_growth_bytes"]["anon"] == ctx_mib * MIB
    assert 0 <= first - model_mib * MIB <= 256 * KIB, first


def test_warmup_of_the_newest_llama_cpp_without_llama_set_warmup():
    """The newest common_init_from_params(): llama_decode(llama_batch_get_one({bos, eos})),
    llama_memory_clear, llama_synchronize, llama_perf_context_reset, no llama_set_warmup.
    The decode is warmup (not a prompt, not a request, not the context's tokens); the
    requests after it are as with the bracketed warm-up."""
    harness.need_root()
    nreq, batches, batch_mib, tokens = 3, 2, 4, 4
    args = ["--requests", str(nreq), "--prompt-batches", str(batches), "--batch-mib",
            str(batch_mib), "--tokens", str(tokens), "--token-kib", "64", "--no-probe"]
    with harness.workdir() as d:
        _, doc, _ = serve(d, args + ["--warmup", "common"])
        _, old, _ = serve(d, args)
    for dd in (doc, old):
        names = [p["name"] for p in dd["phases"]]
        assert names.index("warmup") < names.index("prompt"), names
        w = harness.phase(dd, "warmup")
        harness.assert_close(w["rss_growth_bytes"]["anon"], batch_mib * MIB, 8 * KIB, "warmup")
        harness.assert_close(anon(dd, "prompt"), nreq * batches * batch_mib * MIB, 16 * KIB,
                             "prompt")
        assert harness.phase(dd, "prompt")["calls"] == nreq * batches
        assert len(dd["requests"]) == nreq, dd["requests"]
        assert dd["context"]["tokens_seen"] == nreq * (batches * 64 + tokens), dd["context"]
    # the decode is the warm-up's only call; its return is the host's
    assert harness.phase(doc, "warmup")["calls"] == 1
    names = [p["name"] for p in doc["phases"]]
    assert names[names.index("warmup") + 1] == "host", names


def rss_anon(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * KIB
    return 0


def test_request_open_at_the_process_end_keeps_its_growth():
    """The process dies inside a request's prompt decode, growing, with no phase event
    after the decode's entry: the open request's RSS end is what the process held at its
    exit (the exit event, taken before the teardown), so the request shows the growth that
    the prompt phase shows, not +0."""
    harness.need_root()
    batch_mib = 1536
    with harness.workdir() as d:
        out, rep = os.path.join(d, "out.json"), os.path.join(d, "report.txt")
        argv = harness.mp_argv(["run", "--no-tui", "--json", out, "--", SERVE, "--requests",
                                "0", "--prompt-batches", "1", "--batch-mib", str(batch_mib),
                                "--tokens", "2", "--token-kib", "64", "--tokenize-kib", "0",
                                "--no-probe", "--warmup", "none", "--report", rep])
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            pid = base = None
            for _ in range(2000):
                if pid is None and os.path.exists(rep):
                    r = harness.read_report(rep)
                    if r.get("request") == 1:
                        pid = r["pid"]
                        base = rss_anon(pid)
                # killed while its prompt decode is 64 MiB into the batch's 1.5 GiB
                if pid is not None and rss_anon(pid) - base >= 64 * MIB:
                    os.kill(pid, signal.SIGKILL)
                    break
                time.sleep(0.005)
            assert pid, "llama-serve never reported its first request"
            so, se = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        assert p.returncode == 128 + 9, (p.returncode, se)
        doc = harness.load_json(out)
    reqs = doc["requests"]
    assert len(reqs) == 1 and reqs[0]["end_s"] is None, reqs
    g = reqs[0]["rss_growth_bytes"]["anon"]
    grown = anon(doc, "prompt")
    assert 64 * MIB <= grown < batch_mib * MIB, grown
    assert abs(g - grown) <= 256 * KIB, (g, grown)
    prompt = [x for x in reqs[0]["phases"] if x["name"] == "prompt"]
    assert prompt and abs(prompt[0]["growth_bytes"] - grown) <= 256 * KIB, reqs[0]
