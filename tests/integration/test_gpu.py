# SPDX-License-Identifier: GPL-2.0
"""Pinned host memory and VRAM without a GPU: the driver pins and allocates through stand-in
CUDA libraries (build/workload/gpu: libcudart.so calling libcuda.so.1, real names and
signatures, pinned memory a shared memfd mapping), and memphase reads VRAM from a stand-in
libnvidia-ml.so.1 (MEMPHASE_NVML_LIB) that reports the state file the stand-in driver keeps."""
import json
import os
import re
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MIB  # noqa: E402
import traceformat  # noqa: E402

GPU = os.path.join(harness.WORKLOAD, "gpu")
CUDART = os.path.join(GPU, "libcudart.so")
NVML = os.path.join(GPU, "libnvidia-ml.so.1")
MAGIC = 0x6e69646e61747367          # tests/workload/gpu_standin.h
TOTAL = 8 << 30
OTHER = 512 * MIB                   # used on the device by processes not observed
PIN, VRAM = 4, 32                   # --pin-mib, --vram-mib


def write_state(path, ndevs=2):
    """struct standin_state: magic, ndevs, pad, total[4], other_used[4], procs[16]."""
    total = [TOTAL, 4 << 30, 0, 0]
    other = [OTHER, 0, 0, 0]
    with open(path, "wb") as f:
        f.write(struct.pack("<QII4Q4Q", MAGIC, ndevs, 0, *total, *other) + bytes(16 * 16))
    os.chmod(path, 0o666)


def gpu_run(d, extra_env=None, driver_args=(), extra_args=()):
    state, out = os.path.join(d, "gpu.state"), os.path.join(d, "out.json")
    write_state(state)
    env = {"MEMPHASE_STANDIN_GPU": state, "MEMPHASE_NVML_LIB": NVML}
    env.update(extra_env or {})
    r = harness.memphase(["run", "--no-tui", "--json", out] + list(extra_args) +
                         ["--", harness.DRIVER,
                          "--cudart", CUDART, "--pin-mib", str(PIN), "--vram-mib", str(VRAM),
                          "--ctx-mib", "2", "--prompt-batches", "2", "--batch-mib", "1",
                          "--tokens", "3"] + list(driver_args), env=env)
    assert r.returncode == 0, (r.returncode, r.stderr)
    return r, harness.load_json(out)


def test_pinned_bytes_per_phase_exactly():
    """load: cudaMallocHost(P) (the runtime calls cuMemAllocHost_v2, which calls
    cuMemHostAlloc: one allocation, counted once); context: cudaHostAlloc(2P); prompt:
    cudaHostRegister(P) and a second registration of the same range that fails (not
    counted); generate: cudaMallocManaged(P), managed not pinned; teardown frees everything.
    Exact: the probes count bytes asked for, not pages."""
    harness.need_root()
    with harness.workdir() as d:
        r, doc = gpu_run(d)
        want = {"load": (PIN, 0, 0, 0), "context": (2 * PIN, 0, 0, 0),
                "prompt": (PIN, 0, 0, 0), "generate": (0, 0, PIN, 0),
                "teardown": (0, 4 * PIN, 0, PIN)}
        for name, (pin, unpin, man, unman) in want.items():
            p = harness.phase(doc, name)
            got = (p["pinned_bytes"], p["pinned_freed_bytes"], p["managed_bytes"],
                   p["managed_freed_bytes"])
            assert got == (pin * MIB, unpin * MIB, man * MIB, unman * MIB), (name, got)
        g = doc["gpu"]
        assert g["pinned"] == {"peak_bytes": 4 * PIN * MIB, "held_bytes": 0, "allocs": 3,
                               "frees": 3}, g["pinned"]
        assert g["managed"] == {"peak_bytes": PIN * MIB, "held_bytes": 0, "allocs": 1,
                                "frees": 1}, g["managed"]
        # both stand-in libraries' functions are probed (dlopen'd at run time)
        assert g["alloc_probes"] >= 16, g["alloc_probes"]
        # one stack sample per allocation: the driver's named frame is the caller
        where = {(o["class"], o["phase"]): o for o in g["origins"]}
        assert where[("pinned", "load")]["where"].startswith("gpu_pin_weights"), where
        assert where[("pinned", "context")]["where"].startswith("gpu_pin_kv"), where
        assert where[("managed", "generate")]["bytes"] == PIN * MIB, where
        # the summary's table
        assert "+PINNED" in r.stderr + r.stdout, r.stderr


