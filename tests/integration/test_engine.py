"""Against the real llama.cpp (LLAMA_BIN, see engine.py), with the flags of the case memphase
exists for: llama-server with unrelated prompts and llama-cli with the turns of one
conversation. Each request is one prompt, its growth within 10% (or 1.5 MiB) of /proc; the
settings, the prompt cache's entries, the checkpoints and the slots' context are the ones the
engine's own log (-lv 4) prints; the remedies name only flags its --help lists as current;
the forecast of when a memory cgroup runs out holds against the request the engine is killed
in. Without LLAMA_BIN every test skips, saying so."""
import atexit
import os
import shutil
import time

import engine
import harness
import test_html
from test_oom import Cgroup

MIB = engine.MIB
PROMPTS = 4
WORDS = 900             # about 4,300 tokens a prompt
_server = None


def close(got, want, what, rel=0.10, floor=1.5 * MIB):
    assert abs(got - want) <= max(rel * abs(want), floor), \
        "%s: memphase %.2f MiB, /proc or the log %.2f MiB" % (what, got / MIB, want / MIB)


def growth(q):
    return sum(q["rss_growth_bytes"][c] for c in ("anon", "file", "shmem"))


def cause(doc, name):
    for c in doc["causes"]:
        if c["name"] == name:
            return c
    raise AssertionError("no cause %r: %s" % (name, [c["name"] for c in doc["causes"]]))


def ceiling(doc, name):
    assert doc["ceilings"], "no ceilings"
    for c in doc["ceilings"]["causes"]:
        if c["name"] == name:
            return c
    raise AssertionError("no ceiling for %r: %s" % (name, doc["ceilings"]["causes"]))


def server_run():
    """One llama-server run the server tests share: the case's flags, --cache-ram 4096 on the
    command line and LLAMA_ARG_CTX_CHECKPOINTS=16 in the environment; PROMPTS unrelated
    prompts. (doc, log, summary, /proc growth per prompt, replies, the HTML page)."""
    global _server
    if isinstance(_server, Exception):
        raise _server
    if _server:
        return _server
    d = harness.tmpdir()
    atexit.register(shutil.rmtree, d, True)
    try:
        s = engine.Server(d, engine.CASE + ["--cache-ram", "4096"],
                          mp_opts=["--html", os.path.join(d, "page.html")],
                          env={"LLAMA_ARG_CTX_CHECKPOINTS": "16"})
        try:
            grew, replies = [], []
            for i in range(PROMPTS):
                g, reply = s.prompt(engine.prompt(i, WORDS))
                grew.append(g)
                replies.append(reply)
            doc = s.stop()
        finally:
            s.kill()
        _server = (doc, s.log, s.stdout, grew, replies, os.path.join(d, "page.html"))
    except Exception as e:  # noqa: BLE001 - every server test reports the same failure
        _server = e
        raise
    return _server


def test_server_requests_are_the_prompts_and_match_proc():
    doc, log, out, grew, replies, _ = server_run()
    reqs = doc["requests"]
    assert len(reqs) == PROMPTS, [(q["start_s"], growth(q)) for q in reqs]
    for i, (q, g, rep) in enumerate(zip(reqs, grew, replies)):
        close(growth(q), g, "request %d" % (i + 1))
        # its tokens: the prompt the server evaluated and what it generated
        assert q["tokens"]["prompt"] == rep["timings"]["prompt_n"], (q["tokens"], rep["timings"])
        assert q["tokens"]["generated"] >= rep["timings"]["predicted_n"] - 1, \
            (q["tokens"], rep["timings"])
    # the fit and the summary count what the user sent
    assert "%d requests: " % PROMPTS in out, out
    assert "\nWhere it stops" in out, out


