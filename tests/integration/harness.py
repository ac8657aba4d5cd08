# SPDX-License-Identifier: GPL-2.0
"""Tiny integration-test harness: test modules define test_*() functions.

A test fails by raising (assert), skips by raising Skip("reason"). run.py collects
tests/integration/test_*.py, runs them in file order, prints PASS/FAIL/SKIP lines and
ends with exactly "N passed, N failed, N skipped".
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("OUTPUT", os.path.join(ROOT, "build"))
MEMPHASE = os.path.join(BUILD, "memphase")
WORKLOAD = os.path.join(BUILD, "workload")
DRIVER = os.path.join(WORKLOAD, "llama-driver")
NOFP_DRIVER = os.path.join(WORKLOAD, "nofp", "llama-driver")
NOLLAMA = os.path.join(WORKLOAD, "nollama")
MIB = 1 << 20
KIB = 1 << 10


class Skip(Exception):
    pass


def need_root():
    if os.geteuid() != 0:
        raise Skip("needs root (BPF)")


def tmpdir():
    d = tempfile.mkdtemp(prefix="memphase-test-")
    os.chmod(d, 0o777)
    return d


def make_model(path, mib):
    """A model file of mib MiB whose pages are not in the page cache."""
    with open(path, "wb") as f:
        f.write(os.urandom(mib * MIB))
        f.flush()
        os.fsync(f.fileno())
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    os.chmod(path, 0o644)
    return path


def run(args, timeout=120, env=None, **kw):
    """Runs a command, returns CompletedProcess with text stdout/stderr."""
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=e, **kw)


def started_by_root(env=None):
    """Does memphase see root itself starting it (no SUDO_UID, or sudo from root) with the
    environment os.environ updated by env?"""
    e = dict(os.environ)
    if env:
        e.update(env)
    return e.get("SUDO_UID", "0") in ("", "0")


def mp_argv(args, env=None):
    """memphase ARGS as a command line. Started by root itself, `run` gets --allow-root
    (memphase refuses to run a command as root without it); under sudo (SUDO_UID in the
    environment the command gets: os.environ updated by env) the command runs as SUDO_UID
    and memphase refuses the option."""
    args = list(args)
    if args and args[0] == "run" and "--allow-root" not in args and "--user" not in args \
            and "--" in args and started_by_root(env):
        args.insert(1, "--allow-root")
    return [MEMPHASE] + args


# the last memphase run's stderr, for the messages of checks that find a phase missing
_last_stderr = ""


def memphase(args, timeout=120, env=None):
    global _last_stderr
    r = run(mp_argv(args, env), timeout=timeout, env=env)
    _last_stderr = r.stderr or ""
    return r


def read_report(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if "=" in line:
                k, v = line.split("=", 1)
                try:
                    out[k] = int(v)
                except ValueError:
                    out[k] = v
    return out


def flat(text):
    """text with every run of whitespace one space: the summary wraps its long lines."""
    return " ".join(text.split())


SCHEMA = os.path.join(ROOT, "docs", "memphase.schema.json")


class SchemaCheck:
    """The summaries' check against SCHEMA: its validator (None until the first summary),
    why there is none (jsonschema missing or too old), and how many summaries the module
    running checked and left unchecked: run.py counts a module that left any unchecked as
    one skip more, with the reason."""
    validator = None
    why_not = None
    checked = 0
    unchecked = 0


def _schema_validator():
    if SchemaCheck.validator is None and SchemaCheck.why_not is None:
        try:
            import jsonschema
        except ImportError:
            SchemaCheck.why_not = ("%s has no jsonschema module (Debian: python3-jsonschema)"
                                   % sys.executable)
            return None
        cls = getattr(jsonschema, "Draft202012Validator", None)
        if cls is None:
            SchemaCheck.why_not = ("%s's jsonschema has no draft 2020-12 validator (4.0 or "
                                   "newer has)" % sys.executable)
            return None
        with open(SCHEMA) as f:
            schema = json.load(f)
        cls.check_schema(schema)
        SchemaCheck.validator = cls(schema)
    return SchemaCheck.validator


def check_summary(doc, what):
    """Checks doc, a JSON summary (what: where it came from), against docs/memphase.schema.json:
    raises AssertionError naming each key that does not match. Without a validator it counts
    the summary as unchecked (SchemaCheck)."""
    v = _schema_validator()
    if v is None:
        SchemaCheck.unchecked += 1
        return doc
    errors = sorted(v.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = ["%s: %s" % ("/".join(map(str, e.absolute_path)) or "(top)", e.message[:300])
                 for e in errors[:10]]
        raise AssertionError("%s does not match docs/memphase.schema.json (%d errors):\n  %s"
                             % (what, len(errors), "\n  ".join(lines)))
    SchemaCheck.checked += 1
    return doc


def load_json(path):
    """The JSON summary in path, checked against docs/memphase.schema.json (check_summary)."""
    with open(path) as f:
        doc = json.load(f)
    return check_summary(doc, path)


def phase(doc, name):
    for p in doc["phases"]:
        if p["name"] == name:
            return p
    # markers that did not attach now and then under load (2026-12): what memphase said
    raise AssertionError("phase %r missing; phases: %s; markers_attached %s, unmatched %s, "
                         "lost %s; the last memphase run's stderr:\n%s"
                         % (name, [p["name"] for p in doc["phases"]], doc.get("markers_attached"),
                            doc.get("unmatched"), doc.get("lost"), _last_stderr[-2000:]))


def assert_close(actual, expected, tol_abs, what):
    if abs(actual - expected) > tol_abs:
        raise AssertionError("%s: got %d, expected %d +- %d (off by %d)"
                             % (what, actual, expected, tol_abs, actual - expected))


def bpf_counts():
    """Numbers of loaded BPF programs and links (bpftool)."""
    progs = json.loads(run(["bpftool", "-j", "prog", "show"]).stdout or "[]")
    links = json.loads(run(["bpftool", "-j", "link", "show"]).stdout or "[]")
    return len(progs), len(links)


def workdir():
    """A tmpdir() that removes itself: `with workdir() as d:`."""
    import contextlib
    import shutil

    @contextlib.contextmanager
    def _cm():
        d = tmpdir()
        try:
            yield d
        finally:
            shutil.rmtree(d, ignore_errors=True)
    return _cm()


def bpf_ids():
    """(set of prog ids, set of link ids) loaded in the kernel."""
    progs = json.loads(run(["bpftool", "-j", "prog", "show"]).stdout or "[]")
    links = json.loads(run(["bpftool", "-j", "link", "show"]).stdout or "[]")
    # an object that vanished while bpftool listed it comes without an id
    return {p["id"] for p in progs if "id" in p}, {k["id"] for k in links if "id" in k}


def _bpf_held_ids():
    """Prog and link ids that a live process holds an fd of (directly or through a link)."""
    progs, links = set(), set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir("/proc/%s/fd" % pid)
        except OSError:
            continue
        for fd in fds:
            try:
                if not os.readlink("/proc/%s/fd/%s" % (pid, fd)).startswith("anon_inode:bpf"):
                    continue
                with open("/proc/%s/fdinfo/%s" % (pid, fd)) as f:
                    for line in f:
                        k, _, v = line.partition(":")
                        if k == "prog_id":
                            progs.add(int(v))
                        elif k == "link_id":
                            links.add(int(v))
            except (OSError, ValueError):
                continue
    return progs, links


def assert_no_bpf_left(before, what, timeout=5.0):
    """No BPF program or link left behind since before = bpf_ids().

    The check is harness.bpf_counts()'s: the same numbers as before. The machine may be shared
    (other memphase runs load programs concurrently), so when the numbers differ the new ids
    that no live process holds are the ones left behind; the kernel frees released programs
    asynchronously, hence the polling.
    """
    deadline = time.time() + timeout
    while True:
        progs, links = bpf_ids()
        if len(progs) == len(before[0]) and len(links) == len(before[1]):
            return
        held_p, held_l = _bpf_held_ids()
        orphan_p = progs - before[0] - held_p
        orphan_l = links - before[1] - held_l
        if not orphan_p and not orphan_l:
            return
        if time.time() > deadline:
            raise AssertionError("%s: BPF left behind: programs %s, links %s (held by no process)"
                                 % (what, sorted(orphan_p), sorted(orphan_l)))
        time.sleep(0.2)


def pid_gone(pid, timeout=5.0):
    """True once pid no longer exists (or is a zombie nobody reaped yet)."""
    deadline = time.time() + timeout
    while True:
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state in ("Z", "X"):
                return True
        except FileNotFoundError:
            return True
        if time.time() > deadline:
            return False
        time.sleep(0.1)
