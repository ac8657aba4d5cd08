# SPDX-License-Identifier: GPL-2.0
"""memphase's error cases: each exits non-zero (not by a signal), prints exactly one line on
stderr that names the cause, and leaves no BPF program or link behind."""
import os
import subprocess
import time
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
SUDO_NOBODY = {"SUDO_UID": "65534", "SUDO_GID": "65534"}


def check_error(args, mentions, env=None, prefix=(), what=None):
    """Runs memphase ARGS and checks the error contract; mentions: words the line must have
    (each an alternative list or a string, case-insensitive)."""
    what = what or " ".join(args)
    before = harness.bpf_ids()
    r = harness.run(list(prefix) + harness.mp_argv(args, env), timeout=60, env=env)
    assert r.returncode > 0, "%s: exit status %d (want > 0, not a signal); stderr %r" \
        % (what, r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, "%s: want exactly one line on stderr, got %d: %r" \
        % (what, len(lines), r.stderr)
    line = lines[0].lower()
    for m in mentions:
        alts = [m] if isinstance(m, str) else m
        assert any(a.lower() in line for a in alts), \
            "%s: the error line %r does not mention %s" % (what, lines[0], " or ".join(alts))
    harness.assert_no_bpf_left(before, what)
    return r


def test_not_root():
    harness.need_root()
    check_error(["run", "--", "/bin/true"], [["root", "CAP_BPF", "capabilit"]],
                prefix=AS_NOBODY, what="run as uid 65534")
    check_error(["attach", "-p", str(os.getpid())], [["root", "CAP_BPF", "capabilit"]],
                prefix=AS_NOBODY, what="attach as uid 65534")


def test_no_kernel_btf():
    harness.need_root()
    check_error(["run", "--", "/bin/true"], ["BTF"], env={"MEMPHASE_VMLINUX_BTF": "/nonexistent"})


def test_pid_does_not_exist():
    harness.need_root()
    with open("/proc/sys/kernel/pid_max") as f:
        pid = int(f.read()) - 1
    while os.path.exists("/proc/%d" % pid):
        pid -= 1
    check_error(["attach", "-p", str(pid)], [str(pid), ["no such", "not exist", "not found"]])


def test_pid_exits_while_attaching():
    """A child that has exited but is not reaped yet: a zombie, a process with nothing left to
    observe, deterministically."""
    harness.need_root()
    child = subprocess.Popen(["/bin/true"])
    try:
        for _ in range(100):
            with open("/proc/%d/stat" % child.pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            time.sleep(0.02)
        else:
            raise AssertionError("the child never became a zombie")
        check_error(["attach", "-p", str(child.pid)], [str(child.pid), ["exit", "zombie"]])
    finally:
        child.wait()


def test_command_cannot_be_executed():
    harness.need_root()
    with harness.workdir() as d:
        missing = os.path.join(d, "no-such-program")
        check_error(["run", "--", missing, "arg"], [missing, ["no such file", "not found"]])
        noexec = os.path.join(d, "not-executable")
        with open(noexec, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(noexec, 0o644)
        check_error(["run", "--", noexec], [noexec, "permission denied"])
        # executable bits but execve fails: found only at exec time, after the BPF load
        garbage = os.path.join(d, "garbage")
        with open(garbage, "wb") as f:
            f.write(b"\0\1not a program\n")
        os.chmod(garbage, 0o755)
        check_error(["run", "--", garbage], [garbage, "format"])
        badint = os.path.join(d, "bad-interpreter")
        with open(badint, "w") as f:
            f.write("#!/nonexistent/interpreter\n")
        os.chmod(badint, 0o755)
        check_error(["run", "--", badint], [badint, ["no such file", "not found"]])


def test_bad_phase_spec():
    harness.need_root()
    bad = [
        ("foo", ["foo"]),                   # no '='
        ("=llama_decode", ["name"]),        # empty name
        ("foo=", ["symbol"]),               # empty symbol
        ("foo=libllama.so:", ["symbol"]),   # empty symbol after the binary
        ("foo=:llama_decode", ["binary"]),  # empty binary
        ("foo=a:b:c", ["b:c", "foo=a:b:c"]),
        ("a b=llama_decode", ["a b"]),      # invalid characters
        ("x" * 100 + "=llama_decode", ["long"]),
    ]
    for spec, mention in bad:
        check_error(["run", "--phase", spec, "--", harness.NOLLAMA, "0"], [mention],
                    what="--phase %r" % spec)


def test_unwritable_output():
    harness.need_root()
    check_error(["run", "--json", "/nonexistent/dir/x.json", "--", harness.NOLLAMA, "0"],
                ["/nonexistent/dir/x.json"])
    with harness.workdir() as d:
        # root may write there, the invoking user (65534) may not
        os.chmod(d, 0o755)
        path = os.path.join(d, "x.json")
        check_error(["run", "--json", path, "--", harness.NOLLAMA, "0"],
                    [path, "permission denied"], env=SUDO_NOBODY, what="--json in a root-only dir")
        assert not os.path.exists(path), "memphase wrote %s as root" % path


def test_unknown_option():
    harness.need_root()
    check_error(["run", "--no-such-option", "--", "/bin/true"], ["--no-such-option"])
    check_error(["attach", "--no-such-option", "-p", "1"], ["--no-such-option"])


def test_run_without_command():
    harness.need_root()
    check_error(["run"], ["command"])
    check_error(["run", "--"], ["command"], what="run --")
    check_error(["attach"], ["-p", "pid"], what="attach without -p")


def test_each_subcommand_has_its_own_options():
    """--help of a subcommand lists its options only, and another's is one line naming the
    subcommands it belongs to."""
    helps = {c: harness.run([harness.MEMPHASE, c, "--help"]).stdout
             for c in ("run", "attach", "record", "report", "watch")}
    assert helps["report"].startswith("Usage:") and "memphase report FILE" in helps["report"]
    for opt in ("--from=T", "--to=T", "--phase=NAME ", "--json=FILE", "--verbose"):
        assert opt in helps["report"], (opt, helps["report"])
    for opt in ("--stacks", "--max-rss", "--user", "--comm", "--record="):
        assert opt not in helps["report"], (opt, helps["report"])
    assert "--comm=NAME" in helps["watch"] and "--user" not in helps["watch"]
    # watch's outputs take no FILE: no "[=FILE]" in its help
    assert "  --json " in helps["watch"] and "--json[=FILE]" not in helps["watch"], \
        helps["watch"]
    assert "--from" not in helps["run"] and "--comm" not in helps["run"]
    assert "-o, --output=FILE" in helps["record"] and "--output" not in helps["run"]
    assert "-p, --pid=PID" in helps["attach"] and "--target-log" not in helps["attach"]
    # examples: each subcommand's own
    assert "memphase report run.mprec" in helps["report"] and \
        "memphase run --" not in helps["report"]
    for args, words in ((["run", "--from", "3", "--", "/bin/true"], ["--from", "report"]),
                        (["report", "x.mprec", "--stacks", "none"], ["--stacks", "run",
                                                                     "attach", "watch"]),
                        (["run", "-p", "1", "--", "/bin/true"], ["--pid", "attach", "watch"]),
                        (["attach", "-p", "1", "--user", "nobody"], ["--user", "run"]),
                        (["watch", "--comm", "x", "--interval", "2"], ["--interval", "run"])):
        check_error(args, words)
