# SPDX-License-Identifier: GPL-2.0
"""Least privilege: what memphase, run as root through sudo, reads, runs, follows and serves
on the invoking user's behalf. Each test is one finding of the review in issue 23: it is
reproduced as the invoking user (nobody, 65534, through SUDO_UID/SUDO_GID) and, where
another user is part of it, as an attacker (uid 1234, no account needed); each must fail
safely with one clear line, or stay within what that user could do themselves.
"""
import glob
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

NOBODY = 65534
OTHER = 1234
SUDO_NOBODY = {"SUDO_UID": str(NOBODY), "SUDO_GID": str(NOBODY)}
AS_OTHER = ["setpriv", "--reuid=%d" % OTHER, "--regid=%d" % OTHER, "--clear-groups"]
AS_NOBODY = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"]
REACH = os.path.join(harness.WORKLOAD, "reach")
MIB = harness.MIB


ROOT = {}  # root itself: no SUDO_* at all


def env_of(env):
    """The environment memphase gets: the test's without SUDO_*, then env."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("SUDO_")}
    e.update(env)
    return e


def argv_of(args, env):
    """memphase ARGS; root itself (env ROOT) runs its command with --allow-root."""
    args = list(args)
    if args[0] == "run" and not env and "--user" not in args and "--allow-root" not in args:
        args.insert(1, "--allow-root")
    return [harness.MEMPHASE] + args


def mp(args, env=SUDO_NOBODY, timeout=60, **kw):
    kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(argv_of(args, env), env=env_of(env), capture_output=True, text=True,
                          timeout=timeout, **kw)


def mp_popen(args, env=SUDO_NOBODY, **kw):
    return subprocess.Popen(argv_of(args, env), env=env_of(env), **kw)


def one_line_error(r, *words, status=125):
    assert r.returncode == status, "exit %d, want %d; stderr %r" % (r.returncode, status,
                                                                     r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, "want one line on stderr: %r" % r.stderr
    for w in words:
        assert w.lower() in lines[0].lower(), "%r does not mention %r" % (lines[0], w)
    return lines[0]


def user_dir():
    """A directory of the invoking user's (nobody's), for their files."""
    d = harness.tmpdir()
    os.chown(d, NOBODY, NOBODY)
    os.chmod(d, 0o755)
    return d


def root_only(d, name, text):
    """A file only root may read: name in a 0700 directory, itself 0600."""
    rd = os.path.join(d, "rootonly")
    os.makedirs(rd, exist_ok=True)
    os.chmod(rd, 0o700)
    path = os.path.join(rd, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    return path


def test_user_and_allow_root_are_for_root_itself():
    """`--user` and `--allow-root` change who the command runs as only when root itself
    started memphase: under sudo they are refused before anything runs."""
    harness.need_root()
    for opt in (["--user", "root"], ["--allow-root"]):
        r = mp(["run"] + opt + ["--", "sh", "-c", "id -u; head -1 /etc/shadow"])
        one_line_error(r, opt[0], "root itself", "sudo")
        assert r.stdout == "", r.stdout
    # root itself still may
    r = mp(["run", "--user", "nobody", "--", "id", "-u"], env=ROOT)
    assert r.returncode == 0 and r.stdout.split()[0] == str(NOBODY), (r.stdout, r.stderr)


def test_rules_file_is_read_as_the_user_once_and_bounded():
    """--causes FILE: a file the user cannot read is refused with its error (never its
    text); /dev/zero ends at the size limit at once; a FIFO that nobody writes ends at the
    time limit; the text read once is what the run uses and records (a file swapped
    meanwhile changes nothing)."""
    harness.need_root()
    with harness.workdir() as d:
        secret = root_only(d, "shadow.rules", "SECRET-LINE not a rule\n")
        r = mp(["run", "--causes", secret, "--", "true"])
        one_line_error(r, "--causes", "permission denied")
        assert "SECRET" not in r.stderr + r.stdout
        t0 = time.time()
        r = mp(["run", "--causes", "/dev/zero", "--", "true"])
        one_line_error(r, "--causes", "/dev/zero", "larger than")
        assert time.time() - t0 < 20
        # a FIFO the user may open, that someone writes a rule into
        fifo = os.path.join(d, "rules.fifo")
        os.mkfifo(fifo)
        os.chmod(fifo, 0o666)
        rules = "cause reach test\nremedy none\nframe reach_grow\n"

        def writer():
            with open(fifo, "w") as f:
                f.write(rules)
        th = threading.Thread(target=writer)
        th.start()
        ud = user_dir()
        try:
            out, rec = os.path.join(ud, "o.json"), os.path.join(ud, "o.mprec")
            r = mp(["run", "--causes", fifo, "--json", out, "--record", rec, "--",
                    REACH, "16"], timeout=60)
            th.join(10)
            assert r.returncode == 0, r.stderr
            doc = harness.load_json(out)
            names = [c["name"] for c in doc["causes"]]
            assert "reach test" in names, names
            # the recording holds the text that was read, and reads back alone
            again = os.path.join(ud, "again.json")
            r = mp(["report", rec, "--json", again])
            assert r.returncode == 0, r.stderr
            assert "reach test" in [c["name"] for c in harness.load_json(again)["causes"]]
        finally:
            shutil.rmtree(ud, ignore_errors=True)


def test_fifo_of_rules_that_nobody_writes_times_out():
    harness.need_root()
    with harness.workdir() as d:
        fifo = os.path.join(d, "never.fifo")
        os.mkfifo(fifo)
        os.chmod(fifo, 0o666)
        t0 = time.time()
        r = mp(["run", "--causes", fifo, "--", "true"], timeout=60)
        one_line_error(r, "--causes", "within")
        assert time.time() - t0 < 30


def test_report_reads_the_recording_as_the_user():
    """`sudo memphase report FILE`: the user's own recording is read; a 0600 root recording
    is refused with their error, and nothing of it reaches the output."""
    harness.need_root()
    ud = user_dir()
    try:
        rec = os.path.join(ud, "mine.mprec")
        r = mp(["run", "--record", rec, "--", REACH, "4"])
        assert r.returncode == 0, r.stderr
        out = os.path.join(ud, "mine.json")
        r = mp(["report", rec, "--json", out])
        assert r.returncode == 0 and os.path.exists(out), r.stderr
        # root's copy, 0600, with an argv that must not leak
        with harness.workdir() as d:
            theirs = os.path.join(d, "root.mprec")
            r = mp(["run", "--record", theirs, "--", REACH, "4", "ROOTS-SECRET-ARG"],
                   env=ROOT)
            assert r.returncode == 0, r.stderr
            os.chmod(theirs, 0o600)
            out2 = os.path.join(ud, "theirs.json")
            r = mp(["report", theirs, "--json", out2])
            one_line_error(r, theirs, "permission denied")
            assert not os.path.exists(out2)
            assert "ROOTS-SECRET" not in r.stdout + r.stderr
    finally:
        shutil.rmtree(ud, ignore_errors=True)


def test_marker_binary_is_looked_up_as_the_user():
    """--phase x=/root/f:sym says the same for a file in a directory the user cannot search
    whether it exists or not: root's view of what exists is not theirs."""
    harness.need_root()
    with harness.workdir() as d:
        there = root_only(d, "lib.so", "x")
        missing = os.path.join(os.path.dirname(there), "nothere.so")
        lines = []
        for path in (there, missing):
            r = mp(["run", "--phase", "x=%s:sym" % path, "--", "true"])
            lines.append(one_line_error(r, "--phase", "permission denied").replace(
                path, "PATH"))
        assert lines[0] == lines[1], lines


