# SPDX-License-Identifier: GPL-2.0
"""Where it grows: sampled stacks (dwarf and fp), mappings, and the three exports.

The workload is built twice (tests/workload/workload.mk): with frame pointers and with
-O2 -fomit-frame-pointer (nofp/). The work per phase happens in known functions:
load -> llama_model_load_from_file (its mmap with MAP_POPULATE),
context/prompt/generate -> touch_pages, state -> the driver's memset
of the destination buffer (called from main).

Samples are taken every 64 KiB of a thread's growth without a rate cap, so every phase
gets tens of samples; the bytes a phase change leaves unsampled are under 64 KiB per
phase and thread.
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

WORK = {  # phase -> a frame that must be in its stacks besides main
    "load": "llama_model_load_from_file",  # its mmap(MAP_POPULATE) brings the pages
    "context": "touch_pages",
    "prompt": "touch_pages",
    "generate": "touch_pages",
    "state": "memset",
}
# every 64 KiB, no cap: a ring that holds them all, so a loaded machine (memphase reading
# late) loses none (test_symbols_of_stripped_binary_via_debuglink found no generate sample
# once under a load of 6-10 with the default ring)
SAMPLE_OPTS = ["--sample-bytes", "64K", "--max-samples", "0", "--ringbuf-kib", "65536"]


def workload(d, driver=harness.DRIVER, **over):
    model = os.path.join(d, "model.bin")
    if not os.path.exists(model):
        harness.make_model(model, 16)
    o = dict(ctx_mib=16, prompt_batches=3, batch_mib=4, tokens=32, token_kib=128, state_mib=8)
    o.update(over)
    args = [driver, "--model", model]
    for k, v in o.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    return args


def run(d, argv, opts):
    out = {k: os.path.join(d, "out." + k) for k in ("json", "folded", "svg", "data")}
    r = harness.memphase(["run", "--json", out["json"], "--folded", out["folded"],
                          "--svg", out["svg"], "--perf-data", out["data"]] + opts + ["--"] + argv)
    assert r.returncode == 0, "memphase exited %d: %s" % (r.returncode, r.stderr)
    return r, out


def folded(path):
    """[(frames list, weight)]"""
    rows = []
    with open(path) as f:
        for line in f:
            stack, _, w = line.rstrip("\n").rpartition(" ")
            rows.append((stack.split(";"), int(w)))
    return rows


def check_dwarf(driver):
    harness.need_root()
    with harness.workdir() as d:
        # a ring that holds every sample of the run (~900 of about 21 KiB): whether memphase
        # keeps pace with them (it runs beside other tests) is not what this checks
        _, out = run(d, workload(d, driver), ["--stacks", "dwarf", "--ringbuf-kib", "65536"] +
                     SAMPLE_OPTS)
        doc = harness.load_json(out["json"])
        rows = folded(out["folded"])
        for ph, fn in WORK.items():
            mine = [(fr, w) for fr, w in rows if fr[0] == ph and fr[-1] != "[not sampled]"]
            sampled = sum(w for _, w in mine)
            good = sum(w for fr, w in mine if "main" in fr and any(fn in x for x in fr))
            p = harness.phase(doc, ph)
            grown = sum(p["rss_growth_bytes"][c] for c in ("anon", "file", "shmem"))
            assert sampled > 0, "%s: no samples" % ph
            assert good >= 0.9 * sampled, \
                "%s: only %d of %d sampled bytes have main and %s: %s" % (
                    ph, good, sampled, fn, mine[:3])
            # the samples' weights add up to the phase's growth (10%)
            assert abs(sampled - grown) <= 0.1 * grown, \
                "%s: sampled %d vs growth %d" % (ph, sampled, grown)
            assert p["stacks"]["sampled_bytes"] == sampled
        assert doc["lost"]["stacks"] == 0


def test_dwarf_stacks_with_frame_pointers():
    check_dwarf(harness.DRIVER)


def test_dwarf_stacks_without_frame_pointers():
    check_dwarf(harness.NOFP_DRIVER)


def test_fp_stacks_recorded():
    """fp mode works and is honest about what the kernel's walk gets (no claim on depth)."""
    harness.need_root()
    with harness.workdir() as d:
        for driver in (harness.DRIVER, harness.NOFP_DRIVER):
            _, out = run(d, workload(d, driver), ["--stacks", "fp"] + SAMPLE_OPTS)
            rows = [(fr, w) for fr, w in folded(out["folded"]) if fr[-1] != "[not sampled]"]
            total = sum(w for _, w in rows)
            with_main = sum(w for fr, w in rows if "main" in fr)
            print("  fp %s: %d%% of sampled bytes reach main" % (
                os.path.relpath(driver, harness.WORKLOAD), 100 * with_main // max(total, 1)))
            assert total > 0


def test_folded_adds_up_and_mappings():
    harness.need_root()
    with harness.workdir() as d:
        _, out = run(d, workload(d), SAMPLE_OPTS)
        doc = harness.load_json(out["json"])
        rows = folded(out["folded"])
        # lines come phase by phase, in the order the phases were entered (the JSON's)
        seen = []
        for fr, _ in rows:
            if not seen or seen[-1] != fr[0]:
                seen.append(fr[0])
        assert seen == [p["name"] for p in doc["phases"] if p["name"] in seen], seen
        for p in doc["phases"]:
            grown = sum(p["rss_growth_bytes"][c] for c in ("anon", "file", "shmem"))
            mine = sum(w for fr, w in rows if fr[0] == p["name"])
            # with the [not sampled] rest, each phase adds up exactly
            assert mine == grown, "%s: folded %d vs growth %d" % (p["name"], mine, grown)
        # the model file is the load phase's top mapping; anon buffers the others'
        top = harness.phase(doc, "load")["top_mappings"][0]
        assert top["path"].endswith("model.bin") and top["class"] == "file", top
        assert abs(top["bytes"] - 16 * MIB) <= 128 * KIB, top
        for ph in ("context", "prompt", "generate", "state"):
            tops = harness.phase(doc, ph)["top_mappings"]
            anon = sum(t["bytes"] for t in tops if t["kind"] == "anon")
            grown = harness.phase(doc, ph)["rss_growth_bytes"]["anon"]
            assert anon >= grown - 64 * KIB, "%s: anon mappings %d vs %d" % (ph, anon, grown)


def perf_want(doc):
    """{phase: (bytes, samples)} as perf.data holds them: a phase's sampled bytes and
    samples, plus one "[not sampled]" sample with the growth no sample carried."""
    want = {}
    for p in doc["phases"]:
        st = p["stacks"]
        grown = sum(p["rss_growth_bytes"][c] for c in ("anon", "file", "shmem"))
        if st["samples"] or grown:
            want[p["name"]] = (max(grown, st["sampled_bytes"]),
                               st["samples"] + (grown > st["sampled_bytes"]))
    return want


def test_perf_tools_read_perf_data():
    """perf report and perf script read the perf.data: one event for the run, its count the
    JSON's growth; each phase a thread named after it (one COMM each), so perf report
    --sort comm gives each phase, named whole, its bytes and samples (the JSON's, with one
    "[not sampled]" sample for the growth no sample carried, in a mapping of that name)
    and --sort pid (perf's
    thread key) separates them too, above every real thread id; the process keeps its own
    name (its exec COMM, the only one of its main thread); perf script resolves the
    workload's functions."""
    harness.need_root()
    if not shutil.which("perf"):
        raise harness.Skip("perf is not installed")
    with harness.workdir() as d:
        _, out = run(d, workload(d, harness.NOFP_DRIVER), SAMPLE_OPTS)
        doc = harness.load_json(out["json"])
        want = perf_want(doc)
        assert {"load", "context", "prompt", "generate", "state"} <= set(want), want
        s = harness.run(["perf", "script", "-f", "-F", "comm,pid,tid,period,ip,sym",
                         "-i", out["data"]])
        assert s.returncode == 0, s.stderr
        for name in ("touch_pages", "llama_model_load_from_file", "main", "llama_decode"):
            assert name in s.stdout, "perf script lacks %s" % name
        comms = set(re.findall(r"^\s*(\S+)\s+\d+/\d+", s.stdout, re.M))
        assert comms == set(want), (comms, want)
        r = harness.run(["perf", "report", "-f", "--stdio", "--sort", "comm,sym",
                         "-i", out["data"]])
        assert r.returncode == 0, r.stderr
        assert "touch_pages" in r.stdout and "llama_model_load_from_file" in r.stdout
        # one event: one section, counting every byte
        sections = re.findall(
            r"^# Samples: (\d+)\s+of event '([^']*)'\n# Event count \(approx\.\): (\d+)$",
            r.stdout, re.M)
        total = (sum(n for n, _ in want.values()), sum(k for _, k in want.values()))
        assert sections == [(str(total[1]), "memphase:rss-growth", str(total[0]))], \
            (sections, total)
        # per phase, in one view: bytes and samples
        r = harness.run(["perf", "report", "-f", "--stdio", "--no-children", "-g", "none",
                         "--sort", "comm", "-F", "period,sample,comm", "-i", out["data"]])
        assert r.returncode == 0, r.stderr
        got = {m.group(3): (int(m.group(1)), int(m.group(2))) for m in re.finditer(
            r"^\s*(\d+)\s+(\d+)\s+(\S+)\s*$", r.stdout, re.M)}
        assert got == want, (got, want)
        # the growth no sample carried: a "[not sampled]" mapping's, per phase
        r = harness.run(["perf", "report", "-f", "--stdio", "--no-children", "-g", "none",
                         "--sort", "comm,dso", "-F", "period,comm,dso", "-i", out["data"]])
        rest = {m.group(2): int(m.group(1)) for m in re.finditer(
            r"^\s*(\d+)\s+(\S+)\s+\[not sampled\]\s*$", r.stdout, re.M)}
        grown = {p["name"]: sum(p["rss_growth_bytes"][c] for c in ("anon", "file", "shmem"))
                 for p in doc["phases"]}
        assert rest == {p["name"]: grown[p["name"]] - p["stacks"]["sampled_bytes"]
                        for p in doc["phases"]
                        if grown[p["name"]] > p["stacks"]["sampled_bytes"]}, (rest, grown)
        assert rest, "no phase left growth unsampled: nothing checked"
        # the default view names every phase whole
        r = harness.run(["perf", "report", "-f", "--stdio", "--no-children", "-g", "none",
                         "--sort", "comm", "-i", out["data"]])
        shown = set(re.findall(r"^\s+[\d.]+%\s+(\S+)\s*$", r.stdout, re.M))
        assert shown == set(want), (shown, want)
        # perf's thread key: one thread per phase, none a real thread's id
        r = harness.run(["perf", "report", "-f", "--stdio", "--no-children", "-g", "none",
                         "--sort", "pid", "-i", out["data"]])
        threads = re.findall(r"^\s+[\d.]+%\s+(\d+):(\S+)\s*$", r.stdout, re.M)
        assert sorted(c for _, c in threads) == sorted(want), (threads, want)
        assert all(int(t) >= 1 << 22 for t, _ in threads), threads
        t = harness.run(["perf", "script", "-f", "--show-task-events", "-i", out["data"]])
        execs = re.findall(r"PERF_RECORD_COMM exec: (\S+):(\d+)/(\d+)$", t.stdout, re.M)
        assert execs and all(c == "llama-driver" and pid == tid for c, pid, tid in execs), \
            execs


def test_svg_parses_and_names_functions():
    harness.need_root()
    with harness.workdir() as d:
        _, out = run(d, workload(d, harness.NOFP_DRIVER), SAMPLE_OPTS)
        dom = xml.dom.minidom.parse(out["svg"])
        titles = " ".join(t.firstChild.data for t in dom.getElementsByTagName("title")
                          if t.firstChild)
        for name in ("touch_pages", "llama_model_load_from_file", "main", "generate", "prompt",
                     "load"):
            assert name in titles, "SVG lacks %s" % name


def _stripped_copy(d):
    """The nofp driver and its libllama.so, the driver stripped with a .gnu_debuglink."""
    src = os.path.dirname(harness.NOFP_DRIVER)
    exe = os.path.join(d, "llama-driver")
    shutil.copy(os.path.join(src, "libllama.so"), d)
    shutil.copy(harness.NOFP_DRIVER, exe)
    dbg = exe + ".debug"
    for cmd in (["objcopy", "--only-keep-debug", exe, dbg],
                ["objcopy", "--strip-all", "--add-gnu-debuglink=" + dbg, exe]):
        r = harness.run(cmd, cwd=d)
        assert r.returncode == 0, r.stderr
    for f in os.listdir(d):
        os.chmod(os.path.join(d, f), 0o755)
    return exe


def test_symbols_of_stripped_binary_via_debuglink():
    harness.need_root()
    if not shutil.which("objcopy"):
        raise harness.Skip("objcopy (binutils) is not installed")
    with harness.workdir() as d:
        exe = _stripped_copy(d)
        nm = harness.run(["nm", exe])
        assert "no symbols" in nm.stderr, "the copy is not stripped"
        _, out = run(d, workload(d, exe), SAMPLE_OPTS)
        rows = folded(out["folded"])
        gen = [fr for fr, _ in rows if fr[0] == "generate" and fr[-1] != "[not sampled]"]
        # main and the driver's static decode_one come from the debug file only
        assert any("main" in fr and "decode_one" in fr for fr in gen), gen[:2]


def test_no_debuginfod_client_without_servers():
    """libdwfl dlopen()s libdebuginfod (and libcurl, GnuTLS, ... with it) at the first module
    without local debug info, servers or not: memphase refuses it when DEBUGINFOD_URLS is
    unset. The target, a Python allocating 40 MiB (its libraries have no local debug info),
    reads memphase's maps (its parent's) after memphase unwound its samples."""
    harness.need_root()
    with harness.workdir() as d:
        script = os.path.join(d, "alloc.py")
        maps = os.path.join(d, "maps")
        with open(script, "w") as f:
            f.write("import time\nkeep = []\nfor i in range(40):\n"
                    "    keep.append(bytearray(1 << 20))\n    time.sleep(0.01)\n"
                    "time.sleep(1)\n"
                    f"open({maps!r}, 'w').write(open('/proc/%d/maps' % __import__('os')"
                    ".getppid()).read())\n")
        env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
        out = os.path.join(d, "o.json")
        r = subprocess.run(harness.mp_argv(["run", "--no-tui", "--json", out, "--",
                                            sys.executable, script]),
                           capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr[-400:]
        doc = harness.load_json(out)
        assert doc["causes_sampled_bytes"] > 0, "no stack was sampled"
        with open(maps) as f:
            text = f.read()
        # libdw is linked in: libbpf, still a shared library, tells memphase's maps
        assert "libbpf" in text, "not memphase's maps"
        assert "libdebuginfod" not in text and "libcurl" not in text, \
            [ln for ln in text.splitlines() if "debuginfod" in ln or "curl" in ln][:3]


def test_symbols_of_deleted_binary():
    """The executable is deleted while it runs: symbols come through /proc/PID/map_files."""
    harness.need_root()
    with harness.workdir() as d:
        exe = os.path.join(d, "llama-driver")
        shutil.copy(os.path.join(os.path.dirname(harness.NOFP_DRIVER), "libllama.so"), d)
        shutil.copy(harness.NOFP_DRIVER, exe)
        out = os.path.join(d, "out.folded")
        p = subprocess.Popen(harness.mp_argv(["run", "--folded", out] + SAMPLE_OPTS +
                             ["--"] + workload(d, exe, start_delay_ms=1500)),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        import time
        time.sleep(0.8)
        os.unlink(exe)
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        rows = folded(out)
        gen = [fr for fr, _ in rows if fr[0] == "generate" and fr[-1] != "[not sampled]"]
        assert any("main" in fr and "touch_pages" in fr for fr in gen), gen[:2]


def _status_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s in /proc/%d/status" % (key, pid))


def test_memphase_rss_stays_flat_over_2000_short_lived_processes():
    """Each exited process's unwinding snapshot (mappings, opened files, a Dwfl with its
    CFI tables) and cached symbol names are dropped when the process is reaped, so
    memphase's own RSS does not grow with the number of processes it has seen.

    The spawner (tests/workload/spawner.c) runs 2,000 children one after the other; each
    is the spawner exec'd again and touches 256 KiB, so it gets about 4 DWARF-unwound
    samples. The spawner stops before child 1,000 and after the last child until the test
    lets it go on; there the test waits 1.5 s (memphase reaps a process 1 s after its exit,
    checked every 100 ms) and reads memphase's /proc/PID/status. Both points are reached
    by counting processes, not by the clock, and nothing machine-wide is read.

    A process's snapshot costs ~290 KiB once it has been unwound, and it lives until the
    reap, 1 s after the exit: memphase's heap holds the snapshots of the last second's
    processes, tens of MiB at this machine's rate, and keeps some of that high-water mark
    resident. So the end is compared with the high-water mark (VmHWM) at child 1,000, not
    with the RSS there. Measured on the 2-vCPU test VM: without the forget the RSS ends
    ~270 MiB above that mark (it grows ~290 KiB per process); with it, below the mark or
    at most a few MiB above. The bound, 32 MiB, is 1/8 of the growth without the forget.
    """
    harness.need_root()
    n, first = 2000, 1000
    with harness.workdir() as d:
        spawner = os.path.join(harness.WORKLOAD, "spawner")
        out = os.path.join(d, "out.json")
        p = subprocess.Popen(harness.mp_argv(
            ["run", "--no-tui", "--stacks", "dwarf", "--json", out] + SAMPLE_OPTS +
            ["--", spawner, str(n), "256", d, str(first), str(n)]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        rss, hwm = {}, {}
        try:
            for cp in (first, n):
                deadline = time.monotonic() + 120
                while not os.path.exists(os.path.join(d, "at.%d" % cp)):
                    assert p.poll() is None, "memphase exited early: %s" % p.stderr.read()
                    assert time.monotonic() < deadline, "the spawner never reached %d" % cp
                    time.sleep(0.01)
                time.sleep(1.5)
                rss[cp] = _status_kib(p.pid, "VmRSS")
                hwm[cp] = _status_kib(p.pid, "VmHWM")
                open(os.path.join(d, "go.%d" % cp), "w").close()
            _, err = p.communicate(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        assert p.returncode == 0, "memphase exited %d: %s" % (p.returncode, err)
        doc = harness.load_json(out)
        samples = sum(ph["stacks"]["samples"] for ph in doc["phases"])
        assert samples >= n, "only %d stack samples: the unwinder was hardly used" % samples
        grown = rss[n] - hwm[first]
        print("memphase after %d processes: VmRSS %d KiB, VmHWM %d KiB; after %d: VmRSS %d "
              "KiB (%+d KiB over that VmHWM); lost %s"
              % (first, rss[first], hwm[first], n, rss[n], grown, doc.get("lost")))
        assert grown < 32 * 1024, \
            "memphase's RSS went %d KiB over its high-water mark at %d processes in the %d "\
            "processes after" % (grown, first, n - first)


def test_stacks_through_an_exec_chain_are_the_commands_own():
    """`sh -c "exec prog"`, as many start llama-server: prog's growth has the frames it has
    when started directly, libc's included, with no [unknown] (the libraries of the new
    image are mapped after the exec, and the shell had mapped the same libc before)."""
    harness.need_root()
    with harness.workdir() as d:
        src, prog = os.path.join(d, "grow.c"), os.path.join(d, "grow")
        with open(src, "w") as f:
            f.write("#include <stddef.h>\n#include <sys/mman.h>\n"
                    "__attribute__((noinline)) void grow_here(size_t n) {\n"
                    "  char *p = mmap(NULL, n, PROT_READ | PROT_WRITE,\n"
                    "                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\n"
                    "  for (size_t i = 0; i < n; i += 4096) p[i] = 1;\n}\n"
                    "__attribute__((noinline)) void outer(void) { grow_here(32 << 20); }\n"
                    "int main(void) { outer(); return 0; }\n")
        r = harness.run(["cc", "-O1", "-g", "-o", prog, src])
        assert r.returncode == 0, r.stderr
        stacks = {}
        for how, argv in (("direct", [prog]), ("exec chain", ["sh", "-c", "exec " + prog])):
            _, out = run(d, argv, [])
            rows = folded(out["folded"])
            grown = [(fr, w) for fr, w in rows if "grow_here" in fr]
            assert sum(w for _, w in grown) >= 31 * MIB, (how, rows[:5])
            unknown = [(fr, w) for fr, w in rows if any(x.startswith("[unknown]") for x in fr)]
            assert sum(w for _, w in unknown) < MIB, (how, unknown[:3])
            # the frames below the comm (phase; comm; frames...)
            stacks[how] = {tuple(fr[2:]) for fr, w in grown}
        assert stacks["exec chain"] == stacks["direct"], stacks
