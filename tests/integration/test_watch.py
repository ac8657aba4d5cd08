# SPDX-License-Identifier: GPL-2.0
"""memphase watch: one attach child per matching process, its files in --out-dir.

Matching by --comm, --exe and -p; processes running before watch starts and those started
later; a non-matching one leaves no file; a match that is gone before it can be attached is
counted and leaves no file; --max-procs skips and counts; bad options are one line; files
belong to the invoking user. The drivers wait WAIT_MS before their first phase: an attach
child is ready in about a second, so the wait is generous. Where an order must hold
(a process started and ended before watch looks at it), the supervisor is stopped
(SIGSTOP) meanwhile instead of relying on timing.
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KIB, MIB  # noqa: E402
from test_core import assert_work_phases, TOL_ANON  # noqa: E402

WAIT_MS = 6000
NOBODY = {"SUDO_UID": "65534", "SUDO_GID": "65534"}
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def root_env(extra=None):
    """The environment for memphase as root's own (no SUDO_*: root may observe anything),
    or with extra."""
    e = {k: v for k, v in os.environ.items() if k not in ("SUDO_UID", "SUDO_GID")}
    e.update(extra or {})
    return e


def mp(args, env=None, timeout=120):
    """memphase ARGS, as root's own unless env says otherwise."""
    return subprocess.run(harness.mp_argv(args), capture_output=True, text=True,
                          timeout=timeout, env=root_env(env))


def named(d, comm, target=None):
    """A link d/COMM to the driver (or target): processes started by it have that comm, one
    no other test on the machine uses."""
    path = os.path.join(d, comm)
    os.symlink(target or harness.DRIVER, path)
    return path


def unique(prefix):
    return "%s%08x" % (prefix, int.from_bytes(os.urandom(4), "little"))
SUMMARY = re.compile(r"watch: (\d+) matched: (\d+) written, (\d+) gone before they could be "
                     r"attached, (\d+) skipped \(--max-procs \d+\), (\d+) failed")


class Watch:
    """memphase watch ARGS in the background; stderr to a file; started() waits for it."""

    def __init__(self, d, args, env=None):
        self.err_path = os.path.join(d, "watch.err")
        e = root_env(env)
        self.errf = open(self.err_path, "w")
        self.p = subprocess.Popen(harness.mp_argv(["watch"] + list(args)), env=e,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=self.errf)
        deadline = time.time() + 60
        while "watch: started" not in self.stderr():
            assert self.p.poll() is None, "watch exited %d: %s" % (self.p.returncode,
                                                                   self.stderr())
            assert time.time() < deadline, "watch did not start: " + self.stderr()
            time.sleep(0.05)

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def stop(self):
        """SIGTERM, wait; returns (exit status, the count line's numbers as a dict)."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(timeout=120)
        finally:
            if self.p.poll() is None:
                self.p.kill()
                self.p.wait()
            self.errf.close()
        m = SUMMARY.search(self.stderr())
        assert m, "no count line: " + self.stderr()
        n = dict(zip(("matched", "written", "gone", "skipped", "failed"),
                     (int(x) for x in m.groups())))
        return rc, n


def drv_args(d, tag, exe=None, ctx_mib=32, tokens=40, **over):
    """llama-driver argv with its own report d/TAG.txt; the work differs by ctx_mib/tokens."""
    model = os.path.join(d, "model.bin")
    if not os.path.exists(model):
        harness.make_model(model, 24)
    o = dict(ctx_mib=ctx_mib, prompt_batches=3, batch_mib=8, tokens=tokens, token_kib=128,
             state_mib=16, start_delay_ms=WAIT_MS, sleep_ms=5)
    o.update(over)
    args = [exe or harness.DRIVER, "--model", model]
    for k, v in o.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    return args + ["--report", os.path.join(d, tag + ".txt")]


def start(argv, prefix=()):
    return subprocess.Popen(list(prefix) + argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL)


def finish(procs):
    for p in procs:
        assert p.wait(timeout=120) == 0, "%s exited %s" % (p.args[0], p.returncode)


def out_files(out):
    return sorted(os.path.basename(f) for f in glob.glob(os.path.join(out, "*")))


def check_doc(out, p, tag, d, comm="llama-driver"):
    """The one JSON of process p: its pid, comm, exit, and each phase's known work."""
    files = glob.glob(os.path.join(out, "%s.%d.*.json" % (comm, p.pid)))
    assert len(files) == 1, "want one JSON for pid %d, have %s" % (p.pid, out_files(out))
    assert re.fullmatch(r"%s\.%d\.\d{8}T\d{6}\.json" % (re.escape(comm), p.pid),
                        os.path.basename(files[0])), files[0]
    doc = harness.load_json(files[0])
    rep = harness.read_report(os.path.join(d, tag + ".txt"))
    assert doc["target"]["pid"] == p.pid and doc["target"]["comm"] == comm, doc["target"]
    assert doc["target"]["exit"] == {"code": 0, "signal": None, "oom_killed": False}, \
        doc["target"]["exit"]
    assert_work_phases(doc, rep, "watch pid %d" % p.pid)
    harness.assert_close(harness.phase(doc, "generate")["rss_growth_bytes"]["anon"],
                         rep["expected_generate_anon_bytes"], TOL_ANON, "generate anon")
    return files[0]