def test_server_settings_are_read_with_their_source():
    doc, log, _, _, _, _ = server_run()
    e = doc["engine"]
    assert e and e["program"] == "llama-server", e
    st = e["settings"]
    n_ctx = int(log.last(r"llama_context: n_ctx\s+= (\d+)"))
    assert (st["ctx_size"]["value"], st["ctx_size"]["source"]) == (str(n_ctx), "flag"), st
    slots, unified = log.last(r"n_slots = (\d+), n_ctx_slot = \d+, kv_unified = '(\w+)'")
    assert (st["parallel"]["value"], st["parallel"]["from"]) == (slots, "auto"), st["parallel"]
    assert st["kv_unified"]["value"] == unified, st["kv_unified"]
    cram = log.last(r"prompt cache is enabled, size limit: (\d+) MiB")
    assert (st["cache_ram"]["value"], st["cache_ram"]["source"]) == (cram, "flag"), st
    cp = log.last(r"context checkpoints enabled, max = (\d+)")
    assert (st["ctx_checkpoints"]["value"], st["ctx_checkpoints"]["source"],
            st["ctx_checkpoints"]["from"]) == (cp, "env", "LLAMA_ARG_CTX_CHECKPOINTS"), st
    assert st["cache_type_k"]["value"] == "q8_0" and st["flash_attn"]["value"] == "on", st
    # a flag memphase has no setting for is listed, not fatal
    assert "--port" in e["unknown_flags"] and "-lv" in e["unknown_flags"], e["unknown_flags"]
    # the build's flags were read from its files: it deprecates --mlock for --load-mode
    assert e["build"] and e["build"]["deprecated"].get("--mlock") == "--load-mode", e["build"]


def test_server_cache_and_checkpoints_are_the_logs():
    doc, log, out, _, _, _ = server_run()
    # the prompt cache: its entries and bytes as the server's last cache state
    n, mib = log.last(r"cache state: (\d+) prompts, ([\d.]+) MiB")
    pc = ceiling(doc, "prompt cache")
    assert pc["units"] == int(n), (pc, n)
    close(cause(doc, "prompt cache")["bytes"], float(mib) * MIB, "prompt cache", rel=0.05,
          floor=0.5 * MIB)
    entries = [float(x) for x in log.all(r"- prompt 0x[0-9a-f]+:\s+\d+ tokens, "
                                         r"checkpoints:\s+\d+,\s+([\d.]+) MiB")]
    close(pc["unit_bytes"], max(entries) * MIB, "a cache entry", rel=0.05, floor=0.1 * MIB)
    assert pc["ceiling_bytes"] == 4096 * MIB and pc["state"] == "bounded", pc
    # the checkpoints: as many as it created, each the size it printed
    made = [float(x) for x in log.all(r"created context checkpoint \d+ of \d+ .*size = "
                                      r"([\d.]+) MiB")]
    assert made, "the server made no checkpoint: %s" % log.text()[-2000:]
    ck = ceiling(doc, "context checkpoints")
    assert ck["units"] == len(made), (ck, len(made))
    close(ck["unit_bytes"], max(made) * MIB, "a checkpoint", rel=0.01, floor=16 * 1024)
    slots = int(doc["engine"]["settings"]["parallel"]["value"])
    assert ck["max_units"] == 16 * slots, ck
    assert "--cache-ram 4096; %s entries" % n in harness.flat(out), out


def test_server_context_is_a_slots():
    doc, log, out, _, _, _ = server_run()
    cx = doc["context"]
    assert cx["positions_known"], cx
    # each prompt took a slot of its own (the server's LRU): as many as its log names
    used = set(log.all(r"slot\s+operator\(\): id\s+(\d+) \| task \d+ \| new prompt"))
    assert cx["slots_seen"] == len(used), (cx, used)
    longest = max(int(x) for x in log.all(r"stop processing: n_tokens = (\d+)"))
    assert cx["longest_slot_tokens"] == longest, (cx, longest)
    assert cx["tokens_seen"] > 2 * longest, cx    # the unrelated prompts did not add up
    assert "the longest of %d slots reached %s" % (len(used), format(longest, ",")) in \
        harness.flat(out), out


