# SPDX-License-Identifier: GPL-2.0
"""The recording (--record, memphase record) and memphase report.

report feeds the recording back through the collector: its JSON must equal the live
run's key by key, a recording cut short by a SIGKILLed memphase reads up to its last
whole chunk, and a corrupt, truncated, wrong-version or foreign file is one line and a
non-zero exit.
"""
import os
import re
import signal
import struct
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MIB  # noqa: E402
import test_oom  # noqa: E402

SAMPLES = ["--sample-bytes", "64K", "--max-samples", "0"]
SUDO_NOBODY = {"SUDO_UID": "65534", "SUDO_GID": "65534"}


def driver(d, **over):
    o = dict(ctx_mib=16, prompt_batches=2, batch_mib=4, tokens=16, token_kib=64, state_mib=4,
             fork_mib=2, sleep_ms=20)
    o.update(over)
    args = [harness.DRIVER]
    for k, v in o.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    return args + ["--report", os.path.join(d, "report.txt")]


def diff(a, b, path=""):
    """Every difference between two JSON values, as 'path: a != b' lines."""
    if type(a) is not type(b):
        return ["%s: %r != %r" % (path, a, b)]
    if isinstance(a, dict):
        out = ["%s/%s: only in %s" % (path, k, "live" if k in a else "report")
               for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            out += diff(a[k], b[k], path + "/" + k)
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return ["%s: %d items != %d" % (path, len(a), len(b))]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, "%s[%d]" % (path, i))
        return out
    return [] if a == b else ["%s: %r != %r" % (path, a, b)]


def summary(text):
    """The summary printed at the end, from its phase table on."""
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("PHASE") or ln.startswith("OOM-killed:"):
            return "\n".join(lines[i:])
    return text


def live_and_report(d, cmd, extra=()):
    live = {k: os.path.join(d, "live." + k) for k in ("json", "folded")}
    rep = {k: os.path.join(d, "report." + k) for k in ("json", "folded")}
    rec = os.path.join(d, "run.mprec")
    r = harness.memphase(["run", "--no-tui", "--json", live["json"], "--folded", live["folded"],
                          "--record", rec] + SAMPLES + list(extra) + ["--"] + cmd)
    p = harness.memphase(["report", rec, "--json", rep["json"], "--folded", rep["folded"]])
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", p.stderr
    return r, p, live, rep, rec


def test_report_json_equals_the_live_runs_key_by_key():
    harness.need_root()
    with harness.workdir() as d:
        r, p, live, rep, rec = live_and_report(d, driver(d))
        assert r.returncode == 0, r.stderr
        a, b = harness.load_json(live["json"]), harness.load_json(rep["json"])
        assert a["phases"] and harness.phase(a, "generate")["calls"] == 16, a["phases"]
        assert sum(p["stacks"]["samples"] for p in a["phases"]) > 0, a["phases"]
        assert diff(a, b) == [], "\n".join(diff(a, b)[:20])
        with open(live["folded"]) as f1, open(rep["folded"]) as f2:
            folded = f1.read()
            assert folded and folded == f2.read()
        assert summary(r.stdout) == summary(p.stdout)
        # the phase timeline's intervals add up to each phase's time and tile the run
        ivs = sorted((i["start_s"], i["end_s"], p["name"]) for p in a["phases"]
                     for i in p["intervals"])
        for p in a["phases"]:
            total = sum(i["end_s"] - i["start_s"] for i in p["intervals"])
            assert abs(total - p["time_s"]) < 1e-6, (p["name"], total, p["time_s"])
        assert ivs[0][0] == 0 and abs(ivs[-1][1] - a["duration_s"]) < 1e-6, ivs
        for x, y in zip(ivs, ivs[1:]):
            assert abs(x[1] - y[0]) < 1e-9, (x, y)
        # host: the driver's own time between decodes (a phase since phases10)
        names = [n for _, _, n in ivs if n != "host"]
        names = [n for i, n in enumerate(names) if not i or names[i - 1] != n]
        assert names[:5] == ["startup", "load", "context", "prompt", "generate"], ivs
        tl = a["timeline"]["samples"]
        assert tl and all(x["t_s"] <= y["t_s"] for x, y in zip(tl, tl[1:])), tl
        assert max(x["anon"] for x in tl) >= 8 * MIB, tl
        # small: a short run is a few KiB
        assert os.path.getsize(rec) < 256 * 1024, os.path.getsize(rec)