def test_watch_comm_before_and_after_start():
    """--comm: one running before watch starts, two started later, one other comm."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out")
        os.mkdir(out)
        os.chmod(out, 0o777)
        # the driver under a name of its own, and under another one (the same work)
        comm = unique("wd")
        drv, other = named(d, comm), named(d, unique("wo"))
        # the invoking user (nobody) runs them: it may observe its own processes only
        early = start(drv_args(d, "early", exe=drv, ctx_mib=8), AS_NOBODY)
        w = Watch(d, ["--comm", comm, "--out-dir", out], env=NOBODY)
        procs = [early]
        try:
            a = start(drv_args(d, "a", exe=drv, ctx_mib=16, tokens=20), AS_NOBODY)
            b = start(drv_args(d, "b", exe=drv, ctx_mib=32, tokens=40), AS_NOBODY)
            o = start(drv_args(d, "o", exe=other, ctx_mib=4, tokens=4), AS_NOBODY)
            procs += [a, b, o]
            finish(procs)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            rc, n = w.stop()
        assert rc == 0, "watch exited %d: %s" % (rc, w.stderr())
        assert n == {"matched": 3, "written": 3, "gone": 0, "skipped": 0, "failed": 0}, \
            (n, w.stderr())
        for p, tag in ((early, "early"), (a, "a"), (b, "b")):
            f = check_doc(out, p, tag, d, comm)
            st = os.stat(f)
            assert (st.st_uid, st.st_gid) == (65534, 65534), \
                "%s owned by %d:%d" % (f, st.st_uid, st.st_gid)
        # the context each was given tells them apart; phase 0 is the start-up of those
        # caught at their exec, "attached" for the one found running
        for p, mib, first in ((early, 8, "attached"), (a, 16, "startup"), (b, 32, "startup")):
            doc = harness.load_json(glob.glob(os.path.join(out, "*.%d.*.json" % p.pid))[0])
            harness.assert_close(harness.phase(doc, "context")["rss_growth_bytes"]["anon"],
                                 mib * MIB, TOL_ANON, "pid %d context" % p.pid)
            assert doc["phases"][0]["name"] == first, (p.pid, doc["phases"][0]["name"])
        # nothing for the other comm, and nothing else at all (no temporary files)
        assert out_files(out) == sorted(os.path.basename(glob.glob(
            os.path.join(out, "*.%d.*.json" % p.pid))[0]) for p in (early, a, b)), \
            out_files(out)


def test_watch_exe_and_formats():
    """--exe: the driver's path matches; a copy of it elsewhere (same comm) does not. Output
    options without a file: one file of each per process, and a recording."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out")
        os.mkdir(out)
        os.chmod(out, 0o777)
        # two copies of the driver of their own (no other test runs them): the one named
        # matches, the other, with the same comm, does not
        copies = []
        for c in ("one", "two"):
            copies.append(os.path.join(d, c))
            os.mkdir(copies[-1])
            for f in ("llama-driver", "libllama.so"):
                shutil.copy2(os.path.join(harness.WORKLOAD, f), copies[-1])
        one, two = (os.path.join(c, "llama-driver") for c in copies)
        w = Watch(d, ["--exe", one, "--out-dir", out, "--json", "--folded", "--record"])
        procs = []
        try:
            a = start(drv_args(d, "a", exe=one, ctx_mib=16, tokens=20))
            c = start(drv_args(d, "c", exe=two, ctx_mib=4))
            procs = [a, c]
            finish(procs)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            rc, n = w.stop()
        assert rc == 0 and n["matched"] == 1 and n["written"] == 1, (rc, n, w.stderr())
        f = check_doc(out, a, "a", d)
        base = f[:-len(".json")]
        assert out_files(out) == sorted(os.path.basename(base) + e
                                        for e in (".json", ".folded", ".mprec")), \
            out_files(out)
        # the recording reads back to the same phases
        r = mp(["report", base + ".mprec", "--json", os.path.join(d, "r.json")])
        assert r.returncode == 0, r.stderr
        doc, rdoc = harness.load_json(f), harness.load_json(os.path.join(d, "r.json"))
        assert [p["rss_growth_bytes"] for p in doc["phases"]] == \
            [p["rss_growth_bytes"] for p in rdoc["phases"]]
        with open(base + ".folded") as fh:
            assert any(line.startswith("context;") for line in fh), "no context stacks"