def setuid_copy(d, mode=0o4755):
    """A copy of the reach workload owned by root with mode (setuid by default), or Skip
    when the file system ignores it (nosuid)."""
    exe = os.path.join(d, "reach-suid")
    shutil.copy(REACH, exe)
    os.chown(exe, 0, 0)
    os.chmod(exe, mode)
    if mode & 0o4000:
        r = harness.run(AS_NOBODY + [exe, "1"], input="\n")
        if "euid 0" not in r.stdout:
            raise harness.Skip("setuid programs do not run setuid in %s (nosuid?): %r"
                               % (d, r.stdout))
    return exe


def grown(doc, cls="anon"):
    return sum(p["rss_growth_bytes"][cls] for p in doc["phases"])


def check_left(doc, reason_word, before_mib):
    """The process left at its exec or prctl: its growth before is there, the growth after
    (as much again) is not, nor any frame, mapping or origin of its later life."""
    procs = [p for p in doc["processes"] if p.get("left")]
    assert procs, doc["processes"]
    assert reason_word in procs[0]["left"]["reason"], procs[0]["left"]
    g = grown(doc)
    assert before_mib * MIB <= g < 2 * before_mib * MIB - MIB, \
        "anon growth %d: want the first %d MiB only" % (g, before_mib)
    text = json.dumps(doc)
    assert "reach_hidden" not in text, "a stack of its later life is in the JSON"
    assert "reach-suid" not in json.dumps(doc.get("phases")), "its new image's mappings"


