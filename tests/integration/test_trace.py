# SPDX-License-Identifier: GPL-2.0
"""--trace: the Chrome/Perfetto trace-event format, checked against the format's rules
(traceformat.py) and imported by speedscope (npm) in headless chromium."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MIB  # noqa: E402
import test_oom  # noqa: E402
import test_record  # noqa: E402
import traceformat  # noqa: E402

NODE_DIR = os.path.join(harness.BUILD, "node")
PHASES = ["startup", "load", "context", "prompt", "generate", "state", "teardown"]


def phase_order(names):
    """The phases in order, host (the driver's own time between decodes) left out and a
    phase entered again right after itself counted once."""
    names = [n for n in names if n != "host"]
    return [n for i, n in enumerate(names) if not i or names[i - 1] != n]


def merged(slices):
    """(start, end, name) slices in order, those that go on in the same name as one."""
    out = []
    for a, b, n in slices:
        if out and out[-1][2] == n and out[-1][1] == a:
            out[-1] = (out[-1][0], b, n)
        else:
            out.append((a, b, n))
    return out


def need_browser():
    """chromium (installed when missing) and, in build/node, speedscope and puppeteer-core,
    which make test installs first (scripts/node-deps.sh); Skip (counted, with the reason)
    when they cannot be had."""
    chromium = shutil.which("chromium")
    if not chromium:
        r = harness.run(["apt-get", "install", "-y", "-q", "chromium"], timeout=600)
        chromium = shutil.which("chromium")
        if not chromium:
            raise harness.Skip("chromium cannot be installed: " + r.stderr.strip()[-200:])
    mods = os.path.join(NODE_DIR, "node_modules")
    if not os.path.isdir(os.path.join(mods, "speedscope")) or \
            not os.path.isdir(os.path.join(mods, "puppeteer-core")):
        try:
            with open(os.path.join(NODE_DIR, "unavailable")) as f:
                why = f.read().strip()
        except OSError:
            why = "not installed (scripts/node-deps.sh installs them; make test runs it)"
        raise harness.Skip("speedscope and puppeteer-core: " + why)
    return chromium


def speedscope_import(path):
    """What speedscope_import.js printed: its last line ('OK <title>' or 'FAIL <why>') and
    the warnings speedscope logged while importing and showing the file; raises Skip when
    the tools cannot be had."""
    chromium = need_browser()
    release = os.path.join(NODE_DIR, "node_modules", "speedscope", "dist", "release")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "speedscope_import.js")
    r = subprocess.run(["node", script, chromium, release, path], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, NODE_PATH=os.path.join(
                           NODE_DIR, "node_modules")))
    lines = (r.stdout + r.stderr).strip().splitlines() or [""]
    return lines[-1], [ln[5:] for ln in lines if ln.startswith("WARN ")]


def speedscope_clean(path):
    """speedscope imports the file and warns of nothing."""
    out, warnings = speedscope_import(path)
    assert out.startswith("OK"), out
    assert not warnings, "speedscope warned %d times: %s" % (len(warnings), warnings[:5])


def test_trace_has_phases_per_thread_counters_and_marks():
    """The phase timeline, the main thread's phases, RSS and memory counters and the
    libraries loaded, in a trace that keeps the format's rules and that speedscope
    imports without a warning."""
    harness.need_root()
    with harness.workdir() as d:
        t, j = os.path.join(d, "t.json"), os.path.join(d, "r.json")
        r = harness.memphase(["run", "--no-tui", "--trace", t, "--json", j, "--"] +
                             test_record.driver(d))
        assert r.returncode == 0, r.stderr
        doc, summ = json.load(open(t)), harness.load_json(j)
        tr = traceformat.check(t, summ["duration_s"])
        ev = doc["traceEvents"]
        root = summ["target"]["pid"]
        # the phase timeline: the phases in order, and their durations as in the JSON
        tl = sorted((e["ts"], e["name"], e["dur"]) for e in ev
                    if e["ph"] == "X" and e["pid"] == root and e["tid"] == 0)
        names = [n for _, n, _ in tl]
        assert phase_order(names) == PHASES, names
        # a phase entered again (prompt, generate and host alternate) has a slice each time
        for n in set(names):
            durs = [x for _, m, x in tl if m == n]
            err = abs(sum(durs) / 1e6 - harness.phase(summ, n)["time_s"])
            assert err < 1e-5 + 1e-6 * len(durs), (n, durs)    # each slice to 1/8 us
        # the main thread's own track shows the same phases
        assert [n for _, _, n in sorted((e["ts"], e["dur"], e["name"]) for e in ev
                if e["ph"] == "X" and e["tid"] == root)] == names
        assert (root, root) in tr.tracks, sorted(tr.tracks)
        meta = {(e["name"], e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M"}
        assert meta[("process_name", root, 0)].startswith("llama-driver (pid %d)" % root), meta
        rss = [e["args"] for e in ev if e["ph"] == "C" and e["name"] == "RSS bytes"]
        assert rss and max(a["anon"] for a in rss) >= 16 * MIB, rss[-1:]
        assert any(e["ph"] == "C" and "MemAvailable" in e["args"] for e in ev)
        libs = [e["name"] for e in ev if e["ph"] == "i" and e["cat"] == "library"]
        assert any(n.endswith("/libllama.so") for n in libs), libs
        speedscope_clean(t)


def test_trace_of_an_oom_kill_marks_it_with_cgroup_counters():
    """An OOM kill: one global instant, the cgroup's counters with its limit, nothing after
    the end of the run; memphase report writes the same trace from the recording."""
    harness.need_root()
    with harness.workdir() as d, test_oom.Cgroup(96 * MIB) as cg:
        t, j = os.path.join(d, "t.json"), os.path.join(d, "r.json")
        rec = os.path.join(d, "r.mprec")
        r = harness.memphase(["run", "--no-tui", "--record", rec, "--trace", t, "--json", j,
                              "--"] + cg.wrap(test_oom.growing_driver(d, 100)))
        assert r.returncode == 128 + 9, r.stderr
        doc = json.load(open(t))
        traceformat.check(t, harness.load_json(j)["duration_s"])
        ooms = [e for e in doc["traceEvents"] if e["ph"] == "i" and e["cat"] == "oom_kill"]
        assert len(ooms) == 1 and ooms[0]["s"] == "g", ooms
        cgs = [e["args"] for e in doc["traceEvents"]
               if e["ph"] == "C" and e["name"] == "memory cgroup bytes"]
        # the first readings may come before the command joined the cgroup
        assert cgs and cgs[-1].get("limit") == 96 * MIB, cgs[-2:]
        # report writes the same trace from the recording
        t2 = os.path.join(d, "t2.json")
        p = harness.memphase(["report", rec, "--trace", t2])
        assert p.returncode == 0, p.stderr
        assert json.load(open(t2)) == doc
        speedscope_clean(t)


def test_trace_has_the_requests_on_their_own_track():
    """llama-serve's requests: one slice each on a "requests" track, in order, with the
    start, duration and tokens the JSON's requests[] has."""
    harness.need_root()
    import test_requests
    with harness.workdir() as d:
        t = os.path.join(d, "t.json")
        _, summ, _ = test_requests.serve(d, ["--requests", "3", "--prompt-batches", "1",
                                             "--batch-mib", "2", "--tokens", "4",
                                             "--token-kib", "64"], opts=["--trace", t])
        doc = json.load(open(t))
        traceformat.check(t, summ["duration_s"])
        ev = doc["traceEvents"]
        names = [e for e in ev if e["ph"] == "M" and e["args"].get("name") == "requests"]
        assert len(names) == 1, names
        tid = names[0]["tid"]
        sl = sorted((e for e in ev if e["ph"] == "X" and e.get("cat") == "request"
                     and e["tid"] == tid), key=lambda e: e["ts"])
        reqs = summ["requests"]
        assert len(reqs) == 3 and len(sl) == len(reqs), (len(sl), reqs)
        for i, (e, q) in enumerate(zip(sl, reqs)):
            assert e["name"] == "request %d" % (i + 1), e
            assert abs(e["ts"] / 1e6 - q["start_s"]) < 0.002, (e, q)
            assert abs((e["ts"] + e["dur"]) / 1e6 - q["end_s"]) < 0.002, (e, q)
            assert e["args"]["generated_tokens"] == q["tokens"]["generated"], (e, q)
        speedscope_clean(t)


def test_trace_has_the_growth_samples_with_their_stacks():
    """Every stack sample of growth as an instant on the track of the thread that took it:
    named by its cause (or its innermost frame), in its phase's slice where the thread has
    one, its stack both in the stackFrames tree (sf) and as text (for Perfetto, which reads
    no stackFrames); by cause their bytes are the JSON's causes. The threads' tracks of a
    process together are its phase timeline. speedscope reads the stackFrames tree (given
    the samples as its sample list) without a warning."""
    harness.need_root()
    import test_explain
    with harness.workdir() as d:
        t = os.path.join(d, "t.json")
        _, summ, _, _ = test_explain.explain_run(d, extra=["--trace", t], requests=2)
        tr = traceformat.check(t, summ["duration_s"])
        sm = [e for e in tr.events if e.get("cat") == "rss_growth"]
        assert sm, "no samples in the trace"
        by, tids = {}, set()
        for e in sm:
            assert e["ph"] == "i" and e["s"] == "t", e
            frames = tr.stack(e["sf"])
            assert e["args"]["stack"] == " <- ".join(reversed(frames)), (e, frames)
            by[e["name"]] = by.get(e["name"], 0) + e["args"]["bytes"]
            tids.add(e["tid"])
            # where its thread's track has a slice (the thread made the phase current),
            # the slice is of the sample's phase
            at = [x["name"] for a, b, x in tr.tracks.get((e["pid"], e["tid"]), [])
                  if a <= e["ts"] < b]
            assert at in ([], [e["args"]["phase"]]), (e, at)
        root = summ["target"]["pid"]
        assert root in tids, tids
        # the phase is the process's: its threads' tracks together are its phase timeline,
        # one slice at a time (the requests are served on threads of their own)
        th = sorted((a, b, x["name"]) for (pid, tid), sl in tr.tracks.items()
                    if pid == root and tid not in (0, 1) for a, b, x in sl)
        assert len({tid for pid, tid in tr.tracks if pid == root}) > 3, sorted(tr.tracks)
        assert merged(th) == merged((a, b, x["name"]) for a, b, x in tr.tracks[(root, 0)]), th
        causes = {c["name"]: c["bytes"] for c in summ["causes"]}
        assert causes and {n: by.get(n, 0) for n in causes} == causes, (causes, by)
        unmatched = sum(b for n, b in by.items() if n not in causes)
        assert unmatched == summ["causes_unmatched_bytes"], (unmatched, by)
        # speedscope reads stackFrames only with a sample list, which would replace the
        # phases with the samples (weighed by the time between them): given one here
        doc = json.load(open(t))
        doc["samples"] = [{"name": e["name"], "pid": e["pid"], "tid": e["tid"],
                           "ts": float(e["ts"]), "sf": e["sf"], "weight": e["args"]["bytes"]}
                          for e in sm]
        s = os.path.join(d, "samples.json")
        with open(s, "w") as f:
            json.dump(doc, f)
        traceformat.check(s, summ["duration_s"])
        speedscope_clean(s)