def test_watch_pids_ends_with_them():
    """-p PID: that process; watch ends by itself once it is done."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out")
        os.mkdir(out)
        os.chmod(out, 0o777)
        a = start(drv_args(d, "a", ctx_mib=16, tokens=20))
        try:
            r = mp(["watch", "-p", str(a.pid), "--out-dir", out])
            finish([a])
        finally:
            if a.poll() is None:
                a.kill()
        assert r.returncode == 0, r.stderr
        assert SUMMARY.search(r.stderr).groups() == ("1", "1", "0", "0", "0"), r.stderr
        check_doc(out, a, "a", d)


def test_watch_gone_before_attach_counted():
    """Matches that ended before watch could look at them: counted, no file. The supervisor
    is held (SIGSTOP) while they start and end, so the order is certain."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out")
        os.mkdir(out)
        os.chmod(out, 0o777)
        comm = unique("wg")
        quick = named(d, comm, "/bin/true")     # a match that ends at once
        w = Watch(d, ["--comm", comm, "--out-dir", out, "-v"])
        z = None
        try:
            os.kill(w.p.pid, signal.SIGSTOP)
            try:
                for _ in range(3):
                    assert subprocess.run([quick]).returncode == 0
                # a zombie: exited, not reaped yet
                z = subprocess.Popen([quick])
                while not harness.pid_gone(z.pid, timeout=0):
                    time.sleep(0.01)
            finally:
                os.kill(w.p.pid, signal.SIGCONT)
            # -v says so for each; the four exec events are read within a poll
            deadline = time.time() + 30
            while w.stderr().count("before it could be attached") < 4:
                assert time.time() < deadline, w.stderr()
                time.sleep(0.05)
        finally:
            rc, n = w.stop()
            if z:
                z.wait()
        assert rc == 0
        assert n == {"matched": 4, "written": 0, "gone": 4, "skipped": 0, "failed": 0}, \
            (n, w.stderr())
        assert out_files(out) == [], out_files(out)


def test_watched_attach_of_another_process_is_gone():
    """The child side: attach --watched=START to a pid whose start time differs (the pid was
    reused) exits 3, silent, and leaves no file."""
    harness.need_root()
    with harness.workdir() as d:
        p = subprocess.Popen(["sleep", "60"])
        try:
            with open("/proc/%d/stat" % p.pid) as f:
                start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
            out = os.path.join(d, "x.json")
            r = mp(["attach", "-p", str(p.pid), "--watched=%d" % (start_ticks + 1),
                    "--json", out, "--duration", "1"])
            assert r.returncode == 3 and r.stderr == "", (r.returncode, r.stderr)
            assert os.listdir(d) == [], os.listdir(d)
            # the right start time: observed
            r = mp(["attach", "-p", str(p.pid), "--watched=%d" % start_ticks,
                    "--json", out, "--duration", "1"])
            assert r.returncode == 0 and os.path.exists(out), (r.returncode, r.stderr)
        finally:
            p.kill()
            p.wait()