def test_trace_has_the_gpu_counters():
    """--trace: a "GPU memory bytes" counter track whose pinned/managed/VRAM values step as
    the stand-in allocates: its highs are the JSON's peaks (each change is a point, not a
    sampled reading), it ends at 0 pinned and managed, and every point is a value the run
    held (multiples of P MiB, of V MiB)."""
    harness.need_root()
    with harness.workdir() as d:
        tr = os.path.join(d, "t.json")
        r, doc = gpu_run(d, extra_args=["--trace", tr])
        traceformat.check(tr, doc["duration_s"])
        with open(tr) as f:
            ev = json.load(f)["traceEvents"]
        pts = [e for e in ev if e.get("ph") == "C" and e["name"] == "GPU memory bytes"]
        assert pts, "no GPU counter track"
        pinned = [e["args"]["pinned host"] for e in pts]
        managed = [e["args"]["managed host"] for e in pts]
        vram = [e["args"]["VRAM"] for e in pts]
        assert max(pinned) == doc["gpu"]["pinned"]["peak_bytes"] == 4 * PIN * MIB, pinned
        assert max(managed) == doc["gpu"]["managed"]["peak_bytes"] == PIN * MIB, managed
        assert max(vram) == doc["gpu"]["vram"]["target_peak_bytes"], vram
        assert pinned[-1] == 0 and managed[-1] == 0, (pinned[-1], managed[-1])
        assert all(p % (PIN * MIB) == 0 for p in pinned + managed), pinned
        assert all(v % (VRAM * MIB) == 0 for v in vram), vram
        ts = [e["ts"] for e in pts]
        assert ts == sorted(ts), ts


def test_vram_equals_what_nvml_reports():
    """Each device's total/used/free as the stand-in NVML reports them at the end (the
    target has exited: used is the other processes' 512 MiB), and the target's VRAM per
    phase: load V, context 2V. The driver holds each step 500 ms; memphase reads NVML every
    100 ms and at phase changes, so each phase's peak is seen (5x margin)."""
    harness.need_root()
    with harness.workdir() as d:
        r, doc = gpu_run(d)
        v = doc["gpu"]["vram"]
        assert doc["gpu"]["nvml_unavailable"] is None
        assert v is not None and v["readings"] > 0, doc["gpu"]
        devs = v["devices"]
        assert [x["index"] for x in devs] == [0, 1], devs
        assert devs[0] == {"index": 0, "name": "Stand-in GPU 0", "total_bytes": TOTAL,
                           "used_bytes": OTHER, "free_bytes": TOTAL - OTHER,
                           "target_bytes": 0}, devs[0]
        assert devs[1]["total_bytes"] == 4 << 30 and devs[1]["used_bytes"] == 0, devs[1]
        assert v["target_peak_bytes"] == 2 * VRAM * MIB, v
        assert harness.phase(doc, "load")["vram_bytes"] == VRAM * MIB
        assert harness.phase(doc, "context")["vram_bytes"] == 2 * VRAM * MIB
        assert harness.phase(doc, "generate")["vram_bytes"] == 2 * VRAM * MIB
        out = r.stderr + r.stdout
        assert "GPU 0 Stand-in GPU 0: total 8.00 GiB, used 512 MiB, free 7.50 GiB" in out, out


def test_no_nvml_is_one_line():
    """No NVML library: a CPU-only run says nothing of a GPU in its summary; the JSON says
    why there is no VRAM figure; a run that pins host memory (CUDA) says it in one line."""
    harness.need_root()
    nonvml = {"MEMPHASE_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--no-tui", "--json", out, "--", harness.DRIVER,
                              "--ctx-mib", "2"], env=nonvml)
        assert r.returncode == 0, (r.returncode, r.stderr)
        text = r.stderr + r.stdout
        lines = [ln for ln in text.splitlines() if "VRAM" in ln or "PINNED" in ln or
                 "NVML" in ln]
        assert not lines, lines
        g = harness.load_json(out)["gpu"]
        assert g["vram"] is None and "libnvidia-ml.so.1" in g["nvml_unavailable"], g
        assert g["pinned"]["allocs"] == 0 and g["alloc_probes"] == 0, g
        assert all(p["pinned_bytes"] == 0 and p["vram_bytes"] is None
                   for p in harness.load_json(out)["phases"])
        r, _ = gpu_run(d, nonvml)
        lines = [ln for ln in (r.stderr + r.stdout).splitlines() if "NVML" in ln]
        assert len(lines) == 1 and lines[0].startswith("VRAM: not measured (no NVML: "), lines


