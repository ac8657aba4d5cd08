# SPDX-License-Identifier: GPL-2.0
"""OOM forensics, memory pressure, the guard and the time-to-OOM projection.

The workloads run in a memory cgroup of their own with a small limit: cgroup v1
(/sys/fs/cgroup/memory/NAME, memory.limit_in_bytes) as on this machine, v2 (memory.max)
where the unified hierarchy has the memory controller. The target joins the cgroup itself
(`sh -c 'echo $$ > .../cgroup.procs; exec CMD'`), so memphase stays outside it.
"""
import os
import re
import shutil
import subprocess
import sys
import time
import xml.dom.minidom

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KIB, MIB  # noqa: E402


class Cgroup:
    """A memory cgroup with a limit; removed (after its tasks are gone) on exit."""

    def __init__(self, limit):
        self.name = "memphase-test-%d-%d" % (os.getpid(), int(time.time() * 1000) % 100000)
        v1 = "/sys/fs/cgroup/memory"
        v2 = "/sys/fs/cgroup"
        if os.path.isdir(v1):
            self.dir = os.path.join(v1, self.name)
            os.mkdir(self.dir)
            self._write("memory.limit_in_bytes", limit)
            # no swap: the limit is the limit (memsw only exists with swap accounting)
            if os.path.exists(os.path.join(self.dir, "memory.memsw.limit_in_bytes")):
                self._write("memory.memsw.limit_in_bytes", limit)
        elif os.path.exists(os.path.join(v2, "cgroup.controllers")) and \
                "memory" in open(os.path.join(v2, "cgroup.controllers")).read():
            self.dir = os.path.join(v2, self.name)
            os.mkdir(self.dir)
            self._write("memory.max", limit)
            if os.path.exists(os.path.join(self.dir, "memory.swap.max")):
                self._write("memory.swap.max", 0)
        else:
            raise harness.Skip("no memory cgroup controller (v1 or v2) to create a limit in")
        self.limit = limit
        # under sudo the target runs as the invoking user, and joins the cgroup itself
        uid, gid = os.environ.get("SUDO_UID", ""), os.environ.get("SUDO_GID", "")
        if uid.isdigit() and int(uid):
            for f in ("cgroup.procs", "tasks"):
                if os.path.exists(os.path.join(self.dir, f)):
                    os.chown(os.path.join(self.dir, f), int(uid),
                             int(gid) if gid.isdigit() else -1)

    def _write(self, f, v):
        with open(os.path.join(self.dir, f), "w") as fh:
            fh.write(str(v))

    def wrap(self, argv):
        """argv run inside this cgroup."""
        procs = os.path.join(self.dir, "cgroup.procs")
        return ["sh", "-c", 'echo $$ > %s && exec "$@"' % procs, "sh"] + list(argv)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for _ in range(50):
            try:
                os.rmdir(self.dir)
                return
            except OSError:
                time.sleep(0.1)


def growing_driver(d, mib_per_s, limit_mib=0, **over):
    o = dict(ctx_mib=8, prompt_batches=2, batch_mib=4, tokens=8, token_kib=64,
             grow_mib_per_s=mib_per_s, grow_limit_mib=limit_mib)
    o.update(over)
    args = [harness.DRIVER]
    for k, v in o.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    return args + ["--report", os.path.join(d, "report.txt")]