def test_report_of_an_oom_killed_run_equals_the_live_json():
    """The OOM kill, its cgroup and the growth before it come back the same."""
    harness.need_root()
    with harness.workdir() as d, test_oom.Cgroup(96 * MIB) as cg:
        r, p, live, rep, rec = live_and_report(d, cg.wrap(test_oom.growing_driver(d, 100)))
        assert r.returncode == 128 + 9, r.stderr
        a, b = harness.load_json(live["json"]), harness.load_json(rep["json"])
        assert len(a["oom"]) == 1 and a["oom"][0]["cgroup_oom"] is True, a["oom"]
        assert diff(a, b) == [], "\n".join(diff(a, b)[:20])
        assert summary(p.stdout).startswith("OOM-killed:"), p.stdout


def test_record_subcommand_is_run_with_a_recording():
    harness.need_root()
    with harness.workdir() as d:
        rec = os.path.join(d, "r.mprec")
        r = harness.memphase(["record", "--allow-root", "--no-tui", "-o", rec, "--"] +
                             driver(d))
        assert r.returncode == 0, r.stderr
        p = harness.memphase(["report", rec])
        assert p.returncode == 0 and "generate" in p.stdout, p.stderr
        # -o alone is record's; record needs it
        for bad in (["run", "-o", rec, "--", harness.NOLLAMA, "0"],
                    ["record", "--allow-root", "--", harness.NOLLAMA, "0"],
                    ["run", "--record-max", "1M", "--", harness.NOLLAMA, "0"],
                    ["run", "--record", rec, "--record-max", "1K", "--", harness.NOLLAMA, "0"]):
            r = harness.memphase(bad)
            assert r.returncode == 125 and len(r.stderr.strip().splitlines()) == 1, (bad, r)


def chunks(data):
    """(offset, length) of each chunk of a recording."""
    off, out = 24, []
    while off + 24 <= len(data):
        clen = struct.unpack("<I", data[off + 8:off + 12])[0]
        out.append((off, 24 + clen))
        off += 24 + clen
    return out