def test_watch_max_procs_skips_and_counts():
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out")
        os.mkdir(out)
        os.chmod(out, 0o777)
        comm = unique("wm")
        drv = named(d, comm)
        w = Watch(d, ["--comm", comm, "--out-dir", out, "--max-procs", "1"])
        procs = []
        try:
            # both start while watch is held: it sees two live matches at once
            os.kill(w.p.pid, signal.SIGSTOP)
            try:
                procs = [start(drv_args(d, t, exe=drv, ctx_mib=4, tokens=4)) for t in "ab"]
            finally:
                os.kill(w.p.pid, signal.SIGCONT)
            finish(procs)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            rc, n = w.stop()
        assert rc == 0
        assert n == {"matched": 2, "written": 1, "gone": 0, "skipped": 1, "failed": 0}, \
            (n, w.stderr())
        assert "skipped" in w.stderr()
        assert len(glob.glob(os.path.join(out, comm + ".*.json"))) == 1, out_files(out)


def test_watch_bad_options():
    harness.need_root()
    with harness.workdir() as d:
        f = os.path.join(d, "file")
        open(f, "w").close()
        bad = [
            (["watch"], "--comm"),
            (["watch", "--comm", "a-name-longer-than-15"], "15"),
            (["watch", "--comm", "x", "--json", f], "unexpected argument"),
            (["watch", "--comm", "x", "--json=" + f], "no FILE"),
            (["watch", "--comm", "x", "--record=" + f], "no FILE"),
            (["watch", "--comm", "x", "-p", "1"], "excludes"),
            (["watch", "--comm", "x", "--out-dir", f], "not a directory"),
            (["watch", "--comm", "x", "--out-dir", os.path.join(d, "none")], "no such"),
            (["watch", "--exe", os.path.join(d, "none")], "no such"),
            (["watch", "--cgroup", "/no/such/cgroup"], "no such cgroup"),
            (["watch", "--comm", "x", "--max-procs", "0"], "--max-procs"),
            (["watch", "--comm", "x", "--interval", "1"], "--interval"),
            (["watch", "--comm", "x", "--metrics", "abc"], "--metrics"),
            (["watch", "--comm", "x", "--metrics-textfile", os.path.join(d, "none", "m.prom")],
             "cannot write"),
            (["watch", "--comm", "x", "--metrics-textfile"], "requires an argument"),
            (["attach", "-p", "1", "--metrics-fd=5"], "--metrics-fd"),
            (["attach", "-p", "1", "--comm", "x"], "belongs to 'memphase watch'"),
            (["run", "--out-dir", d, "--", "/bin/true"], "belongs to 'memphase watch'"),
        ]
        for args, word in bad:
            r = mp(args, timeout=30)
            lines = r.stderr.splitlines()
            assert r.returncode == 125 and len(lines) == 1 and word.lower() in lines[0].lower(), \
                (args, r.returncode, r.stderr)
        # an out dir the invoking user cannot write: one line, before anything starts
        ro = os.path.join(d, "ro")
        os.mkdir(ro, 0o755)
        r = mp(["watch", "--comm", "x", "--out-dir", ro], env=NOBODY, timeout=30)
        lines = r.stderr.splitlines()
        assert r.returncode == 125 and len(lines) == 1 and "permission denied" in \
            lines[0].lower(), (r.returncode, r.stderr)
        assert os.listdir(ro) == []