def test_setuid_exec_ends_the_observation():
    """A process the user owns that execs a setuid program is no longer followed: what it
    did before stays (its growth, its stacks), nothing of the setuid image is counted,
    sampled, mapped or symbolized, in JSON, folded output and perf.data alike; memphase
    says so on stderr and still waits for the command."""
    harness.need_root()
    with harness.workdir() as d:
        exe = setuid_copy(d)
        ud = user_dir()
        try:
            out, folded = os.path.join(ud, "o.json"), os.path.join(ud, "o.folded")
            perf = os.path.join(ud, "o.perf")
            r = mp(["run", "--json", out, "--folded", folded, "--perf-data", perf,
                    "--sample-bytes", "256K", "--", REACH, "16", "exec", exe, "16"],
                   timeout=90)
            assert r.returncode == 0, r.stderr
            assert "no longer observed" in r.stderr and "setuid" in r.stderr, r.stderr
            doc = harness.load_json(out)
            check_left(doc, "setuid", 16)
            with open(folded) as f:
                text = f.read()
            assert "reach_grow" in text and "reach_hidden" not in text, text[:2000]
            ps = harness.run(["perf", "script", "-f", "-i", perf, "-F", "ip,sym"])
            assert ps.returncode == 0, ps.stderr
            assert "reach_hidden" not in ps.stdout
        finally:
            shutil.rmtree(ud, ignore_errors=True)


def test_unreadable_program_ends_the_observation():
    """An exec of a program the user may run but not read (mode 0711, root's): the kernel
    makes it not dumpable, and memphase stops following it, its symbols unread."""
    harness.need_root()
    with harness.workdir() as d:
        exe = setuid_copy(d, mode=0o711)
        ud = user_dir()
        try:
            out = os.path.join(ud, "o.json")
            r = mp(["run", "--json", out, "--sample-bytes", "256K", "--", REACH, "16",
                    "exec", exe, "16"], timeout=90)
            assert r.returncode == 0, r.stderr
            check_left(harness.load_json(out), "cannot read", 16)
        finally:
            shutil.rmtree(ud, ignore_errors=True)


def test_not_dumpable_ends_the_observation():
    """A process that makes itself not dumpable (PR_SET_DUMPABLE 0, as agents holding keys
    do) is no longer observed from that call on."""
    harness.need_root()
    ud = user_dir()
    try:
        out = os.path.join(ud, "o.json")
        r = mp(["run", "--json", out, "--sample-bytes", "256K", "--", REACH, "16", "nodump"],
               timeout=90)
        assert r.returncode == 0, r.stderr
        check_left(harness.load_json(out), "not dumpable", 16)
        # root itself is not bound by it
        out = os.path.join(ud, "root.json")
        r = mp(["run", "--json", out, "--", REACH, "16", "nodump"], env=ROOT)
        assert r.returncode == 0, r.stderr
        doc = harness.load_json(out)
        assert not [p for p in doc["processes"] if p.get("left")], doc["processes"]
        assert grown(doc) >= 32 * MIB, grown(doc)
    finally:
        shutil.rmtree(ud, ignore_errors=True)


