# SPDX-License-Identifier: GPL-2.0
"""memphase against the fake libllama workload: per-phase growth vs the known work, peaks vs
/proc, children, attach, ends mid-run, user markers, and the invoking user's ownership.

Tolerances (stated once, used everywhere):
  TOL_ANON = 64 KiB. The workload's anon work is exact: page-multiple sizes, MADV_NOHUGEPAGE,
    one write per 4 KiB page, and the driver warms its stack and report path before the first
    phase, so a phase's anon growth equals the known work. The slack covers a few stray pages
    (stack or libc data first touched inside a phase; in attach mode the first RSS event of a
    class only sets the baseline and loses its one page). It is below one generated token
    (128 KiB), so a token counted in the wrong phase fails.
  TOL_FILE = 128 KiB. File pages arrive by fault-around, up to 16 pages (64 KiB) per fault:
    the first fault of libllama's code pages inside a phase, or (attach) the first fault of a
    class setting the baseline, moves the count by that much.
  Peaks: 2% against /proc/self/status (VmHWM, RssAnon, RssFile), as the brief asks: /proc reads
    the same counters at a slightly different instant than the last rss_stat event.
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KIB, MIB  # noqa: E402

TOL_ANON = 64 * KIB
TOL_FILE = 128 * KIB

# The standard workload: known work per phase.
MODEL_MIB = 24
CTX_MIB = 32
BATCHES = 3
BATCH_MIB = 8
TOKENS = 40
TOKEN_KIB = 128
STATE_MIB = 16

# host: the time after each llama_decode returns (the driver's own, between decodes)
PRESET_ORDER = ["startup", "load", "context", "prompt", "host", "generate", "state", "teardown"]
CLASSES = ("anon", "file", "shmem", "swap")


def driver_args(d, **over):
    """llama-driver argv for the standard workload in d (model created once per dir)."""
    model = os.path.join(d, "model.bin")
    if not os.path.exists(model):
        harness.make_model(model, MODEL_MIB)
    o = dict(ctx_mib=CTX_MIB, prompt_batches=BATCHES, batch_mib=BATCH_MIB, tokens=TOKENS,
             token_kib=TOKEN_KIB, state_mib=STATE_MIB)
    o.update(over)
    args = [harness.DRIVER, "--model", model]
    for k, v in o.items():
        if v is not None:
            args += ["--" + k.replace("_", "-"), str(v)]
    return args + ["--report", os.path.join(d, "report.txt")]


def run_driver(d, mp_opts=(), timeout=120, env=None, status=0, **over):
    """memphase run --json d/out.json [mp_opts] -- driver; returns (proc, json doc, report).
    status: the exit status memphase must give (the driver's own)."""
    out = os.path.join(d, "out.json")
    argv = driver_args(d, **over)
    r = harness.memphase(["run", "--json", out] + list(mp_opts) + ["--"] + argv,
                         timeout=timeout, env=env)
    assert r.returncode == status, "memphase exited %d (want %d); stderr: %s" % (
        r.returncode, status, r.stderr)
    return r, harness.load_json(out), harness.read_report(os.path.join(d, "report.txt")), argv


def growth(doc, name, cls):
    return harness.phase(doc, name)["rss_growth_bytes"][cls]


def shrink(doc, name, cls):
    return harness.phase(doc, name)["rss_shrink_bytes"][cls]


def bucket_of(hist, value):
    """The bucket of a histogram (JSON form) that value falls in, or None."""
    for b in hist["buckets"]:
        if b["low"] <= value <= b["high"]:
            return b
    return None


def hist_total(hist):
    return sum(b["count"] for b in hist["buckets"])


def assert_work_phases(doc, rep, what):
    """Each phase's growth in the class it works in equals the driver's known work."""
    harness.assert_close(growth(doc, "load", "file"), rep["expected_load_file_bytes"], TOL_FILE,
                         what + ": load file growth")
    for name in ("context", "prompt", "generate", "state"):
        harness.assert_close(growth(doc, name, "anon"), rep["expected_%s_anon_bytes" % name],
                             TOL_ANON, "%s: %s anon growth" % (what, name))
    # ...and nothing much in the other class.
    harness.assert_close(growth(doc, "load", "anon"), 0, TOL_ANON, what + ": load anon growth")
    for name in ("context", "prompt", "generate", "state"):
        harness.assert_close(growth(doc, name, "file"), 0, TOL_FILE,
                             "%s: %s file growth" % (what, name))


def test_phase_growth_matches_known_work():
    harness.need_root()
    with harness.workdir() as d:
        r, doc, rep, argv = run_driver(d)
        assert rep["status"] == "done", rep
        assert doc["schema"] == 1
        assert doc["target"]["argv"] == argv, doc["target"]["argv"]
        assert doc["target"]["pid"] == rep["pid"], (doc["target"]["pid"], rep["pid"])
        assert doc["target"]["exit"] == {"code": 0, "signal": None, "oom_killed": False}, \
            doc["target"]["exit"]
        names = [p["name"] for p in doc["phases"]]
        assert names == PRESET_ORDER, names
        # every decode returns to host: prompt, generate and host are entered once per
        # decode, the others once
        entries = {"prompt": BATCHES, "generate": TOKENS, "host": BATCHES + TOKENS}
        for p in doc["phases"]:
            assert p["entries"] == entries.get(p["name"], 1), (p["name"], p["entries"])

        # known sizes, also checked against what the driver itself says it did
        assert rep["expected_load_file_bytes"] == MODEL_MIB * MIB
        assert rep["expected_generate_anon_bytes"] == TOKENS * TOKEN_KIB * KIB
        assert_work_phases(doc, rep, "run")

        prompt, gen = harness.phase(doc, "prompt"), harness.phase(doc, "generate")
        assert prompt["calls"] == BATCHES, prompt["calls"]
        assert gen["calls"] == TOKENS, gen["calls"]

        # generate: bytes per token, all of the mass in the token-size bucket
        h = gen["histograms"]["rss_growth_per_call"]
        b = bucket_of(h, TOKEN_KIB * KIB)
        assert b is not None and b["count"] == TOKENS and hist_total(h) == TOKENS, h
        # prompt: one fresh mapping of BATCH_MIB per batch, nothing else mapped
        h = prompt["histograms"]["mmap_size"]
        b = bucket_of(h, BATCH_MIB * MIB)
        assert b is not None and b["count"] == BATCHES and hist_total(h) == BATCHES, h
        harness.assert_close(prompt["mmap_bytes"], BATCHES * BATCH_MIB * MIB, 0,
                             "prompt mmap_bytes")
        h = prompt["histograms"]["rss_growth_per_call"]
        b = bucket_of(h, BATCH_MIB * MIB)
        assert b is not None and b["count"] == BATCHES and hist_total(h) == BATCHES, h

        # teardown gives back what the phases grew (the process also exits in teardown)
        work_anon = sum(rep["expected_%s_anon_bytes" % n]
                        for n in ("context", "prompt", "generate", "state"))
        assert shrink(doc, "teardown", "anon") >= work_anon - TOL_ANON, \
            (shrink(doc, "teardown", "anon"), work_anon)
        assert shrink(doc, "teardown", "file") >= MODEL_MIB * MIB - TOL_FILE, \
            shrink(doc, "teardown", "file")
        # the process is gone, so every class's growth and shrink balance out exactly
        for cls in CLASSES:
            g = sum(p["rss_growth_bytes"][cls] for p in doc["phases"])
            s = sum(p["rss_shrink_bytes"][cls] for p in doc["phases"])
            harness.assert_close(g, s, 0, "%s: total growth vs total shrink" % cls)
        harness.assert_close(shrink(doc, "teardown", "anon"),
                             work_anon + growth(doc, "startup", "anon"), TOL_ANON,
                             "teardown anon shrink vs anon grown")

        # the summary on stdout
        for name in PRESET_ORDER:
            assert name in r.stdout, "phase %s not in the summary:\n%s" % (name, r.stdout)


def test_peak_matches_proc():
    harness.need_root()
    with harness.workdir() as d:
        _, doc, rep, _ = run_driver(d)
        peak = doc["rss_peak_bytes"]
        # VmHWM just before teardown: the peak of the whole run (teardown only shrinks)
        hwm = rep["vm_hwm_before_teardown_kb"] * KIB
        harness.assert_close(peak["total"], hwm, hwm * 2 // 100, "rss_peak_bytes.total vs VmHWM")
        # anon and file both peak at the end of the state save
        for cls, key in (("anon", "after_state_rss_anon_kb"), ("file", "after_state_rss_file_kb")):
            want = rep[key] * KIB
            harness.assert_close(peak[cls], want, want * 2 // 100,
                                 "rss_peak_bytes.%s vs /proc %s" % (cls, key))
        assert peak["shmem"] == 0 and peak["swap"] == 0, peak


SLICES = os.path.join(harness.WORKLOAD, "slices")


def test_threads_faulting_at_once_counted_exactly():
    """2 and 8 threads write 128 MiB of one mapping at once, then half of it is unmapped:
    anon growth is what the process holds (its /proc RssAnon after the writes), the peak
    too, and growth less shrink is exactly 0 after the exit teardown. Each event's change
    comes from its own CPU's part of the kernel's counter, reconciled with the whole
    counter at each fold: a share lost or counted twice would show here."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        for n in (2, 8):
            r = harness.memphase(["run", "--no-tui", "--stacks", "none", "--json", out, "--",
                                  SLICES, str(n), str(128 // n)])
            assert r.returncode == 0, "memphase exited %d: %s" % (r.returncode, r.stderr)
            doc = harness.load_json(out)
            st = dict(w.split("=", 1) for w in r.stdout.split() if "=" in w)
            written = int(st["written_RssAnon"]) * KIB
            grown = sum(p["rss_growth_bytes"]["anon"] for p in doc["phases"])
            shrunk = sum(p["rss_shrink_bytes"]["anon"] for p in doc["phases"])
            print("  %d threads: anon grown %d KiB, held %d KiB, peak %d KiB, shrunk %d KiB"
                  % (n, grown // KIB, written // KIB, doc["rss_peak_bytes"]["anon"] // KIB,
                     shrunk // KIB))
            assert written >= 128 * MIB, st
            # /proc's RssAnon is the kernel's approximate counter: up to 32 pages per CPU off
            tol = 256 * KIB
            harness.assert_close(grown, written, tol, "%d threads: anon growth" % n)
            harness.assert_close(doc["rss_peak_bytes"]["anon"], written, tol,
                                 "%d threads: anon peak" % n)
            assert grown - shrunk == 0, "%d threads: anon growth %d - shrink %d != 0" % (
                n, grown, shrunk)
            assert doc["lost"]["events"] == 0, doc["lost"]


def test_children_followed():
    harness.need_root()
    fork_mib = 20
    with harness.workdir() as d:
        _, doc, rep, _ = run_driver(d, fork_mib=fork_mib)
        assert rep["fork_child_exit_status"] == 0, rep
        root = doc["target"]["pid"]
        procs = {p["pid"]: p for p in doc["processes"]}
        child = rep["fork_child_pid"]
        assert child in procs, "child %d not in processes %s" % (child, doc["processes"])
        assert procs[child]["parent"] == root, procs[child]
        assert procs[child]["exited"], procs[child]
        # The driver forks after llama_state_seq_get_data_ext and before llama_free: the
        # phase is still "state", so the child's anon work adds to the state save's.
        harness.assert_close(growth(doc, "state", "anon"),
                             rep["expected_state_anon_bytes"] + fork_mib * MIB, TOL_ANON,
                             "state anon growth (state save + forked child)")
        names = [p["name"] for p in doc["phases"]]
        assert names == PRESET_ORDER, names
        # the parent's phases are unaffected
        for name in ("context", "prompt", "generate"):
            harness.assert_close(growth(doc, name, "anon"), rep["expected_%s_anon_bytes" % name],
                                 TOL_ANON, name + " anon growth")


def test_attach_running_process():
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        # The driver waits 3 s before loading: memphase attach is ready in about 1 s.
        argv = driver_args(d, start_delay_ms=3000, sleep_ms=10)
        drv = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
        try:
            r = harness.memphase(["attach", "-p", str(drv.pid), "--json", out], timeout=60)
            assert r.returncode == 0, "memphase attach exited %d: %s" % (r.returncode, r.stderr)
            assert drv.wait(timeout=30) == 0
        finally:
            if drv.poll() is None:
                drv.kill()
                drv.wait()
        doc = harness.load_json(out)
        rep = harness.read_report(os.path.join(d, "report.txt"))
        assert doc["target"]["pid"] == drv.pid
        assert doc["target"]["argv"] == argv, doc["target"]["argv"]
        assert doc["target"]["exit"] == {"code": 0, "signal": None, "oom_killed": False}, \
            doc["target"]["exit"]
        # a process found running is not in its start-up: phase 0 is "attached"
        names = [p["name"] for p in doc["phases"]]
        assert names == ["attached"] + PRESET_ORDER[1:], names
        # attached before the load: nothing grew while it only slept
        st = harness.phase(doc, "attached")
        for cls in CLASSES:
            harness.assert_close(st["rss_growth_bytes"][cls], 0, TOL_FILE,
                                 "attached %s growth (attach too late?)" % cls)
        assert_work_phases(doc, rep, "attach")
        assert harness.phase(doc, "prompt")["calls"] == BATCHES
        assert harness.phase(doc, "generate")["calls"] == TOKENS


def test_target_killed_mid_generate():
    harness.need_root()
    k = 10
    with harness.workdir() as d:
        # memphase exits as a shell would: 128 + SIGKILL
        r, doc, rep, _ = run_driver(d, die_in_generate=k, status=128 + signal.SIGKILL)
        assert rep["status"] == "killed_in_generate" and rep["tokens_generated"] == k, rep
        assert doc["target"]["exit"]["signal"] == signal.SIGKILL, doc["target"]["exit"]
        assert doc["target"]["exit"]["code"] is None, doc["target"]["exit"]
        names = [p["name"] for p in doc["phases"]]
        assert names == PRESET_ORDER[:6], names
        gen = harness.phase(doc, "generate")
        assert gen["calls"] == k, gen["calls"]
        harness.assert_close(gen["rss_growth_bytes"]["anon"], k * TOKEN_KIB * KIB, TOL_ANON,
                             "generate anon growth after %d tokens" % k)
        for name in ("context", "prompt"):
            harness.assert_close(growth(doc, name, "anon"), rep["expected_%s_anon_bytes" % name],
                                 TOL_ANON, name + " anon growth")
        assert "generate" in r.stdout and "PHASE" in r.stdout, r.stdout


def test_sigterm_to_memphase():
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        report = os.path.join(d, "report.txt")
        # 400 tokens 20 ms apart: 8 s of generation, stopped after about 0.5 s of it
        argv = driver_args(d, tokens=400, sleep_ms=20)
        mp = subprocess.Popen(harness.mp_argv(["run", "--json", out, "--"] + argv),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.time() + 30
            while time.time() < deadline:
                if os.path.exists(report) and \
                        harness.read_report(report).get("last_point") == "after_prompt":
                    break
                time.sleep(0.05)
            else:
                raise AssertionError("the driver never reached generation")
            time.sleep(0.5)
            mp.send_signal(signal.SIGTERM)
            stdout, stderr = mp.communicate(timeout=30)
        finally:
            if mp.poll() is None:
                mp.kill()
                mp.communicate()
        assert mp.returncode >= 0, "memphase died of signal %d: %s" % (-mp.returncode, stderr)
        assert "Traceback" not in stderr and "Segmentation" not in stderr, stderr
        pid = harness.read_report(report)["pid"]
        assert harness.pid_gone(pid), "target %d still running after memphase ended" % pid
        doc = harness.load_json(out)
        assert doc["target"]["pid"] == pid
        assert doc["target"]["exit"]["signal"] in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL), \
            doc["target"]["exit"]
        names = [p["name"] for p in doc["phases"]]
        assert names[:6] == PRESET_ORDER[:6], names
        gen = harness.phase(doc, "generate")
        calls = gen["calls"]
        assert 0 < calls < 400, calls
        # each call touches its token; the last one may have been cut short
        g = gen["rss_growth_bytes"]["anon"]
        lo, hi = (calls - 1) * TOKEN_KIB * KIB - TOL_ANON, calls * TOKEN_KIB * KIB + TOL_ANON
        assert lo <= g <= hi, \
            "generate anon growth %d for %d calls of %d KiB (want %d +- %d)" \
            % (g, calls, TOKEN_KIB, calls * TOKEN_KIB * KIB, TOKEN_KIB * KIB + TOL_ANON)
        assert "generate" in stdout and "PHASE" in stdout, stdout


def test_user_markers_no_preset():
    harness.need_root()
    with harness.workdir() as d:
        _, doc, rep, _ = run_driver(d, mp_opts=[
            "--no-preset", "--phase", "kv=llama_init_from_model", "--phase", "dec=llama_decode"])
        names = [p["name"] for p in doc["phases"]]
        assert names == ["startup", "kv", "dec"], names
        harness.assert_close(growth(doc, "kv", "anon"), rep["expected_context_anon_bytes"],
                             TOL_ANON, "kv anon growth")
        # sticky: dec lasts from the first decode through the state save to the end
        want = sum(rep["expected_%s_anon_bytes" % n] for n in ("prompt", "generate", "state"))
        harness.assert_close(growth(doc, "dec", "anon"), want, TOL_ANON, "dec anon growth")
        assert harness.phase(doc, "dec")["calls"] == BATCHES + TOKENS
        # no preset: the load is under startup
        harness.assert_close(growth(doc, "startup", "file"),
                             rep["expected_load_file_bytes"] + rep["start_rss_file_kb"] * KIB,
                             TOL_FILE, "startup file growth (load included)")


def test_user_markers_with_binary():
    harness.need_root()
    with harness.workdir() as d:
        _, doc, rep, _ = run_driver(d, mp_opts=[
            "--no-preset", "--phase", "kv=libllama.so:llama_init_from_model",
            "--phase", "save=libllama.so:llama_state_seq_get_size_ext"])
        names = [p["name"] for p in doc["phases"]]
        assert names == ["startup", "kv", "save"], names
        want = sum(rep["expected_%s_anon_bytes" % n] for n in ("context", "prompt", "generate"))
        harness.assert_close(growth(doc, "kv", "anon"), want, TOL_ANON, "kv anon growth")
        harness.assert_close(growth(doc, "save", "anon"), rep["expected_state_anon_bytes"],
                             TOL_ANON, "save anon growth")


def test_no_llama_symbols():
    harness.need_root()
    n = 24
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--json", out, "--", harness.NOLLAMA, str(n)])
        assert r.returncode == 0, r.stderr
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and "marker" in lines[0], "want one notice line: %r" % r.stderr
        doc = harness.load_json(out)
        assert doc["target"]["exit"]["code"] == 0
        names = [p["name"] for p in doc["phases"]]
        assert names == ["startup"], names
        # n MiB touched, plus what ld.so and libc touch at start-up (about 100 KiB)
        g = growth(doc, "startup", "anon")
        assert n * MIB <= g <= n * MIB + 256 * KIB, \
            "startup anon growth %d, want %d MiB + <= 256 KiB" % (g, n)
        # no rule names a cause: the summary shows the growth by code path instead, the
        # program's own function first with what it touched
        out = r.stdout
        assert "What grew, by code path (no llama rule names a cause;" in out, out
        paths = out[out.index("CODE PATH (innermost first)"):].splitlines()[1:]
        top = paths[0].split()
        assert top[3:5] == ["touch_pages", "<-"], paths[:3]
        assert abs(float(top[0]) - n) <= 1 and top[1] == "MiB", paths[:3]
        assert "(no rule matched" not in out and "see the stacks" not in out, out


FORKER = r"""
import os, sys
buf = bytearray(64 << 20)
for i in range(0, len(buf), 4096):
    buf[i] = 1
sys.stdout.write("ready\n"); sys.stdout.flush()
while True:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
"""


def test_other_processes_not_counted():
    """Processes that are not targets never count, even when the kernel reuses the target's
    freed mm for them (a new process's fork copies its pages with rss_stat events)."""
    harness.need_root()
    n = 16
    # Three processes of 64 MiB forking and reaping children in a loop: on this machine one
    # run in two or so picks up a forked child's pages when memphase gets this wrong.
    forkers = [subprocess.Popen([sys.executable, "-c", FORKER], stdout=subprocess.PIPE,
                                text=True) for _ in range(3)]
    try:
        for f in forkers:
            assert f.stdout.readline().strip() == "ready"
        with harness.workdir() as d:
            out = os.path.join(d, "out.json")
            for attempt in range(3):
                r = harness.memphase(["run", "--json", out, "--", harness.NOLLAMA, str(n)])
                assert r.returncode == 0, r.stderr
                doc = harness.load_json(out)
                g = growth(doc, "startup", "anon")
                assert n * MIB <= g <= n * MIB + 256 * KIB, \
                    "run %d: startup anon growth %d (%.1f MiB) for a %d MiB target with other " \
                    "processes forking" % (attempt, g, g / MIB, n)
                for cls in CLASSES:
                    gs = growth(doc, "startup", cls)
                    assert gs == shrink(doc, "startup", cls), \
                        "run %d: %s growth %d != shrink %d" % (attempt, cls, gs,
                                                               shrink(doc, "startup", cls))
    finally:
        for f in forkers:
            f.kill()
            f.wait()


def test_runs_as_invoking_user():
    harness.need_root()
    with harness.workdir() as d:
        run_driver(d, env={"SUDO_UID": "65534", "SUDO_GID": "65534"}, ctx_mib=4, tokens=4)
        for name in ("out.json", "report.txt"):
            st = os.stat(os.path.join(d, name))
            assert (st.st_uid, st.st_gid) == (65534, 65534), \
                "%s owned by %d:%d, want 65534:65534" % (name, st.st_uid, st.st_gid)


def _releasers():
    """pids of this build's memphase-detach processes (forked: their exe is memphase)."""
    out = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                if f.read().strip() != "memphase-detach":
                    continue
            if os.path.realpath("/proc/%s/exe" % pid) != os.path.realpath(harness.MEMPHASE):
                continue
        except OSError:
            continue
        out.add(int(pid))
    return out


def _non_bpf_fds(pid):
    """What a process holds besides BPF objects, perf events and /dev/null."""
    held = []
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return held
    for fd in fds:
        try:
            t = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if not (t.startswith("anon_inode:bpf") or t == "anon_inode:[perf_event]" or
                t == "/dev/null"):
            held.append((fd, t))
    return held


def test_links_released_after_memphase_returns():
    """memphase returns once its outputs are written and its summary printed; the links are
    released by a child, memphase-detach, that holds the BPF descriptors only (nothing the
    caller waits for: its pipes, files, the terminal) and ends after them: then no program
    or link is left."""
    harness.need_root()
    before = harness.bpf_ids()
    had = _releasers()
    with harness.workdir() as d:
        r, doc, report, _ = run_driver(d)
        assert doc["phases"] and report
        for pid in _releasers() - had:
            held = _non_bpf_fds(pid)
            assert not held, "memphase-detach %d holds more than BPF: %s" % (pid, held)
    deadline = time.time() + 20
    while _releasers() - had:
        assert time.time() < deadline, "memphase-detach still running 20 s after memphase"
        time.sleep(0.1)
    harness.assert_no_bpf_left(before, "after memphase-detach")


def test_no_bpf_left_after_run():
    harness.need_root()
    before = harness.bpf_ids()
    with harness.workdir() as d:
        run_driver(d)
    harness.assert_no_bpf_left(before, "after a normal run")
