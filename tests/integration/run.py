#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Runs tests/integration/test_*.py.

Usage: run.py [-j N] [substring-filter]

The modules run in N worker processes at once (default: the CPUs online, at most 4), the
slowest first (SLOW, from a full run's timings); a module that sets SERIAL = True runs
alone, after the others. Each module's lines are printed together when it ends, then
one summary line for all.
"""
import glob
import importlib.util
import os
import re
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402

# seconds a module took in a full serial run (2026-12-02, 2 CPUs): the order, not a limit
SLOW = {
    "test_engine": 114, "test_watch": 67, "test_metrics": 50, "test_gpu": 23,
    "test_record": 20, "test_tui": 20, "test_reach": 19, "test_processes": 15,
    "test_oom": 14, "test_html": 13, "test_stacks": 12, "test_core": 8,
}


def load(path):
    name = os.path.basename(path)[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return name, mod


def run_module(path, filt):
    """Runs one module's tests here: (passed, failed, skipped)."""
    passed = failed = skipped = 0
    name, mod = load(path)
    harness.SchemaCheck.checked = harness.SchemaCheck.unchecked = 0
    tests = [(k, getattr(mod, k)) for k in mod.__dict__ if k.startswith("test_")
             and callable(getattr(mod, k))]
    for tname, fn in tests:
        full = "%s.%s" % (name, tname)
        if filt and filt not in full:
            continue
        t0 = time.time()
        try:
            fn()
        except harness.Skip as e:
            skipped += 1
            print("SKIP %s: %s" % (full, e), flush=True)
            continue
        except Exception as e:  # noqa: BLE001 - a test failure of any kind
            failed += 1
            print("FAIL %s (%.1fs): %s" % (full, time.time() - t0, e), flush=True)
            traceback.print_exc(file=sys.stdout)
            continue
        passed += 1
        print("PASS %s (%.1fs)" % (full, time.time() - t0), flush=True)
    # summaries its tests read but nothing checked: a skip of its own, never a silent pass
    if harness.SchemaCheck.unchecked:
        skipped += 1
        n = harness.SchemaCheck.unchecked
        print("SKIP %s (JSON Schema): %d %s not checked against %s: %s" % (
            name, n, "summary" if n == 1 else "summaries",
            os.path.relpath(harness.SCHEMA, harness.ROOT), harness.SchemaCheck.why_not),
            flush=True)
    return passed, failed, skipped


def serial(path):
    with open(path) as f:
        return any(line.startswith("SERIAL = True") for line in f)


def wanted(path, filt):
    """Whether filt can match a test of the module (its name, or a test's)."""
    name = os.path.basename(path)[:-3]
    if not filt or filt in name or name in filt:
        return True
    with open(path) as f:
        return any(line.startswith("def test_") and filt in "%s.%s" % (name, line[4:])
                   for line in f)


def summary_of(out):
    """The last "N passed, N failed, N skipped" line's numbers, or None."""
    for line in reversed(out.splitlines()):
        m = re.fullmatch(r"(\d+) passed, (\d+) failed, (\d+) skipped", line)
        if m:
            return tuple(int(x) for x in m.groups())
    return None


def parallel(paths, filt, jobs):
    """Runs each module in a child of its own, jobs at once: the totals."""
    tot = [0, 0, 0]
    todo = sorted((p for p in paths if not serial(p)),
                  key=lambda p: -SLOW.get(os.path.basename(p)[:-3], 10))
    last = [p for p in paths if serial(p)]
    running = {}
    t0 = time.time()

    def reap(block):
        while running:
            for p, (child, started) in list(running.items()):
                if child.poll() is None:
                    continue
                out = child.stdout.read()
                child.stdout.close()
                del running[p]
                s = summary_of(out)
                body = out.rsplit("\n", 2)[0] if s else out
                sys.stdout.write(body.rstrip("\n") + "\n" if body.strip() else "")
                if s is None or child.returncode not in (0, 1):
                    print("FAIL %s: its runner ended with status %d and no summary" %
                          (os.path.basename(p)[:-3], child.returncode))
                    s = (s[0], s[1] + 1, s[2]) if s else (0, 1, 0)
                print("== %s: %d passed, %d failed, %d skipped in %.0f s" %
                      ((os.path.basename(p)[:-3],) + s + (time.time() - started,)),
                      flush=True)
                for i in range(3):
                    tot[i] += s[i]
                return
            if not block:
                return
            time.sleep(0.05)

    for group, width in ((todo, jobs), (last, 1)):
        for p in group:
            while len(running) >= width:
                reap(True)
            child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--module", p,
                                      filt], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
            running[p] = (child, time.time())
        while running:
            reap(True)
    print("== integration tests: %.0f s with %d at once" % (time.time() - t0, jobs))
    return tot


# What sudo leaves in the environment: who started `sudo make test`. The tests decide whom
# memphase works for (each that needs another user sets SUDO_UID and SUDO_GID itself);
# inherited, it would make every test's memphase that user's, unable to observe the
# test's own root processes or to write in its root-owned folders.
SUDO_VARS = ("SUDO_UID", "SUDO_GID", "SUDO_USER", "SUDO_COMMAND")


def forget_sudo():
    uid = os.environ.get("SUDO_UID")
    for k in SUDO_VARS:
        os.environ.pop(k, None)
    if uid not in (None, "", "0"):
        print("run.py: started through sudo by uid %s: each test sets the user memphase "
              "works for itself" % uid, flush=True)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--module"]:
        p, f, s = run_module(args[1], args[2] if len(args) > 2 else "")
        print("%d passed, %d failed, %d skipped" % (p, f, s))
        return 1 if f else 0
    forget_sudo()
    jobs = min(os.cpu_count() or 1, 4)
    if args[:1] == ["-j"]:
        jobs, args = max(1, int(args[1])), args[2:]
    filt = args[0] if args else ""
    paths = [p for p in sorted(glob.glob(os.path.join(HERE, "test_*.py"))) if wanted(p, filt)]
    if jobs == 1 or len(paths) == 1:
        tot = [0, 0, 0]
        for p in paths:
            for i, n in enumerate(run_module(p, filt)):
                tot[i] += n
    else:
        tot = parallel(paths, filt, jobs)
    print("%d passed, %d failed, %d skipped" % tuple(tot))
    return 1 if tot[1] else 0


if __name__ == "__main__":
    sys.exit(main())