def test_attach_ends_when_the_process_execs_setuid():
    """attach: the observation ends when the process goes out of reach, and writes what it
    saw before."""
    harness.need_root()
    with harness.workdir() as d:
        exe = setuid_copy(d)
        ud = user_dir()
        p = subprocess.Popen(AS_NOBODY + ["sh", "-c", "read x; exec %s 16" % exe],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            out = os.path.join(ud, "o.json")
            a = mp_popen(["attach", "-p", str(p.pid), "--no-tui", "--json", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            p.stdin.write("\n")
            p.stdin.flush()
            stdout, stderr = a.communicate(timeout=30)
            assert a.returncode == 0, stderr
            assert "no longer observed" in stderr, stderr
            doc = harness.load_json(out)
            left = [x for x in doc["processes"] if x.get("left")]
            assert left and "setuid" in left[0]["left"]["reason"], doc["processes"]
            assert grown(doc) < 8 * MIB, grown(doc)
        finally:
            p.stdin.close()
            p.kill()
            p.wait()
            shutil.rmtree(ud, ignore_errors=True)


def test_attach_follows_the_kernels_ptrace_rule():
    """A process of the user's uid holding a capability (as a service given
    CAP_NET_BIND_SERVICE) is not theirs to observe, as it is not theirs to ptrace; a zombie
    is reported as exited, not as 'not dumpable'."""
    harness.need_root()
    p = subprocess.Popen(AS_NOBODY + ["--inh-caps=+net_bind_service",
                                      "--ambient-caps=+net_bind_service", "sleep", "30"])
    try:
        time.sleep(0.3)
        r = mp(["attach", "-p", str(p.pid), "--duration", "0.5"])
        one_line_error(r, str(p.pid), "capabilities", "ptrace")
        # the user cannot read its maps either: the same rule
        m = harness.run(AS_NOBODY + ["cat", "/proc/%d/maps" % p.pid])
        assert m.returncode != 0, m.stdout[:200]
    finally:
        p.kill()
        p.wait()
    z = subprocess.Popen(AS_NOBODY + ["sh", "-c", "sleep 0.1 & exec sleep 30"])
    try:
        deadline = time.time() + 5
        kids = []
        while time.time() < deadline:
            kids = harness.run(["pgrep", "-P", str(z.pid)]).stdout.split()
            if kids and harness.run(["ps", "-o", "stat=", "-p", kids[0]]).stdout.startswith(
                    "Z"):
                break
            time.sleep(0.1)
        assert kids, "no zombie child"
        r = mp(["attach", "-p", kids[0], "--duration", "0.5"])
        line = one_line_error(r, kids[0], "exited", "zombie")
        assert "dumpable" not in line
    finally:
        z.kill()
        z.wait()


def temps(d):
    return glob.glob(os.path.join(d, ".*.memphase-*"))


def test_group_kill_leaves_no_temporary_and_no_held_target():
    """kill -9 of memphase's whole process group: the file helper and the watchdog have
    sessions of their own, so the temporary output goes and a target held at new code (in
    a session of its own, out of the group's reach) is let go."""
    harness.need_root()
    ud = user_dir()
    try:
        out = os.path.join(ud, "o.json")
        marker = os.path.join(ud, "go")
        # the held target: a child in its own session that execs a program not seen before;
        # its seconds are this test's own (pgrep and pkill find no other process)
        secs = "5.%08d" % int.from_bytes(os.urandom(3), "little")
        cmd = "setsid sh -c 'while [ ! -e %s ]; do sleep 0.05; done; exec env sleep %s' & " \
              "wait" % (marker, secs)
        p = mp_popen(["run", "--no-tui", "--json", out, "--", "sh", "-c", cmd],
                     start_new_session=True, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 20
            while time.time() < deadline and not temps(ud):
                time.sleep(0.05)
            assert temps(ud), "no temporary output"
            time.sleep(1.0)
            # memphase stops answering: the exec that follows stays held by the BPF side
            os.kill(p.pid, signal.SIGSTOP)
            open(marker, "w").close()
            held = None
            deadline = time.time() + 10
            while time.time() < deadline and not held:
                for pid in harness.run(["pgrep", "-f", "^env sleep %s$" % secs]).stdout.split():
                    st = harness.run(["ps", "-o", "stat=", "-p", pid]).stdout
                    if st.startswith("T"):
                        held = int(pid)
                time.sleep(0.05)
            assert held, "the exec was never held"
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            deadline = time.time() + 10
            while time.time() < deadline:
                st = harness.run(["ps", "-o", "stat=", "-p", str(held)]).stdout
                if not st.startswith("T"):
                    break
                time.sleep(0.1)
            assert not harness.run(["ps", "-o", "stat=", "-p", str(held)]).stdout.startswith(
                "T"), "the held target stayed stopped"
            deadline = time.time() + 10
            while temps(ud) and time.time() < deadline:
                time.sleep(0.1)
            assert not temps(ud), os.listdir(ud)
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            harness.run(["pkill", "-9", "-f", "^(env )?sleep %s$" % secs])
    finally:
        shutil.rmtree(ud, ignore_errors=True)


def test_metrics_port_is_bound_as_the_user():
    """--metrics on a privileged port, or the wildcard address on one, is the user's only
    if the kernel lets them bind it; root itself may."""
    harness.need_root()
    try:
        with open("/proc/sys/net/ipv4/ip_unprivileged_port_start") as f:
            start = int(f.read())
    except OSError:
        start = 1024
    if start <= 81:
        raise harness.Skip("unprivileged users may bind port 81 here "
                           "(ip_unprivileged_port_start %d)" % start)
    for addr in ("0.0.0.0:81", "127.0.0.1:81"):
        r = mp(["run", "--metrics", addr, "--", "true"])
        one_line_error(r, "--metrics", "permission denied")


SLOWLORIS = r"""
import socket, sys, time
port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
socks, end = [], time.time() + secs
while time.time() < end:
    socks = [s for s in socks if s.fileno() >= 0]
    while len(socks) < n:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1)
            s.send(b"GET /metrics HTTP/1.1\r\n")
            socks.append(s)
        except OSError:
            time.sleep(0.05)
    for s in list(socks):
        try:
            s.send(b"X")
        except OSError:
            s.close()
            socks.remove(s)
    time.sleep(0.2)
"""


def scrape(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return s.recv(32)
    finally:
        s.close()


def test_one_user_cannot_starve_the_scrapes():
    """Another local user holding 6 slow half-requests (reopened as soon as closed) takes
    at most its share of the slots: every scrape of another user is answered."""
    harness.need_root()
    with harness.workdir() as d:
        port = harness.run(["python3", "-c", "import socket; s=socket.socket(); "
                            "s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"]).stdout
        port = int(port)
        script = os.path.join(d, "slow.py")
        with open(script, "w") as f:
            f.write(SLOWLORIS)
        os.chmod(script, 0o644)
        p = mp_popen(["run", "--no-tui", "--metrics", str(port), "--", "sleep", "12"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        atk = None
        try:
            deadline = time.time() + 10
            while time.time() < deadline:
                try:
                    if scrape(port).startswith(b"HTTP/1.1 200"):
                        break
                except OSError:
                    time.sleep(0.1)
            atk = subprocess.Popen(AS_OTHER + ["python3", script, str(port), "6", "8"])
            time.sleep(1.5)
            answers = []
            for _ in range(8):
                answers.append(scrape(port)[:12])
                time.sleep(0.3)
            assert all(a == b"HTTP/1.1 200" for a in answers), answers
        finally:
            if atk:
                atk.kill()
                atk.wait()
            p.kill()
            p.wait()


def test_outputs_refuse_another_users_fifo_and_clashing_records():
    """A FIFO another user planted is refused like their symlink (it would receive the
    JSON); --record and --json naming one file is an error, not a silent replacement;
    --json /dev/stdout works when stdin is the same terminal, opened read-only."""
    harness.need_root()
    with harness.workdir() as d:
        os.chmod(d, 0o1777)
        fifo = os.path.join(d, "planted")
        os.mkfifo(fifo)
        os.chown(fifo, OTHER, OTHER)
        os.chmod(fifo, 0o666)
        r = mp(["run", "--json", fifo, "--", "true"])
        one_line_error(r, fifo, "fifo", "uid %d" % OTHER)
        ud = user_dir()
        try:
            same = os.path.join(ud, "same")
            r = mp(["run", "--record", same, "--json", same, "--", "true"])
            one_line_error(r, "--json", "--record", "same file")
            assert not os.path.exists(same) and not temps(ud), os.listdir(ud)
            # a terminal: stdin read-only, stdout write-only, one device
            master, slave = os.openpty()
            name = os.ttyname(slave)
            os.chown(name, NOBODY, NOBODY)
            rd, wr = os.open(name, os.O_RDONLY), os.open(name, os.O_WRONLY)
            got = bytearray()

            def drain():
                while True:
                    try:
                        b = os.read(master, 65536)
                    except OSError:
                        return
                    if not b:
                        return
                    got.extend(b)
            th = threading.Thread(target=drain, daemon=True)
            th.start()
            try:
                r = subprocess.run(argv_of(["run", "--no-tui", "--json", "/dev/stdout", "--",
                                            "true"], SUDO_NOBODY),
                                   env=env_of(SUDO_NOBODY), stdin=rd, stdout=wr,
                                   stderr=subprocess.PIPE, timeout=60)
                assert r.returncode == 0, r.stderr
                time.sleep(0.5)
                assert b'"schema"' in bytes(got), bytes(got)[:300]
            finally:
                for fd in (rd, wr, slave, master):
                    os.close(fd)
        finally:
            shutil.rmtree(ud, ignore_errors=True)