def _children(pid):
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _catches_sigterm(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    except OSError:
        pass
    return False


def test_watch_sigterm_writes_running_processes():
    """SIGTERM to watch while a watched process still runs: its child writes its files (the
    process keeps running, exit null), then watch exits 0."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out")
        os.mkdir(out)
        os.chmod(out, 0o777)
        comm = unique("ws")
        sleeper = subprocess.Popen([named(d, comm, shutil.which("sleep")), "600"])
        try:
            w = Watch(d, ["--comm", comm, "--out-dir", out])
            # its attach child handles SIGTERM from here on (no timing: its signal mask)
            deadline = time.time() + 30
            while not any(_catches_sigterm(c) for c in _children(w.p.pid)):
                assert time.time() < deadline, "no attach child: " + w.stderr()
                time.sleep(0.05)
            rc, n = w.stop()
            assert sleeper.poll() is None, "the watched process was ended"
        finally:
            sleeper.kill()
            sleeper.wait()
        assert rc == 0 and n == {"matched": 1, "written": 1, "gone": 0, "skipped": 0,
                                 "failed": 0}, (rc, n, w.stderr())
        files = glob.glob(os.path.join(out, "%s.%d.*.json" % (comm, sleeper.pid)))
        assert len(files) == 1, out_files(out)
        doc = harness.load_json(files[0])
        assert doc["target"]["pid"] == sleeper.pid and doc["target"]["comm"] == comm
        assert doc["target"]["exit"] is None, doc["target"]["exit"]


UNIT = os.path.join(harness.ROOT, "scripts", "memphase-watch.service")


def _unit_caps():
    """The unit's capability bounding set (its CapabilityBoundingSet= lines add up)."""
    caps = []
    with open(UNIT) as f:
        for line in f:
            if line.startswith("CapabilityBoundingSet="):
                caps += line.split("=", 1)[1].split()
    assert caps, "no CapabilityBoundingSet in the unit"
    return caps


def test_watch_service_unit_verifies():
    """systemd-analyze verify accepts the unit (its ExecStart pointed at this build, its
    man page where `make install` puts it: verify runs man for Documentation=man:...)."""
    if not shutil.which("systemd-analyze"):
        raise harness.Skip("systemd-analyze is not installed")
    with harness.workdir() as d:
        with open(UNIT) as f:
            text = f.read().replace("/usr/local/bin/memphase", harness.MEMPHASE)
        path = os.path.join(d, "memphase-watch.service")
        with open(path, "w") as f:
            f.write(text)
        man1 = os.path.join(d, "man", "man1")
        os.makedirs(man1)
        shutil.copy(os.path.join(harness.ROOT, "docs", "memphase.1"), man1)
        r = subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True,
                           timeout=60, env=dict(os.environ, MANPATH=os.path.join(d, "man")))
        assert r.returncode == 0 and "memphase-watch" not in r.stderr, r.stderr
        for key in ("ProtectSystem=strict", "ProtectHome=read-only", "PrivateTmp=yes",
                    "NoNewPrivileges=yes", "ReadWritePaths=/var/lib/memphase"):
            assert key + "\n" in text, key


def test_watch_runs_with_the_units_capabilities():
    """memphase watch with exactly the unit's capability bounding set and no new privileges
    observes a process: phases and growth, and the file written."""
    harness.need_root()
    caps = ",".join("+" + c[len("CAP_"):].lower() for c in _unit_caps())
    with harness.workdir() as d:
        out = os.path.join(d, "out")
        os.mkdir(out)
        os.chmod(out, 0o777)
        comm = unique("wc")
        drv = named(d, comm)
        e = root_env()
        errf = os.path.join(d, "watch.err")
        with open(errf, "w") as ef:
            w = subprocess.Popen(["setpriv", "--bounding-set=-all," + caps, "--no-new-privs"]
                                 + harness.mp_argv(["watch", "--comm", comm, "--out-dir", out]),
                                 env=e, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=ef)
        try:
            deadline = time.time() + 60
            while "watch: started" not in open(errf).read():
                assert w.poll() is None and time.time() < deadline, open(errf).read()
                time.sleep(0.05)
            a = start(drv_args(d, "a", exe=drv, ctx_mib=16, tokens=20))
            finish([a])
        finally:
            w.send_signal(signal.SIGTERM)
            rc = w.wait(timeout=120)
        err = open(errf).read()
        assert rc == 0 and "1 written" in err and "denied" not in err.lower(), err
        check_doc(out, a, "a", d, comm)


def test_watch_cgroup_and_comm():
    """--cgroup DIR --comm NAME: both must hold. Inside with the name: observed; the same name
    outside, and another name inside: not."""
    harness.need_root()
    from test_oom import Cgroup
    with harness.workdir() as d, Cgroup(1 << 30) as cg:
        out = os.path.join(d, "out")
        os.mkdir(out)
        os.chmod(out, 0o777)
        comm = unique("wi")
        drv, other = named(d, comm), named(d, unique("wj"))
        w = Watch(d, ["--cgroup", cg.dir, "--comm", comm, "--out-dir", out])
        procs = []
        try:
            a = start(cg.wrap(drv_args(d, "a", exe=drv, ctx_mib=16, tokens=20)))
            outside = start(drv_args(d, "o", exe=drv, ctx_mib=4, tokens=4))
            inside = start(cg.wrap(drv_args(d, "i", exe=other, ctx_mib=4, tokens=4)))
            procs = [a, outside, inside]
            finish(procs)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            rc, n = w.stop()
        assert rc == 0 and n == {"matched": 1, "written": 1, "gone": 0, "skipped": 0,
                                 "failed": 0}, (rc, n, w.stderr())
        # the wrapper's sh exec'd the driver: the same pid
        check_doc(out, a, "a", d, comm)
        assert len(out_files(out)) == 1, out_files(out)


