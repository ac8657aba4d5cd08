# SPDX-License-Identifier: GPL-2.0
"""The benchmark's readers and statistics (bench.sh only runs things; bench_report.py prints).

Readers take one run's files: memphase's --json document, the key=value files of touch and
runstat, perf's stderr. A figure a configuration should have and does not is an error: the
readers raise MissingFigure naming the file and the key, never return a placeholder.

Statistics: medians over the measured rounds of the interleaved runs, ratios to the baseline's
median in the same benchmark run, and the BPF-time-per-fault arithmetic. Unit-tested by
tests/integration/test_benchlib.py on hand-computed inputs.
"""
import fnmatch
import json
import re
import statistics


class MissingFigure(Exception):
    """A figure the benchmark needs is not in a run's output."""


# --- plain files -------------------------------------------------------------------------------

def kv(path):
    """key=value lines of a file ({} if it is missing)."""
    d = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                k, sep, v = line.strip().partition("=")
                if sep and k.isidentifier():
                    d[k] = v
    except FileNotFoundError:
        pass
    return d


def num(d, k):
    """d[k] as a float, None if absent or not a number (for figures that may be absent)."""
    try:
        return float(d[k])
    except (KeyError, ValueError):
        return None


def need_num(d, k, where):
    """d[k] as a float; MissingFigure naming k and where if absent or not a number."""
    if k not in d:
        raise MissingFigure(f"{where}: no '{k}'")
    try:
        return float(d[k])
    except ValueError:
        raise MissingFigure(f"{where}: '{k}' is not a number: {d[k]!r}") from None


def text(path):
    """A file's text ('' if it is missing)."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


# --- memphase's JSON ---------------------------------------------------------------------------

def read_json(path):
    """memphase's --json document; MissingFigure if the file is missing or not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise MissingFigure(f"{path}: no such file (memphase wrote no --json)") from None
    except ValueError as e:
        raise MissingFigure(f"{path}: not JSON: {e}") from None


def need(doc, path, where):
    """doc's value at the dotted key path ('lost.stacks'); MissingFigure naming the first key
    that is missing (or null: a figure the run should have carried)."""
    v = doc
    done = []
    for k in path.split("."):
        done.append(k)
        if not isinstance(v, dict) or k not in v:
            raise MissingFigure(f"{where}: no key '{'.'.join(done)}'")
        v = v[k]
        if v is None:
            raise MissingFigure(f"{where}: key '{'.'.join(done)}' is null")
    return v


def memphase_figures(doc, where, bpf_stats):
    """The figures of one memphase run's JSON: samples (stack samples over all phases), lost
    (stack samples lost), progs ({program: (runs, run_time_ns)}, None without --bpf-stats).
    bpf_stats: the run was given --bpf-stats, so its figures must be there."""
    phases = need(doc, "phases", where)
    samples = 0
    for i, p in enumerate(phases):
        samples += need(p, "stacks.samples", f"{where}: phases[{i}]")
    r = {"samples": samples, "lost": need(doc, "lost.stacks", where), "progs": None}
    if bpf_stats:
        progs = {}
        for i, p in enumerate(need(doc, "bpf_stats.programs", where)):
            at = f"{where}: bpf_stats.programs[{i}]"
            progs[need(p, "name", at)] = (need(p, "runs", at), need(p, "run_time_ns", at))
        if not progs:
            raise MissingFigure(f"{where}: bpf_stats.programs is empty")
        if sum(v[0] for v in progs.values()) and not sum(v[1] for v in progs.values()):
            raise MissingFigure(f"{where}: bpf_stats has runs but no run time (BPF_STATS_RUN_TIME "
                                f"was not enabled?)")
        r["progs"] = progs
    return r


# --- perf's stderr -----------------------------------------------------------------------------

def perf_figures(err, where):
    """perf record's own report on stderr: samples written, and lost (the samples it says it
    lost, 0 and 0.0% when it does not say)."""
    m = re.search(r"Captured and wrote [\d.]+ MB .*\((\d+) samples\)", err)
    if not m:
        raise MissingFigure(f"{where}: no 'Captured and wrote ... (N samples)' line")
    r = {"samples": int(m[1]), "lost": 0, "lost_pct": 0.0}
    m = re.search(r"Processed (\d+) samples and lost ([\d.]+)%", err)
    if m:
        r["lost"], r["lost_pct"] = int(m[1]) - r["samples"], float(m[2])
    return r


# --- statistics --------------------------------------------------------------------------------