def test_server_heap_is_labelled_by_what_grew_it():
    doc, _, out, _, _, _ = server_run()
    state = harness.phase(doc, "state")
    heap = [m for m in state["top_mappings"] if m["path"] == "[heap]"]
    assert heap, state["top_mappings"]
    assert heap[0]["label_from"] == "causes" and \
        heap[0]["label"].startswith("prompt cache "), heap[0]
    assert heap[0]["origin"]["label"], heap[0]      # the first toucher stays, as a detail
    assert "[heap] <- prompt cache" in harness.flat(out), out


def test_server_page_shows_the_ceilings_and_settings():
    """The HTML report in headless chromium: its "Where it stops" rows are the JSON's
    ceilings, its verdict the summary's lines, its settings table the settings read."""
    doc, _, out, _, _, page = server_run()
    res = test_html.check_in_browser(page, "prompt", os.path.join(harness.BUILD,
                                                                  "html-engine.png"))
    assert res["errors"] == [] and res["requests"] == [], res
    want = [[c["name"], str(c["bytes"])] for c in doc["ceilings"]["causes"]]
    assert [r[:2] for r in res["ceilings"]] == want, (res["ceilings"], want)
    assert res["verdict"] == doc["ceilings"]["verdict"], res["verdict"]
    for line in res["verdict"]:     # the summary wraps them
        assert harness.flat(line) in harness.flat(out), (line, out)
    shown = {r[0]: r[1] for r in res["engine"]}
    st = doc["engine"]["settings"]
    assert shown["--cache-ram"] == "4096" and shown["--ctx-checkpoints"] == "16", shown
    assert len(shown) == sum(1 for s in st.values() if s["value"] or s["source"] != "default")
    assert res["engine_title"].startswith("Engine: llama-server (pid "), res["engine_title"]


def check_remedies(doc, exe):
    current, deprecated = engine.help_flags(exe)
    assert "--cache-ram" in current and "--mlock" in deprecated, (len(current), deprecated)
    named = 0
    for c in doc["causes"]:
        for flag in engine.remedy_flags(c["remedy"]):
            named += 1
            assert flag in current, "%s's remedy names %s, which %s --help %s" % (
                c["name"], flag, os.path.basename(exe),
                "deprecates" if flag in deprecated else "does not list")
    assert named, doc["causes"]


def test_server_remedies_name_only_current_flags():
    doc, _, _, _, _, _ = server_run()
    check_remedies(doc, os.path.join(engine.build()[0], "llama-server"))


def test_cli_turns_are_requests_and_match_proc():
    harness.need_root()
    with harness.workdir() as d:
        c = engine.Cli(d, engine.CASE + ["-n", "8"])
        try:
            grew = [c.turn(engine.prompt(10 + i, WORDS)) for i in range(3)]
            doc = c.exit()
        finally:
            c.kill()
        check_cli(doc, c.log, grew)


def check_cli(doc, log, grew):
    reqs = doc["requests"]
    assert len(reqs) == 3, [(q["start_s"], growth(q)) for q in reqs]
    for i, (q, g) in enumerate(zip(reqs, grew)):
        close(growth(q), g, "turn %d" % (i + 1))
    st = doc["engine"]["settings"]
    assert doc["engine"]["program"] == "llama-cli", doc["engine"]
    # llama-cli runs the server in-process with one slot
    assert (st["parallel"]["value"], st["parallel"]["from"]) == ("1", "auto"), st["parallel"]
    slots, unified = log.last(r"n_slots = (\d+), n_ctx_slot = \d+, kv_unified = '(\w+)'")
    assert slots == "1" and st["kv_unified"]["value"] == unified, (st["kv_unified"], unified)
    cram = log.last(r"prompt cache is enabled, size limit: (\d+) MiB")
    assert (st["cache_ram"]["value"], st["cache_ram"]["source"]) == (cram, "default"), st
    # one conversation in one slot: its context is the turns' together
    cx = doc["context"]
    longest = max(int(x) for x in log.all(r"stop processing: n_tokens = (\d+)"))
    assert cx["slots_seen"] == 1 and cx["longest_slot_tokens"] == longest, (cx, longest)
    made = log.all(r"created context checkpoint \d+ of \d+")
    assert ceiling(doc, "context checkpoints")["units"] == len(made), made
    check_remedies(doc, os.path.join(engine.build()[0], "llama-cli"))