def test_status_line_has_gpu_fields_only_with_a_gpu():
    """--no-tui status lines: pinned=, vram=, vram_full_in= appear with NVML, not without."""
    harness.need_root()
    with harness.workdir() as d:
        r, _ = gpu_run(d)
        status = [ln for ln in r.stderr.splitlines() if ln.startswith("memphase: t=")]
        assert status and all(" vram=" in ln and " pinned=" in ln for ln in status), status
        out = os.path.join(d, "plain.json")
        r = harness.memphase(["run", "--no-tui", "--interval", "100ms", "--json", out, "--",
                              harness.DRIVER, "--ctx-mib", "2", "--sleep-ms", "300"],
                             env={"MEMPHASE_NVML_LIB": os.path.join(d, "none.so")})
        status = [ln for ln in r.stderr.splitlines() if ln.startswith("memphase: t=")]
        assert status and not any("vram=" in ln for ln in status), status


def test_pinned_memory_goes_with_a_killed_process():
    """The driver SIGKILLs itself between generated tokens (after a llama_decode returned:
    the `host` phase) while holding 4P pinned and P managed: the kernel took the memory back,
    so memphase holds none at the end; the bytes count as freed in the phase the process
    died in, and in no other."""
    harness.need_root()
    with harness.workdir() as d:
        state, out = os.path.join(d, "gpu.state"), os.path.join(d, "out.json")
        write_state(state)
        r = harness.memphase(["run", "--no-tui", "--json", out, "--", harness.DRIVER,
                              "--cudart", CUDART, "--pin-mib", str(PIN), "--vram-mib", "1",
                              "--prompt-batches", "1", "--tokens", "3",
                              "--die-in-generate", "2"],
                             env={"MEMPHASE_STANDIN_GPU": state, "MEMPHASE_NVML_LIB": NVML})
        assert r.returncode == 137, (r.returncode, r.stderr)
        doc = harness.load_json(out)
        g = doc["gpu"]
        assert g["pinned"]["peak_bytes"] == 4 * PIN * MIB and g["pinned"]["held_bytes"] == 0, g
        assert g["managed"]["held_bytes"] == 0, g
        p = harness.phase(doc, "host")
        assert (p["pinned_freed_bytes"], p["managed_freed_bytes"]) == (4 * PIN * MIB, PIN * MIB), p
        assert sum(q["pinned_freed_bytes"] for q in doc["phases"]) == 4 * PIN * MIB, doc["phases"]


def test_tui_pinned_and_vram_rows():
    """The live view: a pinned row, and a VRAM row that projects when the device fills while
    the target's VRAM grows (load V, then context +V: growing within the 5 s window); the
    figures are the stand-in NVML's (8 GiB device, 512 MiB used by others)."""
    import test_tui
    test_tui.need_tools()
    d = harness.tmpdir()
    state = os.path.join(d, "gpu.state")
    write_state(state)
    cmd = ["env", "MEMPHASE_STANDIN_GPU=" + state, "MEMPHASE_NVML_LIB=" + NVML] + \
        harness.mp_argv(["run", "--target-log", os.path.join(d, "target.log"), "--",
                         harness.DRIVER, "--cudart", CUDART, "--pin-mib", str(PIN),
                         "--vram-mib", "512", "--gpu-hold-ms", "1500", "--ctx-mib", "2",
                         "--prompt-batches", "1", "--tokens", "100", "--sleep-ms", "30"])
    t = test_tui.Tmux(d, cmd)
    try:
        # context pinned 3P; the prompt's registration may already have made it 4P. The
        # VRAM row (NVML, read every 100 ms) can show before the pinned events are in:
        # wait for both on one screen
        pinned = r"^pinned\s+(%d|%d)\.0 MiB \(peak \1\.0 MiB\)   managed 0 B" % (3 * PIN,
                                                                               4 * PIN)
        s = t.wait(lambda s: re.search(r"^VRAM\s+1\.00 GiB \(peak 1\.00 GiB\)\s+free 6\.50 GiB"
                                       r"\s+full in ~[\d.]+ \w+ at \+", s, re.M) and
                   re.search(pinned, s, re.M),
                   "VRAM row with a time to full, and the pinned row", timeout=30)
        t.keys("q")
        s = t.wait(lambda s: test_tui.END in s, "memphase to end after q")
        assert re.search(test_tui.END + r" rc=0", s), s
    finally:
        t.kill()
        shutil.rmtree(d, ignore_errors=True)