def med(vals):
    """Median of the values that are not None, None if there are none."""
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def measured(runs):
    """The runs that count: measured rounds (>= 1; warm-up rounds are <= 0) that succeeded."""
    return [r for r in runs if r["round"] >= 1 and r["rc"] == 0]


def ratio(rows, base, key, per_page=False):
    """Median of key over rows divided by the median over the baseline's rows (same benchmark
    run, interleaved rounds); None when either side has no value. per_page: the rows ran at
    another size than the baseline: compare the medians of key per 'pages' instead."""
    if per_page:
        v = med(r[key] / r["pages"] for r in rows if r[key] is not None and r["pages"])
        b = med(r[key] / r["pages"] for r in base if r[key] is not None and r["pages"])
    else:
        v, b = med(r[key] for r in rows), med(r[key] for r in base)
    if v is None or not b:
        return None
    return v / b


def fault_path(progs, fault_progs, where):
    """The programs of one run's stats ({prog: (runs, ns)}) that run per fault: fault_progs are
    names or fnmatch patterns ('handle_rss_stat*': the classic tracepoint's program, a tp_btf
    one, or both, whatever memphase loaded); each must match at least one program, or
    MissingFigure names it. The programs in the order of the patterns, each once."""
    names, missing = [], []
    for pat in fault_progs:
        hit = sorted(p for p in progs if fnmatch.fnmatchcase(p, pat))
        if not hit:
            missing.append(pat)
        names += [p for p in hit if p not in names]
    if missing:
        raise MissingFigure(f"{where}: no BPF program {', '.join(missing)} in bpf_stats")
    return names


def bpf_per_fault(progs, fault_progs, faults, where):
    """BPF time per fault from one run's run-time stats ({prog: (runs, ns)}):
    ns_fault = the fault-path programs' run time / the workload's faults;
    ns_all = every program's run time / the same faults;
    ns_traced = the fault-path programs' run time / the runs of the first of them (the faults
    traced system-wide, other processes' included); traced = those runs / the workload's faults
    (above 1 by the share of other processes' faults, which ns_fault charges to the workload);
    fault_progs: see fault_path()."""
    names = fault_path(progs, fault_progs, where)
    if not faults:
        raise MissingFigure(f"{where}: the workload reported no faults")
    ns = sum(progs[p][1] for p in names)
    runs = progs[names[0]][0]
    return {"ns_fault": ns / faults, "ns_all": sum(v[1] for v in progs.values()) / faults,
            "ns_traced": ns / runs if runs else None, "traced": runs / faults,
            "fault_progs": names}


def floor_figures(d, where, pages):
    """One floor run's figures (scripts/floor/floor.c's key=value file, read by kv()):
    progs ({program: (runs, run_time_ns)}, every program it loaded), fault_progs (the pair
    that runs per fault: its 'progs' line) and counted (the target's faults it counted).
    MissingFigure when a figure is missing, or when the floor counted fewer faults than the
    workload touched pages: it did not find its target, and its cost would be a filter's."""
    fault_progs = d.get("progs", "").split()
    if not fault_progs:
        raise MissingFigure(f"{where}: no 'progs'")
    progs = {}
    for k in d:
        m = re.fullmatch(r"prog_(\w+)_runs", k)
        if m:
            p = m[1]
            progs[p] = (need_num(d, f"prog_{p}_runs", where),
                        need_num(d, f"prog_{p}_run_time_ns", where))
    missing = [p for p in fault_progs if p not in progs]
    if missing:
        raise MissingFigure(f"{where}: no 'prog_{missing[0]}_runs'")
    counted = need_num(d, "counted_faults", where)
    if counted < pages:
        raise MissingFigure(f"{where}: the floor counted {counted:.0f} faults of its target, "
                            f"fewer than the {pages:.0f} pages touched: it missed its target")
    if sum(v[0] for v in progs.values()) and not sum(v[1] for v in progs.values()):
        raise MissingFigure(f"{where}: runs but no run time (BPF_STATS_RUN_TIME was not "
                            f"enabled?)")
    return {"progs": progs, "fault_progs": fault_progs, "counted": counted}