def test_cgroup_forecast_holds_until_the_engine_is_killed():
    """llama-server in a memory cgroup, prompts until the cgroup kills it. The forecast made
    from the recording up to the sixth request ("runs out after N more requests", before the
    prompt cache reaches its cap) names the request it died in, within 10% (or 1), and a
    --cache-ram the build accepts that would have kept it under the limit. (Two checkpoints a
    slot: with 32, the slots' checkpoints alone could outgrow this small a limit.)"""
    harness.need_root()
    engine.build()
    limit = 300 * MIB
    with harness.workdir() as d, Cgroup(limit) as cg:
        rec = os.path.join(d, "run.mprec")
        s = engine.Server(d, engine.CASE + ["--ctx-checkpoints", "2"],
                          mp_opts=["--record", rec], wrap=cg.wrap)
        ends, died = [], None
        try:
            for i in range(60):
                try:
                    s.prompt(engine.prompt(100 + i, WORDS))
                except OSError:
                    died = i + 1
                    break
                ends.append(time.time())
            assert died, "the server outlived %d prompts under %d MiB" % (i + 1, limit // MIB)
            s.p.wait(timeout=60)
        finally:
            s.kill()
        doc = harness.load_json(s.json)
        assert doc["requests"][-1]["oom_killed"], doc["requests"][-1]
        assert len(doc["requests"]) == died, (len(doc["requests"]), died)
        # the forecast as it stood after request 6 (five requests to average, sampled)
        t3 = doc["requests"][6]["start_s"]
        at3 = os.path.join(d, "at3.json")
        r = harness.memphase(["report", rec, "--to", "%.3f" % t3, "--json", at3])
        assert r.returncode == 0, r.stderr
        early = harness.load_json(at3)
    room = early["ceilings"]["room"]
    assert room and room["of"] == "the memory cgroup's limit" and not room["fits"], room
    left = room["requests_left"]
    # "used up after N more requests": N fit, the next one does not
    print("died in request %d; after request 6: %s more" % (died, left))
    assert left is not None and abs(6 + left + 1 - died) <= max(1, 0.1 * died), (left, died)
    sug = room["suggestion"]
    assert sug and sug["fits"], sug
    first = sug["settings"][0]
    assert (first["cause"], first["flag"]) == ("prompt cache", "--cache-ram"), sug
    assert 0 < first["value"] < 8192, sug
    current, _ = engine.help_flags(os.path.join(engine.build()[0], "llama-server"))
    assert all(x["flag"] in current for x in sug["settings"]), sug
    assert "--cache-ram %d keep" % first["value"] in r.stdout, r.stdout
    # and it does: under the same limit, with the settings suggested, the server outlives
    # the prompts that killed it and a few more, its prompt cache within the cap
    flags = []
    for x in sug["settings"]:
        flags += [x["flag"], str(x["value"])]
    with harness.workdir() as d, Cgroup(limit) as cg:
        s = engine.Server(d, engine.CASE + ["--ctx-checkpoints", "2"] + flags, wrap=cg.wrap)
        try:
            for i in range(died + 3):
                s.prompt(engine.prompt(100 + i, WORDS))
            doc = s.stop()
        finally:
            s.kill()
        cap = float(s.log.last(r"cache state: \d+ prompts, [\d.]+ MiB \(limits: ([\d.]+) MiB"))
        held = max(float(x) for x in s.log.all(r"cache state: \d+ prompts, ([\d.]+) MiB"))
    assert cap == first["value"] and held <= cap, (cap, held)
    assert not any(q["oom_killed"] for q in doc["requests"]), doc["requests"][-1]