def test_pinned_managed_and_vram_per_request():
    """llama-serve with the stand-in runtime, 3 requests: inside llama_decode (the first
    prompt batch of request R) it frees request R-1's pinned buffer and pins R * K KiB,
    request 2 alone allocates K KiB managed, then R * V MiB of VRAM, each step held 300 ms
    (NVML is read every 100 ms and at phase changes: 3x margin). Exact per request in the
    JSON, the summary's table and the HTML report's (checked in chromium)."""
    import test_html
    harness.need_root()
    k, v, n = 512, 8, 3
    with harness.workdir() as d:
        state, out, page = (os.path.join(d, x) for x in ("gpu.state", "out.json", "r.html"))
        write_state(state)
        r = harness.memphase(["run", "--no-tui", "--json", out, "--html", page, "--",
                              os.path.join(harness.WORKLOAD, "llama-serve"), "--requests",
                              str(n), "--prompt-batches", "1", "--batch-mib", "1", "--cudart",
                              CUDART, "--pin-kib", str(k), "--vram-mib", str(v)],
                             env={"MEMPHASE_STANDIN_GPU": state, "MEMPHASE_NVML_LIB": NVML})
        assert r.returncode == 0, (r.returncode, r.stderr)
        doc = harness.load_json(out)
        reqs = doc["requests"]
        assert len(reqs) == n, reqs
        for i, q in enumerate(reqs, 1):
            got = (q["pinned_bytes"], q["pinned_freed_bytes"], q["managed_bytes"],
                   q["managed_freed_bytes"], q["vram_delta_bytes"])
            want = (i * k * 1024, (i - 1) * k * 1024, k * 1024 if i == 2 else 0, 0,
                    i * v * MIB)
            assert got == want, (i, got, want)
        # the summary: what each request kept
        rows = [ln.split() for ln in r.stdout.splitlines()
                if re.match(r"^  [1-3] +[0-9.]+s ", ln)]
        assert len(rows) == n and "+PINNED" in r.stdout, r.stdout
        # +PINNED +MANAGED +VRAM after +RSS: value and unit each
        kept = [(x[7] + x[8], x[9] + x[10], x[11] + x[12]) for x in rows]
        assert kept == [("+512KiB", "+0B", "+8.00MiB"), ("+512KiB", "+512KiB", "+16.0MiB"),
                        ("+512KiB", "+0B", "+24.0MiB")], (kept, r.stdout)
        # the HTML report's table: the same figures
        res = test_html.check_in_browser(page, "prompt", os.path.join(d, "gpu.png"))
        assert res["errors"] == [], res
        want = [test_html.request_row(i, q) for i, q in enumerate(reqs)]
        assert all(test_html.same_row(a, b) for a, b in zip(res["req_rows"], want)) and \
            len(res["req_rows"]) == n, (res["req_rows"], want)
        assert [row[10:13] for row in res["req_rows"]] == \
            [[str(k * 1024), str(k * 1024 if i == 1 else 0), str((i + 1) * v * MIB)]
             for i in range(n)], res["req_rows"]


def test_no_gpu_columns_without_a_gpu():
    """A run without the stand-ins: requests[] has no GPU keys, the summary no GPU columns."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--no-tui", "--json", out, "--",
                              os.path.join(harness.WORKLOAD, "llama-serve"), "--requests", "2",
                              "--prompt-batches", "1", "--batch-mib", "1"],
                             env={"MEMPHASE_NVML_LIB": os.path.join(d, "libnvidia-ml.so.1")})
        assert r.returncode == 0, (r.returncode, r.stderr)
        reqs = harness.load_json(out)["requests"]
        assert len(reqs) == 2 and not any("pinned_bytes" in q for q in reqs), reqs
        assert "REQ" in r.stdout and "+PINNED" not in r.stdout, r.stdout