def onetp_figures(d, where, pages):
    """One run of the one-tracepoint design's programs (scripts/onetp/onetp.c, time mode; its
    key=value file, read by kv()): floor_figures()'s (its fault path is its 'progs' line; it
    must have read at as many target faults as pages were touched), and charged (the anon
    growth it charged to fault addresses, bytes) and charged_ratio (that over the pages
    touched, 4 KiB each: above 1 by the processes' own start-up pages, below 1 if growth was
    lost: nothing syncs in time mode, so the last fault's page on each CPU is not in it).
    MissingFigure when a figure is missing or 'mode' is not one of the design's."""
    r = floor_figures(d, where, pages)
    mode = d.get("mode", "")
    if not mode.startswith("onetp-"):
        raise MissingFigure(f"{where}: 'mode' is {mode!r}, not onetp-cpu or onetp-sum")
    r["mode"] = mode
    r["charged"] = need_num(d, "charged_anon_bytes", where)
    r["charged_ratio"] = r["charged"] / (pages * 4096) if pages else None
    return r


def paired(rows, base, key, op):
    """Median over the rounds both rows and base have a value of key in (interleaved rounds:
    paired by 'round', so that a drift of the machine over the benchmark run cancels) of
    op(row's value, base's value); None when no round pairs up."""
    b = {r["round"]: r[key] for r in base if r[key] is not None}
    return med(op(r[key], b[r["round"]]) for r in rows
               if r[key] is not None and r["round"] in b)


def above_floor(rows, floor, key="ns_fault"):
    """rows' BPF ns per fault against a floor configuration's in the same run: diff (ns above
    the floor) and ratio (x the floor), each the median over the rounds of the per-round
    figure; None without a pair."""
    return {"diff": paired(rows, floor, key, lambda a, b: a - b),
            "ratio": paired(rows, floor, key, lambda a, b: a / b if b else None)}


def budget_check(value, budget):
    """'within' or 'OVER' (value <= budget is within), 'n/a' when either is None."""
    if value is None or budget is None:
        return "n/a"
    return "within" if value <= budget else "OVER"


def budget_at_least(value, budget):
    """'within' or 'OVER' for a figure that must not fall below its budget (a ratio of tokens/s:
    value >= budget is within), 'n/a' when either is None."""
    if value is None or budget is None:
        return "n/a"
    return "within" if value >= budget else "OVER"


def ns_per_run(progs, prog, where):
    """prog's mean run time (ns); None if it never ran."""
    if prog not in progs:
        raise MissingFigure(f"{where}: no BPF program {prog} in bpf_stats")
    runs, ns = progs[prog]
    return ns / runs if runs else None


def sample_cost(progs, prog, base_nsrun, samples, faults, where):
    """What stack sampling adds to prog (the program that samples): its run time minus its runs
    priced at base_nsrun (its median ns/run in the none mode, which takes no samples), per
    sample and per fault of the workload: (ns_sample, extra_ns_fault)."""
    if prog not in progs:
        raise MissingFigure(f"{where}: no BPF program {prog} in bpf_stats")
    runs, ns = progs[prog]
    extra = ns - runs * base_nsrun
    return (extra / samples if samples else None, extra / faults if faults else None)


# --- the live-view section ---------------------------------------------------------------------

STEADY_SKIP_MS = 1000	# the steady-state window starts at least this long after memphase