def test_cgroup_oom_in_known_phase():
    harness.need_root()
    with harness.workdir() as d, Cgroup(96 * MIB) as cg:
        out = {k: os.path.join(d, "out." + k) for k in ("json", "folded", "svg", "data")}
        r = harness.memphase(["run", "--json", out["json"], "--folded", out["folded"],
                              "--svg", out["svg"], "--perf-data", out["data"], "--"] +
                             cg.wrap(growing_driver(d, 100)), timeout=120)
        assert r.returncode == 128 + 9, r.stderr  # the command was OOM-killed
        doc = harness.load_json(out["json"])
        ex = doc["target"]["exit"]
        assert ex["oom_killed"] and ex["signal"] == 9, ex
        assert len(doc["oom"]) == 1, doc["oom"]
        o = doc["oom"][0]
        # the growth loop is a run of 1-token llama_decode calls (generate); the kill comes at
        # whichever charge fails, a decode's or one of the driver's own pages between two
        # decodes (host, after llama_decode returned)
        assert o["phase"] in ("generate", "host"), o
        assert o["pid"] == doc["target"]["pid"] and o["cgroup_oom"] is True, o
        assert o["cgroup"].endswith(cg.name) and o["cgroup_limit_bytes"] == 96 * MIB, o
        # at the kill the process's own memory fills the limit; its file pages (libc, ...)
        # may be charged to whichever cgroup touched them first, so they are outside it
        own = o["anon_rss_bytes"] + o["shmem_rss_bytes"]
        held = own + o["file_rss_bytes"]
        assert 0.85 * cg.limit <= held and own <= cg.limit, (own, held, cg.limit)
        win = {p["name"]: p["growth_bytes"] for p in o["before_kill"]["phases"]}
        assert win.get("generate", {}).get("anon", 0) > 0, o["before_kill"]
        # the summary leads with the kill
        first = [ln for ln in r.stdout.splitlines() if ln.strip()][0]
        assert first.startswith("OOM-killed:") and "during %s" % o["phase"] in first, first
        assert "by its memory cgroup" in r.stdout
        # every output is complete after the kill
        with open(out["folded"]) as f:
            rows = [ln.rsplit(" ", 1) for ln in f.read().splitlines()]
        gen = sum(int(w) for s, w in rows if s.startswith("generate;"))
        assert gen == harness.phase(doc, "generate")["rss_growth_bytes"]["anon"] + \
            harness.phase(doc, "generate")["rss_growth_bytes"]["file"] + \
            harness.phase(doc, "generate")["rss_growth_bytes"]["shmem"]
        xml.dom.minidom.parse(out["svg"])
        if shutil.which("perf"):
            s = harness.run(["perf", "script", "-f", "-i", out["data"]])
            assert s.returncode == 0 and "touch_pages" in s.stdout, s.stderr
        # memory cgroup reclaim ran in the target's threads before the kill
        assert harness.phase(doc, "generate")["pressure"]["reclaims"] > 0


def test_child_oom_killed_parent_lives():
    harness.need_root()
    with harness.workdir() as d, Cgroup(48 * MIB) as cg:
        out = os.path.join(d, "out.json")
        child = " ".join("'%s'" % a for a in cg.wrap([harness.NOLLAMA, "200"]))
        r = harness.memphase(["run", "--json", out, "--", "sh", "-c",
                              "%s; echo child-status=$?; exit 0" % child], timeout=120)
        assert r.returncode == 0, r.stderr
        doc = harness.load_json(out)
        assert doc["target"]["exit"]["code"] == 0 and not doc["target"]["exit"]["oom_killed"]
        assert len(doc["oom"]) == 1, doc["oom"]
        o = doc["oom"][0]
        assert o["pid"] != doc["target"]["pid"] and o["comm"] == "nollama", o
        kid = [p for p in doc["processes"] if p["pid"] == o["pid"]]
        assert kid and kid[0]["oom_killed"] and kid[0]["exited"], doc["processes"]
        assert o["cgroup_oom"] is True
        assert "child-status=137" in r.stdout


def test_guard_max_rss():
    harness.need_root()
    with harness.workdir() as d:
        out = {k: os.path.join(d, "out." + k) for k in ("json", "folded")}
        limit = 160 * MIB
        r = harness.memphase(["run", "--json", out["json"], "--folded", out["folded"],
                              "--max-rss", "160M", "--grace", "1", "--"] +
                             growing_driver(d, 100, 2048), timeout=120)
        assert r.returncode in (128 + 15, 128 + 9), r.stderr  # ended by the guard
        doc = harness.load_json(out["json"])
        assert "max-rss" in (doc["stopped_by_memphase"] or ""), doc["stopped_by_memphase"]
        assert doc["target"]["exit"]["signal"] in (15, 9), doc["target"]["exit"]
        peak = doc["rss_peak_bytes"]["total"]
        # the BPF side freezes the process at the page that crosses the limit
        assert limit < peak <= limit + 1 * MIB, peak
        assert "memphase ended the target" in r.stdout
        with open(out["folded"]) as f:
            assert f.read().strip(), "folded output is empty"


