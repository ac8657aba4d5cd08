# SPDX-License-Identifier: GPL-2.0
"""Phases that tell the truth, requests and the context, on the llama-serve stand-in.

llama-serve drives the stand-in libllama.so the way llama-server does: a --fit probe (a
model and a context freed before any decode), the real ones, a warm-up decode between
llama_set_warmup(true/false), then requests: tokenize, prompt batches (logits on the last
token), generation steps of one token per slot (all logits set), optionally the first step
joined with a prompt chunk (a mixed batch), detokenize. Its amounts are exact page counts.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KIB, MIB  # noqa: E402
from test_oom import Cgroup  # noqa: E402

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
    # the --fit probe's context is freed before any decode: fit-probe, not teardown, and
    # it comes before the warm-up
    assert "fit-probe" in names and names.index("fit-probe") < names.index("warmup"), names
    probe = harness.phase(doc, "fit-probe")
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
    # growth per token: what a request adds over its tokens (the fit runs through every
    # decode, inside requests too, so it is not exact: 15%)
    want = per_req / (batches * 64 + 64 + tokens * slots)
    assert abs(cx["growth_per_token_bytes"] - want) <= 0.15 * want, (cx, want)
    assert abs(cx["projected_full_context_bytes"] -
               cx["growth_per_token_bytes"] * (n_ctx - seen)) <= 1, cx
    # the summary
    out = r.stdout
    assert "%d requests: " % nreq in out and "steady +" in out, out
    assert "context: n_ctx 40,960, %s tokens decoded" % format(seen, ",") in out, out
    assert "at 40,960 tokens this run would hold about " in out, out


def test_parallel_slots_generate_without_mixing():
    """--parallel 2 without continuous batching: one token per slot per step is generation."""
    harness.need_root()
    with harness.workdir() as d:
        _, doc, _ = serve(d, ["--requests", "3", "--prompt-batches", "1", "--batch-mib", "2",
                              "--tokens", "5", "--slots", "2", "--token-kib", "64",
                              "--no-probe"])
    names = [p["name"] for p in doc["phases"]]
    assert "mixed" not in names and "fit-probe" not in names, names
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