def live_samples(path):
    """livestat's samples (scripts/livestat.c): one dict per 100 ms sample of memphase."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 8:
                    rows.append({"t": float(p[0]), "stat": float(p[1]), "sched": float(p[2]),
                                 "threads": int(p[3]), "hwm": int(p[4]), "child": int(p[6]),
                                 "state": p[7]})
    except FileNotFoundError:
        raise MissingFigure(f"{path}: no such file (livestat wrote no samples)") from None
    return rows


def steady_window(rows, wall_ms, where):
    """memphase's start-up, the workload's time and memphase's CPU over the steady-state window,
    from livestat's samples: the window runs from the first sample at or after both
    STEADY_SKIP_MS and the workload's resumption (its child no longer stopped) to the last sample
    with the workload alive; ns-exact schedstat when memphase had one thread all along, else
    utime+stime (10 ms ticks). MissingFigure if the workload never ran or the window is under
    1 s."""
    alive = [x for x in rows if x["child"] and x["state"] not in "ZX-"]
    running = [x for x in alive if x["state"] not in "Tt"]
    if not running:
        raise MissingFigure(f"{where}: no sample saw the workload running")
    r = {"startup_ms": running[0]["t"], "startup_first": running[0] is rows[0],
         "target_ms": alive[-1]["t"] - running[0]["t"], "exit_ms": wall_ms - alive[-1]["t"]}
    start = max(STEADY_SKIP_MS, running[0]["t"])
    win = [x for x in rows if start <= x["t"] <= alive[-1]["t"]]
    if len(win) < 2 or win[-1]["t"] - win[0]["t"] < 1000:
        raise MissingFigure(f"{where}: the steady-state window is under 1 s")
    src = "sched" if all(x["threads"] == 1 for x in win) else "stat"
    r["win_s"] = (win[-1]["t"] - win[0]["t"]) / 1e3
    r["win_from_s"] = win[0]["t"] / 1e3
    r["steady_cpu_ms"] = win[-1][src] - win[0][src]
    r["steady_pct"] = 100 * r["steady_cpu_ms"] / (win[-1]["t"] - win[0]["t"])
    r["steady_src"] = src
    return r


# --- the engine section ------------------------------------------------------------------------

LLAMA_LOADED = "llama_server: model loaded"  # the server's log line once its model is loaded
# --log-timestamps: a line starts with the time since the log began, minutes.ss.mmm.uuu
LLAMA_STAMP = re.compile(r"(\d+)\.(\d{2})\.(\d{3})\.(\d{3}) ")


def llama_load_ms(log, where):
    """The model load time (ms) from the server's log (log: its text): the time stamp of its
    first 'llama_server: model loaded' line, from the log's start (its logger's creation, early
    in main). MissingFigure when there is no such line or it carries no time stamp."""
    for line in log.splitlines():
        if LLAMA_LOADED in line:
            m = LLAMA_STAMP.match(line)
            if not m:
                raise MissingFigure(f"{where}: the '{LLAMA_LOADED}' line has no time stamp "
                                    f"(--log-timestamps)")
            return int(m[1]) * 60000 + int(m[2]) * 1000 + int(m[3]) + int(m[4]) / 1000
    raise MissingFigure(f"{where}: no '{LLAMA_LOADED}' line")


def llama_figures(d, where):
    """One engine run's figures from scripts/llamarun.py's key=value file (read by kv()):
    ready_ms, stop_ms, wall_ms, requests; prompt_tps and gen_tps, the tokens of all its
    requests over the server's own times for them (pooled: each request weighs by its time),
    and those tokens, prompt_n and gen_n; tool_cpu_ms, the CPU time of the command less the
    server's (memphase's own, its exit included; alone, the server's exit); others_pct, the CPU
    the rest of the machine used during the run, in % of one core. MissingFigure naming the key
    when one is missing, or when the requests took no time."""
    n = need_num(d, "requests", where)
    if n < 1 or n != int(n):
        raise MissingFigure(f"{where}: 'requests' is {d['requests']!r}")
    tot = {k: sum(need_num(d, f"req{i}_{k}", where) for i in range(1, int(n) + 1))
           for k in ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms")}
    for k in ("prompt_ms", "predicted_ms"):
        if tot[k] <= 0:
            raise MissingFigure(f"{where}: the requests' '{k}' add up to {tot[k]:g}")
    wall = need_num(d, "wall_ms", where)
    if wall <= 0:
        raise MissingFigure(f"{where}: 'wall_ms' is {wall:g}")
    return {"ready_ms": need_num(d, "ready_ms", where), "stop_ms": need_num(d, "stop_ms", where),
            "wall_ms": wall, "requests": int(n), "prompt_n": tot["prompt_n"],
            "gen_n": tot["predicted_n"], "prompt_tps": 1e3 * tot["prompt_n"] / tot["prompt_ms"],
            "gen_tps": 1e3 * tot["predicted_n"] / tot["predicted_ms"],
            "tool_cpu_ms": need_num(d, "cmd_cpu_ms", where) - need_num(d, "server_cpu_ms", where),
            "others_pct": 100 * need_num(d, "others_cpu_ms", where) / wall}


def llama_cost(rows, base):
    """What the engine pays under memphase (rows) against alone (base), rounds paired (each
    the median over the rounds of the per-round figure): prompt and gen, ratios of tokens/s
    (below 1: slower); load, ratio of the load times (above 1: slower); ready, the difference
    of the times to ready (ms). None where no round pairs up. best_prompt, best_gen: the ratios
    of the best runs' tokens/s (another program's work only ever slows a run down, so on a busy
    machine the best runs are the least disturbed); None without runs."""
    def div(a, b):
        return a / b if b else None

    def best(key):
        v = [r[key] for r in rows if r[key] is not None]
        b = [r[key] for r in base if r[key] is not None]
        return div(max(v), max(b)) if v and b else None
    return {"prompt": paired(rows, base, "prompt_tps", div),
            "gen": paired(rows, base, "gen_tps", div),
            "load": paired(rows, base, "load_ms", div),
            "ready": paired(rows, base, "ready_ms", lambda a, b: a - b),
            "best_prompt": best("prompt_tps"), "best_gen": best("gen_tps")}
