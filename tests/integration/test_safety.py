# SPDX-License-Identifier: GPL-2.0
"""memphase runs as root on shared machines: what it writes, removes, runs and shows.

Each test is one way a root tool can be abused or fail: an attack (a symlink planted by another
user, a directory swapped during the run), a file that must survive a failed run, the
credentials files and commands get, the exit status, and what reaches a terminal. Another
user is uid 1234 (no account needed: the test owns its files); the invoking user under
sudo is nobody (65534).
"""
import glob
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

OTHER = 1234
SUDO_NOBODY = {"SUDO_UID": "65534", "SUDO_GID": "65534"}
AS_OTHER = ["setpriv", "--reuid=%d" % OTHER, "--regid=%d" % OTHER, "--clear-groups"]


def mp(args, env=None, timeout=60, **kw):
    return harness.run(harness.mp_argv(args, env), env=env, timeout=timeout, **kw)


def one_line_error(r, status, *words):
    """memphase failed with status and exactly one stderr line naming words."""
    assert r.returncode == status, "exit %d, want %d; stderr %r" % (r.returncode, status, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, "want one line on stderr: %r" % r.stderr
    for w in words:
        assert w.lower() in lines[0].lower(), "%r does not mention %r" % (lines[0], w)
    return lines[0]


def temps(d):
    """memphase's temporary files left in d."""
    return glob.glob(os.path.join(d, ".*.memphase-*"))


def sticky_dir():
    """A world-writable sticky directory, like /tmp, made by the test."""
    d = harness.tmpdir()
    os.chmod(d, 0o1777)
    return d


def victim_file(d, name="victim", text="SECRET\n"):
    """A root-owned file in a root-only directory: what an attack would overwrite."""
    vd = os.path.join(d, "rootonly")
    os.makedirs(vd, exist_ok=True)
    os.chmod(vd, 0o755)
    path = os.path.join(vd, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    return path


def test_failed_run_keeps_an_existing_output():
    """A run that fails after its outputs were opened removes nothing it did not create."""
    harness.need_root()
    with harness.workdir() as d:
        keep = os.path.join(d, "keep.json")
        with open(keep, "w") as f:
            f.write('{"keep": 1}\n')
        r = mp(["run", "--json", keep, "--", os.path.join(d, "no-such-cmd")])
        one_line_error(r, 127, "no-such-cmd", "no such file")
        assert open(keep).read() == '{"keep": 1}\n', "keep.json was changed"
        assert not temps(d), temps(d)


def test_dev_null_survives_as_output():
    harness.need_root()
    st = os.stat("/dev/null")
    for cmd, status in ((["/nonexistent/cmd"], 127), ([harness.NOLLAMA, "0"], 0)):
        r = mp(["run", "--json", "/dev/null", "--folded", "/dev/null", "--"] + cmd)
        assert r.returncode == status, r.stderr
        now = os.stat("/dev/null")
        assert stat.S_ISCHR(now.st_mode) and now.st_rdev == st.st_rdev, "/dev/null was replaced"


def test_symlink_planted_by_another_user_is_not_followed():
    """/tmp/x.json -> a file of root's, planted by uid 1234: neither sudo nobody nor root
    itself writes through it. A link of the user's own is followed."""
    harness.need_root()
    d = sticky_dir()
    try:
        victim = victim_file(d)
        link = os.path.join(d, "x.json")
        os.symlink(victim, link)
        os.lchown(link, OTHER, OTHER)
        for env, args in ((SUDO_NOBODY, []), (None, [])):
            r = mp(["run", "--json", link] + args + ["--", harness.NOLLAMA, "0"], env=env)
            one_line_error(r, 125, link, "symbolic link", str(OTHER))
            assert open(victim).read() == "SECRET\n", "the victim was overwritten"
            assert os.path.islink(link)
        # the same attack in a directory of the path
        dlink = os.path.join(d, "sub")
        os.symlink(os.path.dirname(victim), dlink)
        os.lchown(dlink, OTHER, OTHER)
        r = mp(["run", "--json", os.path.join(dlink, "victim"), "--", harness.NOLLAMA, "0"])
        one_line_error(r, 125, "symbolic link")
        assert open(victim).read() == "SECRET\n"
        # nobody's own link is followed: the file it names is written, the link stays
        real = os.path.join(d, "real.json")
        mine = os.path.join(d, "mine.json")
        os.symlink(real, mine)
        os.lchown(mine, 65534, 65534)
        r = mp(["run", "--json", mine, "--", harness.NOLLAMA, "0"], env=SUDO_NOBODY)
        assert r.returncode == 0, r.stderr
        assert os.path.islink(mine) and harness.load_json(real)["schema"] == 1
        assert os.stat(real).st_uid == 65534
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_directory_swapped_for_a_symlink_does_not_redirect_the_output():
    """uid 1234 owns the output's directory and swaps it for a link to a root-only
    directory while memphase runs: the output still lands in the directory memphase
    resolved at the start (renamed along), never in root's."""
    harness.need_root()
    d = sticky_dir()
    try:
        victim = victim_file(d)
        rootonly = os.path.dirname(victim)
        sub = os.path.join(d, "d")
        os.mkdir(sub)
        os.chown(sub, OTHER, OTHER)
        swap = "mv d d.old && ln -s %s d" % rootonly
        r = mp(["run", "--json", os.path.join(sub, "out.json"), "--"] + AS_OTHER +
               ["sh", "-c", swap], cwd=d)
        assert r.returncode == 0, r.stderr
        assert os.path.islink(sub), "the swap did not happen"
        assert not os.path.exists(os.path.join(rootonly, "out.json")), "written through the swap"
        assert harness.load_json(os.path.join(d, "d.old", "out.json"))["schema"] == 1
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_outputs_are_written_with_the_users_groups_not_roots():
    """Under sudo the files are created with the invoking user's uid, gid and
    supplementary groups: root's group (0) opens nothing for nobody, a group of the
    user's own does."""
    harness.need_root()
    with harness.workdir() as d:
        grpdir = os.path.join(d, "group-root")
        os.mkdir(grpdir)
        os.chown(grpdir, 0, 0)
        os.chmod(grpdir, 0o770)
        out = os.path.join(grpdir, "x.json")
        r = mp(["run", "--json", out, "--", harness.NOLLAMA, "0"], env=SUDO_NOBODY)
        one_line_error(r, 125, out, "permission denied")
        assert not os.path.exists(out)
    if not shutil.which("useradd") or not shutil.which("groupadd"):
        raise harness.Skip("no useradd/groupadd to make a user with a supplementary group")
    name = "mptest%d" % (os.getpid() % 100000)
    harness.run(["groupadd", name])
    try:
        harness.run(["useradd", "-M", "-N", "-g", "nogroup", "-G", name, "-s", "/bin/false",
                     name])
        import grp
        import pwd
        uid, gid = pwd.getpwnam(name).pw_uid, grp.getgrnam(name).gr_gid
        with harness.workdir() as d:
            grpdir = os.path.join(d, "group-dir")
            os.mkdir(grpdir)
            os.chown(grpdir, 0, gid)
            os.chmod(grpdir, 0o770)
            out = os.path.join(grpdir, "x.json")
            r = mp(["run", "--json", out, "--", harness.NOLLAMA, "0"],
                   env={"SUDO_UID": str(uid), "SUDO_GID": "65534"})
            assert r.returncode == 0, r.stderr
            assert os.stat(out).st_uid == uid and os.stat(out).st_gid == 65534
    finally:
        harness.run(["userdel", name])
        harness.run(["groupdel", name])


def test_output_is_replaced_atomically_and_sigkill_keeps_the_old_file():
    """The old file stays whole during the run (not truncated at the start) and after a
    SIGKILL of memphase; the temporary file goes with memphase."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        with open(out, "w") as f:
            f.write("OLD\n")
        # its seconds are this test's own (pkill finds no other process)
        secs = "30.%08d" % int.from_bytes(os.urandom(3), "little")
        p = subprocess.Popen(harness.mp_argv(["run", "--json", out, "--", "sleep", secs]),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 10
            while not temps(d) and time.time() < deadline:
                time.sleep(0.05)
            assert temps(d), "no temporary file beside the output"
            assert open(out).read() == "OLD\n", "the output was truncated at the start"
            time.sleep(0.5)
            p.kill()
            p.wait()
            deadline = time.time() + 5
            while temps(d) and time.time() < deadline:
                time.sleep(0.05)
            assert not temps(d), "temporary files left: %s" % temps(d)
            assert open(out).read() == "OLD\n"
        finally:
            p.kill()
            harness.run(["pkill", "-f", "^sleep %s$" % secs])
        # a complete run replaces it whole, with the old file's permissions
        os.chmod(out, 0o600)
        r = mp(["run", "--json", out, "--", harness.NOLLAMA, "0"])
        assert r.returncode == 0, r.stderr
        assert harness.load_json(out)["schema"] == 1 and not temps(d)
        assert stat.S_IMODE(os.stat(out).st_mode) == 0o600


def test_same_file_for_two_outputs_is_an_error():
    """Found before anything starts: the command never runs."""
    harness.need_root()
    with harness.workdir() as d:
        ran = os.path.join(d, "ran")
        cmd = ["--", "sh", "-c", "touch " + ran]
        a = os.path.join(d, "a.out")
        r = mp(["run", "--json", a, "--folded", os.path.join(d, ".", "a.out")] + cmd)
        one_line_error(r, 125, "--json", "--folded", "same file")
        with open(a, "w") as f:
            f.write("x")
        b = os.path.join(d, "b.out")
        os.link(a, b)
        r = mp(["run", "--json", a, "--svg", b] + cmd)
        one_line_error(r, 125, "same file")
        r = mp(["run", "--json", "-", "--folded", "/dev/stdout"] + cmd)
        one_line_error(r, 125, "same file")
        assert not os.path.exists(ran), "the command ran"
        assert open(a).read() == "x" and not temps(d)


def test_full_disk_says_no_space_left():
    harness.need_root()
    with harness.workdir() as d:
        mnt = os.path.join(d, "small")
        os.mkdir(mnt)
        if harness.run(["mount", "-t", "tmpfs", "-o", "size=4k,mode=1777", "tmpfs",
                        mnt]).returncode:
            raise harness.Skip("cannot mount a tmpfs")
        try:
            # full, but for the inode of memphase's temporary file
            filler = os.path.join(mnt, "filler")
            with open(filler, "wb") as f:
                f.write(b"\0" * 4096)
            assert harness.run(["sh", "-c", "echo x >> " + filler]).returncode, "not full"
            out = os.path.join(mnt, "x.json")
            r = mp(["run", "--json", out, "--", harness.NOLLAMA, "0"])
            assert r.returncode == 125, r.stderr
            errs = [ln for ln in r.stderr.splitlines() if out in ln]
            assert errs and "No space left on device" in errs[0], r.stderr
            assert not os.path.exists(out) and not temps(mnt), os.listdir(mnt)
            # an existing output stays as it was
            os.unlink(filler)
            with open(out, "w") as f:
                f.write("OLD\n" * 1000)
            r = mp(["run", "--json", out, "--", harness.NOLLAMA, "0"])
            assert r.returncode == 125 and "No space left on device" in r.stderr, r.stderr
            assert open(out).read() == "OLD\n" * 1000 and not temps(mnt), os.listdir(mnt)
        finally:
            harness.run(["umount", mnt])
    r = mp(["run", "--json", "/dev/full", "--", harness.NOLLAMA, "0"])
    assert r.returncode == 125 and "/dev/full" in r.stderr and \
        "No space left on device" in r.stderr, r.stderr


def test_json_on_stdout_stays_clean():
    """--json -: stdout is the JSON alone; the summary and the command's output go to
    stderr."""
    harness.need_root()
    r = mp(["run", "--json", "-", "--", "sh", "-c", "echo hello-from-the-command"])
    assert r.returncode == 0, r.stderr
    doc = harness.check_summary(json.loads(r.stdout), "--json - (stdout)")
    assert doc["schema"] == 1
    assert "hello-from-the-command" in r.stderr and "PHASE" in r.stderr


NODUMP = r"""
#include <sys/prctl.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	if (argc > 1)
		prctl(PR_SET_DUMPABLE, 0);
	sleep(30);
	return 0;
}
"""


def test_attach_only_to_processes_the_user_could_ptrace():
    harness.need_root()
    with harness.workdir() as d:
        src = os.path.join(d, "nodump.c")
        exe = os.path.join(d, "nodump")
        with open(src, "w") as f:
            f.write(NODUMP)
        assert harness.run(["cc", "-o", exe, src]).returncode == 0
        os.chmod(exe, 0o755)
        procs = [subprocess.Popen(AS_OTHER + [exe]), subprocess.Popen(AS_OTHER + [exe, "x"])]
        try:
            time.sleep(0.3)
            mine, nodump = (str(p.pid) for p in procs)
            as_other = {"SUDO_UID": str(OTHER), "SUDO_GID": str(OTHER)}
            # someone else's process
            r = mp(["attach", "-p", mine, "--duration", "0.5"], env=SUDO_NOBODY)
            one_line_error(r, 125, mine, "ptrace")
            # one's own, dumpable: yes; not dumpable: no
            r = mp(["attach", "-p", mine, "--duration", "0.5"], env=as_other)
            assert r.returncode == 0, r.stderr
            r = mp(["attach", "-p", nodump, "--duration", "0.5"], env=as_other)
            one_line_error(r, 125, nodump, "dumpable")
            # root itself may
            r = mp(["attach", "-p", nodump, "--duration", "0.5"])
            assert r.returncode == 0, r.stderr
        finally:
            for p in procs:
                p.kill()
                p.wait()


def test_command_never_runs_as_root_silently():
    harness.need_root()
    ids = ["--", "sh", "-c", "id -u; id -g"]
    plain = [harness.MEMPHASE, "run"] + ids
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUDO_")}
    r = subprocess.run(plain, capture_output=True, text=True, env=env, timeout=60)
    one_line_error(r, 125, "root", "--allow-root")
    for bad in ({"SUDO_UID": "x1000", "SUDO_GID": "1000"}, {"SUDO_UID": "1000"},
                {"SUDO_UID": "-1", "SUDO_GID": "-1"}, {"SUDO_UID": "1000", "SUDO_GID": ""}):
        r = subprocess.run(plain, capture_output=True, text=True, env=dict(env, **bad),
                           timeout=60)
        one_line_error(r, 125, "SUDO_UID", "valid")
    r = mp(["run", "--allow-root"] + ids, env=env)
    assert r.returncode == 0 and r.stdout.split()[:2] == ["0", "0"], (r.stdout, r.stderr)
    r = mp(["run", "--user", "nobody"] + ids, env=env)
    assert r.returncode == 0 and r.stdout.split()[:2] == ["65534", "65534"], r.stdout
    r = mp(["run"] + ids, env=SUDO_NOBODY)
    assert r.returncode == 0 and r.stdout.split()[:2] == ["65534", "65534"], r.stdout
    # the user's supplementary groups, not root's
    r = mp(["run", "--", "sh", "-c", "id -G"], env=SUDO_NOBODY)
    assert r.stdout.splitlines()[0].split() == ["65534"], r.stdout


def test_command_is_found_with_the_users_rights():
    """A command only root could reach (in a PATH directory nobody cannot search) is not
    found for nobody, and memphase says so with status 127."""
    harness.need_root()
    with harness.workdir() as d:
        hidden = os.path.join(d, "rootonly")
        os.mkdir(hidden)
        os.chmod(hidden, 0o700)
        cmd = os.path.join(hidden, "mycmd")
        with open(cmd, "w") as f:
            f.write("#!/bin/sh\necho ran-as-$(id -u)\n")
        os.chmod(cmd, 0o755)
        env = dict(SUDO_NOBODY, PATH=hidden + ":/usr/bin:/bin")
        r = mp(["run", "--", "mycmd"], env=env)
        one_line_error(r, 127, "mycmd", "no such file")
        assert "ran-as" not in r.stdout
        # root finds it there
        r = mp(["run", "--", "mycmd"], env={"PATH": hidden + ":/usr/bin:/bin"})
        assert r.returncode == 0 and "ran-as-0" in r.stdout, (r.stdout, r.stderr)


def full_pipe():
    """A pipe whose write end blocks the next write: (read fd, write fd)."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    for chunk in (b"x" * 4096, b"x"):
        try:
            while True:
                os.write(w, chunk)
        except BlockingIOError:
            pass
    os.set_blocking(w, True)
    return r, w


def test_sigkill_during_setup_leaves_no_stopped_child():
    """memphase SIGKILLed after its fork, before the command is released: the stopped
    child must not stay behind, and the output's temporary file goes too. memphase is held
    in that window for as long as the test likes: with -vv the BPF load's first libbpf line
    goes to a stderr pipe that is already full (the load runs on a thread while the command's
    child is forked and stopped; memphase then waits for the load). It stays in the
    test's process group, as under a script (an orphaned group would get SIGHUP from the
    kernel and hide the bug)."""
    harness.need_root()
    token = "memphase-setup-kill-%d" % os.getpid()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        r, w = full_pipe()
        p = subprocess.Popen(harness.mp_argv(["run", "-vv", "--json", out, "--", "sh", "-c",
                                              "sleep 30", token]),
                             stdout=subprocess.DEVNULL, stderr=w)
        os.close(w)
        try:
            deadline = time.time() + 10
            kids = []
            while time.time() < deadline and not kids:
                time.sleep(0.02)
                kids = [k for k in harness.run(["pgrep", "-P", str(p.pid)]).stdout.split()
                        if harness.run(["ps", "-o", "stat=", "-p", k]).stdout.startswith("T")]
            assert kids, "the child never stopped before exec"
            p.kill()
            p.wait()
            assert harness.pid_gone(int(kids[0]), 5), "the child is still there: %s" % \
                harness.run(["ps", "-o", "pid,stat,args", "-p", kids[0]]).stdout
            deadline = time.time() + 5
            while temps(d) and time.time() < deadline:
                time.sleep(0.1)
            assert not temps(d) and not os.path.exists(out), os.listdir(d)
        finally:
            harness.run(["pkill", "-9", "-f", token])
            os.close(r)

def test_exit_status_is_the_commands():
    harness.need_root()
    r = mp(["run", "--", "sh", "-c", "exit 3"])
    assert r.returncode == 3, r.stderr
    r = mp(["run", "--", "sh", "-c", "kill -TERM $$"])
    assert r.returncode == 128 + signal.SIGTERM, r.stderr
    r = mp(["run", "--", "/nonexistent/command"])
    assert r.returncode == 127, r.stderr
    with harness.workdir() as d:
        noexec = os.path.join(d, "noexec")
        with open(noexec, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(noexec, 0o644)
        r = mp(["run", "--", noexec])
        assert r.returncode == 126, r.stderr
    r = mp(["run", "--no-such-option", "--", "true"])
    assert r.returncode == 125, r.stderr
    p = subprocess.Popen(["sleep", "5"])
    try:
        r = mp(["attach", "-p", str(p.pid), "--duration", "0.3"])
        assert r.returncode == 0, r.stderr
    finally:
        p.kill()
        p.wait()


def test_terminal_output_escapes_control_characters():
    """A command whose name and arguments carry terminal escapes and newlines: nothing of
    it reaches the terminal raw, and the summary's run line stays one line."""
    harness.need_root()
    evil = "\x1b]0;PWNED\x07"
    with harness.workdir() as d:
        exe = os.path.join(d, "tr" + evil + "ue")
        shutil.copy("/bin/true", exe)
        os.chmod(exe, 0o755)
        r = mp(["run", "--no-tui", "--", exe, "arg" + evil + "\nsecond-line"])
        assert r.returncode == 0, r.stderr
        for stream in (r.stdout, r.stderr):
            assert "\x1b" not in stream and "\x07" not in stream, repr(stream)
        # the run line cuts the command to fit 80 columns: its start shows the escapes, and
        # the argument's newline starts no line of its own
        run_line = [ln for ln in r.stdout.splitlines() if ln.startswith("memphase: ")]
        assert run_line and "tr\\e]0;" in run_line[0] and \
            "(pid" in run_line[0], r.stdout
        assert not [ln for ln in r.stdout.splitlines() if ln.startswith("second-line")], \
            r.stdout
        # argp's own errors quote the argument too
        r = mp(["run", "--duration", evil, "--", "true"])
        assert "\x1b" not in r.stderr and "\x07" not in r.stderr, repr(r.stderr)


def test_numbers_out_of_range_are_errors():
    harness.need_root()
    bad = [("--duration", "2e10"), ("--duration", "0"), ("--grace", "1e300"),
           ("--interval", "1e300"), ("--interval", "0.01"), ("--max-samples", "1.5"),
           ("--max-samples", "2000000"), ("--ringbuf-kib", "1M"), ("--ringbuf-kib", "100"),
           ("--sample-bytes", "1K"), ("--max-rss", "1.5"), ("--max-rss", "2E"),
           ("--min-available", "100"), ("--oom-warn", "-1")]
    for opt, val in bad:
        r = mp(["run", opt, val, "--", "true"])
        one_line_error(r, 125, opt, val)
    for opt in (["--target-log", "x"], ["--user", "nobody"], ["--allow-root"]):
        r = mp(["attach", "-p", "1"] + opt)
        one_line_error(r, 125, opt[0], "run")


def test_phase_markers_that_never_attach_are_reported():
    harness.need_root()
    r = mp(["run", "--phase", "x=/nonexistent/lib.so:sym", "--", "true"])
    one_line_error(r, 125, "/nonexistent/lib.so", "no such file")
    with harness.workdir() as d:
        text = os.path.join(d, "notelf.so")
        with open(text, "w") as f:
            f.write("not an ELF file\n")
        out = os.path.join(d, "out.json")
        r = mp(["run", "--json", out, "--phase", "a=libnotmapped.so:foo",
                "--phase", "b=/bin/true:no_such_symbol_here", "--phase", "c=%s:sym" % text,
                "--phase", "d=no_such_symbol_anywhere", "--", harness.NOLLAMA, "0"])
        assert r.returncode == 0, r.stderr
        got = {u["phase"]: u["reason"] for u in harness.load_json(out)["unmatched_markers"]}
        assert set(got) == {"a", "b", "c", "d"}, got
        assert "libnotmapped.so" in got["a"] and "no such symbol" in got["b"]
        assert "not an ELF file" in got["c"] and "no mapped object" in got["d"], got
        for p in "abcd":
            assert "--phase %s=" % p in r.stdout and "never attached" in r.stdout, r.stdout


def test_target_log_is_the_users():
    """--target-log (without the live view too) is created as the invoking user, and an
    existing log survives a run that could not start the command."""
    harness.need_root()
    with harness.workdir() as d:
        rootonly = os.path.join(d, "rootonly")
        os.mkdir(rootonly)
        os.chmod(rootonly, 0o755)
        bad = os.path.join(rootonly, "cmd.log")
        r = mp(["run", "--target-log", bad, "--", "true"], env=SUDO_NOBODY)
        one_line_error(r, 125, bad, "permission denied")
        log = os.path.join(d, "cmd.log")
        with open(log, "w") as f:
            f.write("previous run\n")
        os.chown(log, 65534, 65534)
        r = mp(["run", "--target-log", log, "--", os.path.join(d, "missing")],
               env=SUDO_NOBODY)
        assert r.returncode == 127 and open(log).read() == "previous run\n", r.stderr
        r = mp(["run", "--target-log", log, "--", "sh", "-c", "echo out; echo err >&2"],
               env=SUDO_NOBODY)
        assert r.returncode == 0, r.stderr
        assert open(log).read() == "out\nerr\n" and os.stat(log).st_uid == 65534
        assert "out" not in r.stdout.split()