def test_corrupt_truncated_wrong_version_and_foreign_files():
    harness.need_root()
    with harness.workdir() as d:
        rec = os.path.join(d, "ok.mprec")
        r = harness.memphase(["run", "--no-tui", "--record", rec, "--"] + driver(d))
        assert r.returncode == 0, r.stderr
        data = open(rec, "rb").read()
        cs = chunks(data)
        assert len(cs) >= 2 and sum(n for _, n in cs) + 24 == len(data), cs

        def header_with(version):
            h = bytearray(data[:24])
            h[8:12] = struct.pack("<I", version)
            h[20:24] = struct.pack("<I", zlib.crc32(bytes(h[:20])))
            return bytes(h)
        flipped = bytearray(data)
        flipped[cs[0][0] + 30] ^= 0x55   # inside the first chunk's payload
        bad = {
            "foreign": (b"GIF89a" + b"\0" * 100, "not a memphase recording"),
            "empty": (b"", "not a memphase recording"),
            "version": (header_with(7) + data[24:], "version 7"),
            "header": (data[:20] + b"\0\0\0\0" + data[24:], "header is damaged"),
            "payload": (bytes(flipped), "checksum mismatch"),
            "header-only": (data[:24], "holds no run"),
        }
        for name, (content, says) in bad.items():
            path = os.path.join(d, name)
            with open(path, "wb") as f:
                f.write(content)
            p = harness.memphase(["report", path, "--json", os.path.join(d, "x.json")],
                                 timeout=20)
            lines = p.stderr.strip().splitlines()
            assert p.returncode == 125, (name, p.returncode, p.stderr)
            assert len(lines) == 1 and says in lines[0], (name, p.stderr)
            assert not os.path.exists(os.path.join(d, "x.json")), name
        # cut inside the last chunk: everything before it, and a note
        cut = os.path.join(d, "cut")
        with open(cut, "wb") as f:
            f.write(data[:cs[-1][0] + 30])
        p = harness.memphase(["report", cut, "--json", os.path.join(d, "cut.json")])
        assert p.returncode == 0, p.stderr
        assert "truncated" in p.stderr and "last whole chunk" in p.stderr, p.stderr
        doc = harness.load_json(os.path.join(d, "cut.json"))
        assert doc["phases"], doc
        # not a file at all
        for path, says in ((d, "Is a directory"), (os.path.join(d, "nope"), "No such file")):
            p = harness.memphase(["report", path])
            assert p.returncode == 125 and says in p.stderr, p.stderr
            assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_sigkill_of_memphase_leaves_a_recording_readable_to_its_last_chunk():
    """A chunk is written at least every second: after a SIGKILL the file at its name
    holds the run up to about then, and report says it was not finished."""
    harness.need_root()
    with harness.workdir() as d:
        rec = os.path.join(d, "k.mprec")
        cmd = driver(d, tokens=400, sleep_ms=10)
        p = subprocess.Popen(harness.mp_argv(["run", "--no-tui", "--record", rec, "--"] + cmd),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            # the generate phase runs for about 4 s; kill memphase 2.5 s in
            time.sleep(2.5)
            os.kill(p.pid, signal.SIGKILL)
            p.wait(timeout=10)
        finally:
            if p.poll() is None:
                p.kill()
        # its watchdog lets the held command go; wait for it to finish
        time.sleep(0.5)
        assert os.path.exists(rec), os.listdir(d)
        r = harness.memphase(["report", rec, "--json", os.path.join(d, "k.json")])
        assert r.returncode == 0, r.stderr
        assert "not finished" in r.stderr, r.stderr
        doc = harness.load_json(os.path.join(d, "k.json"))
        # tolerance: the last second before the kill may be missing, so of the ~250
        # tokens generated by then, at least some are in (a flush every second)
        assert harness.phase(doc, "generate")["calls"] > 0, doc["phases"]
        # no temporary files were left beside it
        assert [f for f in os.listdir(d) if f.startswith(".k.mprec")] == [], os.listdir(d)


def test_recording_belongs_to_the_invoking_user_and_replaces_atomically():
    harness.need_root()
    with harness.workdir() as d:
        os.chmod(d, 0o777)
        rec = os.path.join(d, "n.mprec")
        r = harness.memphase(["run", "--no-tui", "--record", rec, "--", harness.NOLLAMA, "0"],
                             env=SUDO_NOBODY)
        assert r.returncode == 0, r.stderr
        st = os.stat(rec)
        assert st.st_uid == 65534 and st.st_gid == 65534, st
        before = open(rec, "rb").read()
        # a run that fails before it starts leaves the old recording as it was
        r = harness.memphase(["run", "--no-tui", "--record", rec, "--", "/nonexistent/cmd"],
                             env=SUDO_NOBODY)
        assert r.returncode == 127, r.stderr
        assert open(rec, "rb").read() == before
        assert [f for f in os.listdir(d) if f.startswith(".n.mprec")] == [], os.listdir(d)
        # another user's symlink is not followed
        victim = os.path.join(d, "victim")
        open(victim, "w").write("keep")
        link = os.path.join(d, "planted.mprec")
        os.symlink(victim, link)
        os.lchown(link, 1234, 1234)
        r = harness.memphase(["run", "--no-tui", "--record", link, "--", harness.NOLLAMA, "0"],
                             env=SUDO_NOBODY)
        assert r.returncode == 125 and open(victim).read() == "keep", r.stderr
        # a pipe is not a recording
        r = harness.memphase(["run", "--no-tui", "--record", "-", "--", harness.NOLLAMA, "0"])
        assert r.returncode == 125 and "regular file" in r.stderr, r.stderr


def test_report_window_and_one_phase():
    """--phase NAME: that phase alone, as the whole run had it; --from/--to: what happened
    in the window (counters at the collector's 100 ms resolution, samples by their time)."""
    harness.need_root()
    with harness.workdir() as d:
        cmd = driver(d, tokens=40, token_kib=256)
        r, p, live, rep, rec = live_and_report(d, cmd)
        assert r.returncode == 0, r.stderr
        a = harness.load_json(live["json"])
        gen = harness.phase(a, "generate")
        g = {k: os.path.join(d, "g." + k) for k in ("json", "folded")}
        p = harness.memphase(["report", rec, "--phase", "generate", "--json", g["json"],
                              "--folded", g["folded"]])
        assert p.returncode == 0 and p.stderr == "", p.stderr
        b = harness.load_json(g["json"])
        assert [x["name"] for x in b["phases"]] == ["generate"], b["phases"]
        assert diff(gen, b["phases"][0]) == [], diff(gen, b["phases"][0])
        rows = [ln.rsplit(" ", 1) for ln in open(g["folded"]).read().splitlines()]
        assert rows and all(s.startswith("generate;") for s, _ in rows), rows[:3]
        assert sum(int(w) for _, w in rows) == gen["stacks"]["sampled_bytes"]
        # a window inside generate: 0.3 s of the ~0.9 s of 40 tokens (about 22 ms each)
        start = gen["intervals"][0]["start_s"]
        w = os.path.join(d, "w.json")
        p = harness.memphase(["report", rec, "--from", "%.3f" % (start + 0.2),
                              "--to", "%.3f" % (start + 0.5), "--json", w])
        assert p.returncode == 0 and p.stderr == "", p.stderr
        c = harness.load_json(w)
        assert abs(c["duration_s"] - 0.3) < 1e-6, c["duration_s"]
        wg = harness.phase(c, "generate")
        # generation alternates generate (the decode) and host (the driver's own time):
        # together their intervals tile the window
        ivs = sorted((i["start_s"], i["end_s"]) for p in c["phases"] for i in p["intervals"])
        assert ivs[0][0] == 0 and abs(ivs[-1][1] - 0.3) < 1e-6, ivs
        assert all(abs(x[1] - y[0]) < 1e-9 for x, y in zip(ivs, ivs[1:])), ivs
        assert 0 < wg["time_s"] < 0.3, wg
        assert abs(sum(i["end_s"] - i["start_s"] for i in wg["intervals"]) - wg["time_s"]) \
            < 1e-6, wg
        # about 14 tokens; the counters are read every 100 ms (and the tick may come
        # late under load): +-5 tokens either side
        assert 8 <= wg["calls"] <= 20, wg["calls"]
        assert wg["calls"] < gen["calls"] and \
            wg["rss_growth_bytes"]["anon"] < gen["rss_growth_bytes"]["anon"], wg
        assert 0 < wg["stacks"]["sampled_bytes"] < gen["stacks"]["sampled_bytes"], wg
        assert {x["name"] for x in c["phases"]} <= {"prompt", "generate", "host"}, \
            [x["name"] for x in c["phases"]]
        # bad windows and phases: one line, exit 125
        for bad, says in ((["--phase", "nosuch"], "no such phase"),
                          (["--from", "2", "--to", "1"], "--to must be after --from"),
                          (["--from", "x"], "--from 'x'")):
            p = harness.memphase(["report", rec] + bad)
            assert p.returncode == 125 and says in p.stderr, (bad, p.stderr)
            assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        p = harness.memphase(["run", "--from", "1", "--", harness.NOLLAMA, "0"])
        assert p.returncode == 125 and "belongs to 'memphase report'" in p.stderr, p.stderr


def test_record_max_bounds_the_file_and_keeps_every_count():
    """A run that samples every 4 KiB of growth would record MBs: with --record-max 64K
    the file stays within the bound plus the last chunks (the end is always written),
    samples are left out (said on stderr) and the counts are all there."""
    harness.need_root()
    with harness.workdir() as d:
        rec, j, rj = (os.path.join(d, n) for n in ("m.mprec", "live.json", "rep.json"))
        r = harness.memphase(["run", "--no-tui", "--record", rec, "--record-max", "64K",
                              "--sample-bytes", "4K", "--max-samples", "0", "--json", j, "--"] +
                             driver(d, ctx_mib=64, tokens=200, token_kib=256, sleep_ms=5))
        assert r.returncode == 0, r.stderr
        assert "--record-max" in r.stderr and "left out" in r.stderr, r.stderr
        # bound: 64 KiB, plus the chunk being written when it was reached and the final
        # counters (a few KiB each)
        assert os.path.getsize(rec) < 64 * 1024 + 32 * 1024, os.path.getsize(rec)
        p = harness.memphase(["report", rec, "--json", rj])
        assert p.returncode == 0 and p.stderr == "", p.stderr
        a, b = harness.load_json(j), harness.load_json(rj)
        for pa, pb in zip(a["phases"], b["phases"]):
            assert pa["name"] == pb["name"] and pa["calls"] == pb["calls"], (pa, pb)
            assert pa["rss_growth_bytes"] == pb["rss_growth_bytes"], (pa["name"], pa, pb)
            assert pb["stacks"]["samples"] <= pa["stacks"]["samples"]
        assert sum(p["stacks"]["samples"] for p in b["phases"]) < \
            sum(p["stacks"]["samples"] for p in a["phases"]), "no sample was left out"


def equal_run(d, cmd, extra=()):
    """live_and_report() of cmd; the JSON and the folded stacks of both must be equal."""
    r, p, live, rep, _ = live_and_report(d, cmd, extra)
    assert r.returncode == 0, r.stderr
    a, b = harness.load_json(live["json"]), harness.load_json(rep["json"])
    assert diff(a, b) == [], "\n".join(diff(a, b)[:20])
    with open(live["folded"]) as f1, open(rep["folded"]) as f2:
        assert f1.read() == f2.read()
    assert summary(r.stdout) == summary(p.stdout)
    return a


def test_report_replays_origins_labels_and_causes():
    """llama-explain: mapping origins (their stacks), labels and causes come out the same."""
    harness.need_root()
    with harness.workdir() as d:
        model = harness.make_model(os.path.join(d, "model.bin"), 32)
        a = equal_run(d, [os.path.join(harness.WORKLOAD, "llama-explain"), "--model", model,
                          "--requests", "2", "--report", os.path.join(d, "report.txt")],
                      ["--ringbuf-kib", "131072"])
        labels = [m["label"] for p in a["phases"] for m in p["top_mappings"] if m["origin"]]
        assert labels, a["phases"]
        assert a["origins"] and a.get("causes"), (a.get("origins"), a.get("causes"))


def test_report_replays_requests_and_the_context():
    """llama-serve: requests, their fit and projection, and the context come out the same."""
    harness.need_root()
    with harness.workdir() as d:
        a = equal_run(d, [os.path.join(harness.WORKLOAD, "llama-serve"), "--requests", "3",
                          "--prompt-batches", "1", "--batch-mib", "2", "--report",
                          os.path.join(d, "report.txt")])
        assert len(a["requests"]) >= 3 and a["request_fit"], a["requests"]
        # the --fit probe's load and context, shown as such by the free after them
        names = [p["name"] for p in a["phases"]]
        assert names[1:4] == ["probe:load", "probe:context", "probe:teardown"], names
        assert a["context"]["tokens_seen"] > 0, a["context"]


def test_report_replays_pinned_memory_and_vram():
    """The GPU stand-ins: pinned and managed memory (allocation events and the frees made up
    at exit) and the NVML readings come out the same."""
    import test_gpu
    harness.need_root()
    with harness.workdir() as d:
        state, rec = os.path.join(d, "gpu.state"), os.path.join(d, "run.mprec")
        live, rep = os.path.join(d, "live.json"), os.path.join(d, "report.json")
        test_gpu.write_state(state)
        env = {"MEMPHASE_STANDIN_GPU": state, "MEMPHASE_NVML_LIB": test_gpu.NVML}
        r = harness.memphase(["run", "--no-tui", "--json", live, "--record", rec] + SAMPLES +
                             ["--", harness.DRIVER, "--cudart", test_gpu.CUDART, "--pin-mib",
                              str(test_gpu.PIN), "--vram-mib", str(test_gpu.VRAM), "--ctx-mib",
                              "2", "--prompt-batches", "2", "--batch-mib", "1", "--tokens",
                              "3"], env=env)
        assert r.returncode == 0, r.stderr
        # report reads no NVML and no stand-in state: all of it comes from the recording
        p = harness.memphase(["report", rec, "--json", rep])
        assert p.returncode == 0 and p.stderr == "", p.stderr
        a, b = harness.load_json(live), harness.load_json(rep)
        assert diff(a, b) == [], "\n".join(diff(a, b)[:20])
        g = a["gpu"]
        assert g["alloc_probes"] > 0 and g["pinned"]["allocs"] > 0, g
        assert g["vram"] and g["vram"]["readings"] > 0, g


def test_report_window_cuts_origins_gpu_events_and_requests():
    """The GPU stand-ins under the driver (load pins P and holds 500 ms, context pins 2P,
    prompt registers P, generate manages P, teardown frees it all), recorded; windows split
    at X inside load's hold: pinning, NVML readings and mapping origins count in the window
    they happened in ([0, X] and [X, end] add up to the run), the memory held at X is the
    window's starting point (its peak), load's allocation is not in [X, end]. llama-serve,
    4 requests, a window from just after request 3 starts: the requests that ended before it
    are left out, the fit and the context count from it."""
    import test_gpu
    harness.need_root()
    with harness.workdir() as d:
        state, rec, live = (os.path.join(d, n) for n in ("gpu.state", "g.mprec", "g.json"))
        test_gpu.write_state(state)
        pin = test_gpu.PIN * MIB
        r = harness.memphase(["run", "--no-tui", "--json", live, "--record", rec] + SAMPLES +
                             ["--", harness.DRIVER, "--cudart", test_gpu.CUDART, "--pin-mib",
                              str(test_gpu.PIN), "--vram-mib", str(test_gpu.VRAM), "--ctx-mib",
                              "2", "--prompt-batches", "2", "--batch-mib", "1", "--tokens",
                              "3"], env={"MEMPHASE_STANDIN_GPU": state,
                                         "MEMPHASE_NVML_LIB": test_gpu.NVML})
        assert r.returncode == 0, r.stderr
        a = harness.load_json(live)
        load = harness.phase(a, "load")["intervals"][-1]
        x = "%.6f" % (load["end_s"] - 0.2)      # inside the 500 ms hold after the pinning
        win = {}
        for name, span in (("before", ["--to", x]), ("after", ["--from", x])):
            out = os.path.join(d, name + ".json")
            p = harness.memphase(["report", rec, "--json", out] + span)
            assert p.returncode == 0 and p.stderr == "", p.stderr
            win[name] = harness.load_json(out)
        b, c = win["before"], win["after"]
        # pinning: load's cudaMallocHost before X, the rest after
        assert b["gpu"]["pinned"]["allocs"] == 1 and b["gpu"]["pinned"]["frees"] == 0, b["gpu"]
        assert c["gpu"]["pinned"] == {"peak_bytes": 4 * pin, "held_bytes": 0, "allocs": 2,
                                      "frees": 3}, c["gpu"]["pinned"]
        assert c["gpu"]["managed"]["allocs"] == 1, c["gpu"]["managed"]
        assert sum(p["pinned_bytes"] for p in c["phases"]) == 3 * pin, c["phases"]
        assert harness.phase(c, "context")["pinned_bytes"] == 2 * pin
        assert all(p["pinned_bytes"] == 0 for p in c["phases"] if p["name"] == "load")
        where = {(o["class"], o["phase"]) for o in c["gpu"]["origins"]}
        assert ("pinned", "load") not in where and ("pinned", "context") in where, where
        assert {(o["class"], o["phase"]) for o in b["gpu"]["origins"]} == {("pinned", "load")}
        # NVML readings and mapping origins: each in its window, together the run's
        assert 0 < b["gpu"]["vram"]["readings"] < a["gpu"]["vram"]["readings"]
        assert b["gpu"]["vram"]["readings"] + c["gpu"]["vram"]["readings"] == \
            a["gpu"]["vram"]["readings"], (b["gpu"]["vram"], c["gpu"]["vram"])
        assert b["origins"]["recorded"] > 0 and c["origins"]["recorded"] > 0, c["origins"]
        # (a mapping made again at the same address replaces its origin: one in the run,
        # one in each window)
        assert b["origins"]["recorded"] < a["origins"]["recorded"] and \
            c["origins"]["recorded"] < a["origins"]["recorded"] <= \
            b["origins"]["recorded"] + c["origins"]["recorded"], (b["origins"], c["origins"],
                                                                  a["origins"])
        # VRAM held at X is where [X, end] starts; context adds V
        assert c["gpu"]["vram"]["target_peak_bytes"] == 2 * test_gpu.VRAM * MIB

        # requests: llama-serve
        rec2, live2 = os.path.join(d, "s.mprec"), os.path.join(d, "s.json")
        r = harness.memphase(["run", "--no-tui", "--json", live2, "--record", rec2, "--",
                              os.path.join(harness.WORKLOAD, "llama-serve"), "--requests", "4",
                              "--prompt-batches", "1", "--batch-mib", "2", "--sleep-ms", "50"])
        assert r.returncode == 0, r.stderr
        a = harness.load_json(live2)
        assert len(a["requests"]) == 4 and a["request_fit"]["requests"] >= 3, a["requests"]
        out = os.path.join(d, "w.json")
        x = a["requests"][2]["start_s"] + 0.001
        p = harness.memphase(["report", rec2, "--json", out, "--from", "%.6f" % x])
        assert p.returncode == 0 and p.stderr == "", p.stderr
        w = harness.load_json(out)
        # whole requests 3 and 4, their times from the window's start (3 began before it)
        keep = ("tokens", "rss_growth_bytes", "phases", "oom_killed")
        assert [{k: q[k] for k in keep} for q in w["requests"]] == \
            [{k: q[k] for k in keep} for q in a["requests"][2:]], (w["requests"], a["requests"])
        for q, o in zip(w["requests"], a["requests"][2:]):
            assert abs(q["start_s"] - max(0, o["start_s"] - x)) < 2e-6, (q, o, x)
            assert abs(q["end_s"] - (o["end_s"] - x)) < 2e-6, (q, o, x)
        assert w["request_fit"] is None or w["request_fit"]["requests"] <= 2, w["request_fit"]
        assert 0 < w["context"]["tokens_seen"] < a["context"]["tokens_seen"], w["context"]


SEGMENT = re.compile(r"s(?:\.(\d{6}))?\.mprec")


def segments(d):
    """The recording's segments in d, oldest first: (number or None for the current, path)."""
    found = [(SEGMENT.fullmatch(f), f) for f in os.listdir(d)]
    segs = [(int(m.group(1)) if m.group(1) else None, os.path.join(d, f))
            for m, f in found if m]
    return sorted(segs, key=lambda s: (s[0] is None, s[0] or 0))


def test_record_keep_rotates_into_segments_that_read_on_their_own():
    """--record-max 64K --record-keep 3 on a llama-serve of 300 requests: the recording
    rotates many times, the oldest segments are removed (3 left: s.mprec and the two newest
    s.NNNNNN.mprec), all the invoking user's; each segment reads with report on its own:
    the phase names, the requests started in its span (the segments' requests follow on
    from one another, as the live run had them), stacks symbolized; the last one's
    counters are cumulative: every phase's growth, entries and top mappings (their origins)
    as the live run's."""
    harness.need_root()
    with harness.workdir() as d:
        os.chmod(d, 0o777)
        rec, j, fo = (os.path.join(d, n) for n in ("s.mprec", "live.json", "live.folded"))
        r = harness.memphase(["run", "--no-tui", "--record", rec, "--record-max", "64K",
                              "--record-keep", "3", "--json", j, "--folded", fo] + SAMPLES +
                             ["--", os.path.join(harness.WORKLOAD, "llama-serve"),
                              "--requests", "300", "--prompt-batches", "1", "--batch-mib", "2",
                              "--tokens", "50", "--token-kib", "64",
                              "--report", os.path.join(d, "report.txt")], env=SUDO_NOBODY)
        assert r.returncode == 0, r.stderr
        segs = segments(d)
        nums = [n for n, _ in segs if n is not None]
        assert segs[-1][0] is None and len(nums) == 2, os.listdir(d)
        # rotated more often than it keeps: the older ones were removed
        assert nums[0] >= 3 and nums[1] == nums[0] + 1, nums
        assert not [f for f in os.listdir(d) if f.startswith(".s.")], os.listdir(d)
        for _, path in segs:
            st = os.stat(path)
            assert st.st_uid == 65534 and st.st_gid == 65534, (path, st)
        live = harness.load_json(j)
        names = [p["name"] for p in live["phases"]]
        starts = [round(q["start_s"], 6) for q in live["requests"]]
        nxt = None
        for i, (_, path) in enumerate(segs):
            rj, rf = path + ".json", path + ".folded"
            p = harness.memphase(["report", path, "--json", rj, "--folded", rf])
            assert p.returncode == 0 and p.stderr == "", (path, p.stderr)
            doc = harness.load_json(rj)
            got = [ph["name"] for ph in doc["phases"]]
            assert got == names[:len(got)] and "generate" in got, (path, got, names)
            mine = [starts.index(round(q["start_s"], 6)) for q in doc["requests"]]
            if not mine:
                # the newest segment can start after the last request ended (teardown)
                assert i == len(segs) - 1, (path, "a segment with no request")
                continue
            assert mine == list(range(mine[0], mine[0] + len(mine))), (path, mine)
            assert nxt is None or mine[0] == nxt, (path, mine[0], nxt)
            nxt = mine[-1] + 1
            assert i == len(segs) - 1 or len(mine) >= 5, (path, mine)
            with open(rf) as f:
                assert any(";llama_decode;" in ln for ln in f), "%s: no symbolized stack" % path
        assert nxt == len(starts), (nxt, len(starts))
        for pa, pb in zip(live["phases"], doc["phases"]):
            for k in ("name", "entries", "calls", "rss_growth_bytes", "rss_shrink_bytes",
                      "top_mappings"):
                assert pa[k] == pb[k], (pa["name"], k, diff(pa[k], pb[k])[:5])
        assert len(doc["phases"]) == len(live["phases"])


def test_record_keep_bad_options():
    """--record-keep: a count from 1 to 16, and only with --record-max (the segment size)."""
    for args, want in ((["--record", "x.mprec", "--record-keep", "3"], "needs --record-max"),
                       (["--record", "x.mprec", "--record-max", "64K", "--record-keep", "0"],
                        "from 1 to 16"),
                       (["--record", "x.mprec", "--record-max", "64K", "--record-keep", "17"],
                        "from 1 to 16")):
        r = harness.memphase(["run", "--no-tui"] + args + ["--", harness.NOLLAMA, "0"])
        assert r.returncode != 0 and want in r.stderr and len(r.stderr.splitlines()) == 1, \
            (args, r.returncode, r.stderr)