def test_watch_hands_options_on():
    """attach's options given to watch reach each observation: --preset none (no phases but
    startup) and --stacks none (no stack samples)."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out")
        os.mkdir(out)
        os.chmod(out, 0o777)
        a = start(drv_args(d, "a", ctx_mib=4, tokens=4))
        try:
            r = mp(["watch", "-p", str(a.pid), "--out-dir", out, "--preset", "none",
                    "--stacks=none"])
            finish([a])
        finally:
            if a.poll() is None:
                a.kill()
        assert r.returncode == 0, r.stderr
        files = glob.glob(os.path.join(out, "*.%d.*.json" % a.pid))
        assert len(files) == 1, out_files(out)
        doc = harness.load_json(files[0])
        # a process running before watch: phase 0 is "attached" (not its start-up)
        assert [p["name"] for p in doc["phases"]] == ["attached"], doc["phases"]
        assert all(p["stacks"]["samples"] == 0 for p in doc["phases"]), doc["phases"]
        # the context's 4 MiB and more were seen, under attached
        assert harness.phase(doc, "attached")["rss_growth_bytes"]["anon"] >= 4 * MIB


def test_watch_record_rotates_by_default():
    """watch --record --record-max 64K: each process's recording rotates (4 segments kept
    by default): COMM.PID.START.mprec and COMM.PID.START.NNNNNN.mprec, the invoking user's;
    each reads with report; the newest has the final per-phase growth of the process's
    JSON (the counters are cumulative across segments)."""
    harness.need_root()
    with harness.workdir() as d:
        os.chmod(d, 0o777)
        out = os.path.join(d, "out")
        os.mkdir(out)
        os.chmod(out, 0o777)
        comm = unique("rot")
        srv = named(d, comm, os.path.join(harness.WORKLOAD, "llama-serve"))
        w = Watch(d, ["--comm", comm, "--out-dir", out, "--json", "--record", "--record-max",
                      "64K", "--sample-bytes", "64K", "--max-samples", "0"], env=NOBODY)
        procs = []
        try:
            # requests for well past the attach (about a second), ~2 KiB recorded each
            p = start([srv, "--requests", "800", "--prompt-batches", "1", "--batch-mib", "2",
                       "--tokens", "50", "--token-kib", "64", "--sleep-ms", "3",
                       "--report", os.path.join(d, "serve.txt")], AS_NOBODY)
            procs = [p]
            finish(procs)
        finally:
            for q in procs:
                if q.poll() is None:
                    q.kill()
            rc, n = w.stop()
        assert rc == 0 and n["written"] == 1, (rc, n, w.stderr())
        js = glob.glob(os.path.join(out, "%s.%d.*.json" % (comm, p.pid)))
        assert len(js) == 1, out_files(out)
        base = js[0][:-len(".json")]
        segs = sorted(glob.glob(base + ".*.mprec"))
        assert all(re.fullmatch(re.escape(base) + r"\.\d{6}\.mprec", f) for f in segs), segs
        nums = [int(f[-len("000000.mprec"):-len(".mprec")]) for f in segs]
        assert len(segs) == 3 and nums[0] >= 2 and nums == list(range(nums[0], nums[0] + 3)), \
            out_files(out)
        for f in segs + [base + ".mprec"]:
            st = os.stat(f)
            assert st.st_uid == 65534 and st.st_gid == 65534, (f, st)
            r = mp(["report", f, "--json", f + ".json"])
            assert r.returncode == 0 and r.stderr == "", (f, r.stderr)
        doc, last = harness.load_json(js[0]), harness.load_json(base + ".mprec.json")
        assert [(q["name"], q["rss_growth_bytes"]) for q in doc["phases"]] == \
            [(q["name"], q["rss_growth_bytes"]) for q in last["phases"]]
        assert harness.phase(doc, "generate")["rss_growth_bytes"]["anon"] > 0