def test_guard_min_available():
    """--min-available against the room a memory cgroup leaves (what the test controls),
    not the machine's MemAvailable (what other processes move): the guard ends the
    workload once less than 256 MiB of its 512 MiB limit is left, well before the limit."""
    harness.need_root()
    with harness.workdir() as d, Cgroup(512 * MIB) as cg:
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--json", out, "--min-available", "256M", "--grace",
                              "1", "--"] + cg.wrap(growing_driver(d, 200, 4096)), timeout=120)
        assert r.returncode in (128 + 15, 128 + 9), r.stderr
        doc = harness.load_json(out)
        why = doc["stopped_by_memphase"] or ""
        assert "memory cgroup" in why and cg.name in why and "--min-available" in why, why
        assert not doc["target"]["exit"]["oom_killed"] and not doc["oom"], doc["oom"]
        grown = harness.phase(doc, "generate")["rss_growth_bytes"]["anon"]
        # the room is read every 0.5 s: at 200 MiB/s the workload passes the threshold
        # (256 MiB used, less what it held before generating) by up to ~100 MiB + a tick
        assert 200 * MIB <= grown <= 256 * MIB + 160 * MIB, grown

def parse_size(text):
    """'123MiB', '1.5GiB', '512KiB', '0B' as the status line prints them -> bytes."""
    m = re.match(r"^([\d.]+)\s*([KMGTP]?i?B)$", text.strip())
    assert m, "not a size: %r" % text
    unit = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
    return float(m.group(1)) * unit[m.group(2)]


def test_projection_matches_the_rate_and_the_room():
    """A workload growing toward a cgroup limit until the OOM killer ends it: every status
    line that projects an OOM says oom_in = (limit - usage) / rate, from the very figures it
    prints (sizes rounded to 3 digits, seconds to whole ones). Checked against the line
    itself, not against when the kill came: how fast the workload grows depends on what
    else the machine runs, the arithmetic does not."""
    harness.need_root()
    with harness.workdir() as d, Cgroup(320 * MIB) as cg:
        out = os.path.join(d, "out.json")
        p = subprocess.Popen(harness.mp_argv(["run", "--no-tui", "--interval", "0.5",
                              "--json", out, "--"] + cg.wrap(growing_driver(d, 40))),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, err = p.communicate(timeout=120)
        assert p.returncode == 128 + 9, err  # OOM-killed
        doc = harness.load_json(out)
        assert doc["oom"], "no OOM kill"
        checked = 0
        for line in err.splitlines():
            m = re.match(r"memphase: t=([\d.]+)s .* rate=\+([\d.]+[KMGT]?i?B)/s .* "
                         r"cg=([\d.]+[KMGT]?i?B)/([\d.]+[KMGT]?i?B) oom_in=~(\d+)s", line)
            if not m:
                continue
            rate = parse_size(m.group(2))
            used, limit = parse_size(m.group(3)), parse_size(m.group(4))
            proj = float(m.group(5))
            assert limit == 320 * MIB, line
            want = (limit - used) / rate
            # the room also counts reclaimable file pages (a few MiB here), and each
            # printed size may be off by half of its last digit
            assert want - 0.6 - 0.05 * want <= proj <= want + 0.6 + 0.15 * want, \
                "%s: (limit - usage) / rate = %.1f s" % (line, want)
            checked += 1
        assert checked >= 2, "too few projections to check:\n" + err


def test_guard_ends_the_child_that_crossed():
    """Under a wrapper, --max-rss ends the process that crossed, not the wrapper; and a
    --duration that expires during the grace period does not cancel the SIGKILL."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--json", out, "--max-rss", "96M", "--grace", "1",
                              "--duration", "1.5", "--", "sh", "-c",
                              "trap '' TERM; %s; echo wrapper-continued" %
                              " ".join(growing_driver(d, 200, 2048))], timeout=60)
        assert r.returncode == 0, r.stderr
        doc = harness.load_json(out)
        assert "max-rss" in (doc["stopped_by_memphase"] or "")
        kid = [p for p in doc["processes"] if p["comm"] == "llama-driver"]
        assert kid and kid[0]["exited"], doc["processes"]
        assert "wrapper-continued" in r.stdout, r.stdout
