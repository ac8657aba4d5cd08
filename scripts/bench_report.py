#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Prints the summaries of a bench.sh run from its raw output directory.

    bench_report.py touch OUT "FAULT_PROGS" SAMPLE_PROG
    bench_report.py live OUT
    bench_report.py llama OUT

Every figure comes from the runs' files: memphase's --json (out.json), touch's and runstat's
key=value files, livestat's samples, perf's stderr, llamarun.py's figures and llama-server's
log. The readers and the statistics are in benchlib.py. A figure a run should have and does not stops the summary with an error naming the
file and the key (exit status 2); 'n/a' in a table means the figure does not apply to that
configuration (no BPF time for perf, no samples without stacks, ...).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (STEADY_SKIP_MS, MissingFigure, above_floor, bpf_per_fault,  # noqa: E402
                      budget_at_least, budget_check, fault_path, floor_figures, kv, live_samples,
                      llama_cost, llama_figures, llama_load_ms, measured, med, memphase_figures,
                      need, need_num, ns_per_run, num, onetp_figures, paired, perf_figures, ratio,
                      read_json, sample_cost, steady_window, text)

NA = "n/a"

# Budgets, read in one run, never across days (this VM's ns per fault swing 2-3x). Issue 28:
B_NONE_FLOOR_NS = 40  # memphase_none's BPF ns per fault above floor_classic's
B_DWARF_NONE_NS = 15  # the default (dwarf) mode's above memphase_none's
B_THREADS = 1.00  # BPF ns per fault at 2 and 8 threads, x 1 thread
B_HOPS_NS = 100  # BPF ns per fault added when every fault is in another mapping
B_START_MS = 100  # memphase's start-up (to its target's fork)
B_EXIT_MS = 100  # memphase's exit (from its target's reap)
B_PY_RSS_MIB = 32  # memphase's own peak RSS on any target (the Python one is the largest)
# Issue 12's, still printed
B_LOOP = 1.08  # memphase_none's touch loop, x baseline
B_OVERCOUNT_PCT = 0.05  # anon growth over-count with 2 or 8 threads, % of the MiB touched
# Issue 28's budgets for the real engine under memphase, against alone
B_LLAMA_TPS = 0.99  # prompt and generation tokens/s: within 1%, so at least this ratio
B_LLAMA_LOAD = 1.03  # model load time: within 3%, so at most this ratio
B_LLAMA_READY_MS = 100  # time to ready: at most this many ms more


def f0(v):
    return NA if v is None else f"{v:.0f}"


def f1(v):
    return NA if v is None else f"{v:.1f}"


def fx(v):
    return NA if v is None else f"{v:.2f}x"


def fpct(v, nd=1):
    return NA if v is None else f"{v:.{nd}f}%"


def fbytes(v):
    if v is None:
        return NA
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= div:
            return f"{v / div:.1f} {unit}"
    return f"{v:.0f} B"


def fmib(kib):
    return NA if kib is None else f"{kib / 1024:.1f}"


def ran(configs, by, cw, count=True):
    """(config, its measured runs) for a table's rows, in configs' order; a configuration
    without a successful run gets its row saying so (after an n column of 0 when count)."""
    for c, _ in configs:
        if by[c]:
            yield c, by[c]
        else:
            print(f"{c:<{cw}} {0:>2}  NO SUCCESSFUL RUN" if count else
                  f"{c:<{cw}} NO SUCCESSFUL RUN")


def read_table(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def read_runs(out, name):
    """round, config, directory, rc of each run; the directory is taken inside out (a run's
    files are in out/NAME: the path recorded at run time would miss an OUT that was moved)"""
    return [(rnd, cfg, os.path.join(out, os.path.basename(d)), rc)
            for rnd, cfg, d, rc in read_table(os.path.join(out, name))]


# --- the touch configurations ------------------------------------------------------------------

def touch_run(rnd, cfg, d, rc, mib, fault_progs, sample_prog):
    """One touch run's figures (a failed run: only its round, config and rc)."""
    r = {"round": int(rnd), "cfg": cfg, "rc": int(rc), "dir": d}
    x = kv(f"{d}/extra")
    r["tool"] = x.get("tool")
    r["mib"] = int(x.get("mib", mib))
    if r["rc"] != 0:
        return r
    if x.get("python") == "1":
        # not the touch workload: memphase's own cost only
        s = kv(f"{d}/runstat")
        r.update({k: None for k in ("touch_ms", "faults", "pages", "target_ms", "out_bytes",
                                    "samples", "lost", "perf_lost_pct", "progs", "ns_fault",
                                    "ns_traced", "ns_all", "sp_nsrun", "start_ms", "exit_ms",
                                    "fault_progs", "counted", "traced")})
        r["wall_ms"] = need_num(s, "wall_ms", f"{d}/runstat")
        r["cpu_ms"] = need_num(s, "self_cpu_ms", f"{d}/runstat")
        r["rss_kib"] = need_num(s, "self_maxrss_kib", f"{d}/runstat")
        return r
    w, s, tg = kv(f"{d}/stdout"), kv(f"{d}/runstat"), kv(f"{d}/target")
    r["touch_ms"] = need_num(w, "touch_ms", f"{d}/stdout")
    r["faults"] = need_num(w, "minflt_total", f"{d}/stdout")
    r["pages"] = need_num(w, "pages", f"{d}/stdout")
    r["wall_ms"] = need_num(s, "wall_ms", f"{d}/runstat")
    r["target_ms"] = need_num(tg, "wall_ms", f"{d}/target")
    r["cpu_ms"] = r["rss_kib"] = r["start_ms"] = r["exit_ms"] = None
    if r["tool"] and "start_ms" in s and "start_ms" in tg:
        # the tool's start-up (to its target's fork) and exit (from its target's reap)
        r["start_ms"] = need_num(tg, "start_ms", f"{d}/target") - need_num(s, "start_ms",
                                                                             f"{d}/runstat")
        r["exit_ms"] = need_num(s, "end_ms", f"{d}/runstat") - need_num(tg, "end_ms",
                                                                          f"{d}/target")
    if r["tool"]:
        r["cpu_ms"] = need_num(s, "self_cpu_ms", f"{d}/runstat")
        r["rss_kib"] = need_num(s, "self_maxrss_kib", f"{d}/runstat")
    r["out_bytes"] = need_num(x, "out_bytes", f"{d}/extra") if "out_files" in x else None
    if r["out_bytes"] is not None and need_num(x, "out_files", f"{d}/extra") == 0:
        raise MissingFigure(f"{d}: the tool wrote none of its output files")
    r["samples"] = r["lost"] = r["perf_lost_pct"] = r["progs"] = r["excess"] = None
    r["ns_fault"] = r["ns_traced"] = r["ns_all"] = r["sp_nsrun"] = None
    r["fault_progs"] = r["counted"] = r["traced"] = r["charged_ratio"] = None
    progs_fault = fault_progs
    if r["tool"] == "memphase":
        fig = memphase_figures(read_json(f"{d}/out.json"), f"{d}/out.json",
                               x.get("bpf_stats") == "1")
        r["samples"], r["lost"], r["progs"] = fig["samples"], fig["lost"], fig["progs"]
        doc = read_json(f"{d}/out.json")
        # anon growth beyond the pages touched (the process's own start-up pages, and any
        # over-count: crossed rss_stat events of threads counted twice)
        r["excess"] = sum(need(p, "rss_growth_bytes.anon", f"{d}/out.json: phases[{i}]")
                          for i, p in enumerate(need(doc, "phases", f"{d}/out.json"))) - \
            r["pages"] * 4096
    elif r["tool"] == "floor":
        # the floor's programs (scripts/floor): its own pair is its fault path
        fl = floor_figures(kv(f"{d}/floor"), f"{d}/floor", r["pages"])
        r["progs"], r["counted"], progs_fault = fl["progs"], fl["counted"], fl["fault_progs"]
    elif r["tool"] == "onetp":
        # the one-tracepoint design (scripts/onetp): its fault path, as the floor's
        ot = onetp_figures(kv(f"{d}/onetp"), f"{d}/onetp", r["pages"])
        r["progs"], r["counted"], progs_fault = ot["progs"], ot["counted"], ot["fault_progs"]
        r["charged_ratio"] = ot["charged_ratio"]
    elif r["tool"] == "perf":
        fig = perf_figures(text(f"{d}/stderr"), f"{d}/stderr")
        r["samples"], r["lost"], r["perf_lost_pct"] = fig["samples"], fig["lost"], fig["lost_pct"]
    if x.get("bystander") in ("1", "floor"):
        # the workload is not the tool's: the tool's programs' cost per fault they traced
        if x["bystander"] == "1":
            where = f"{d}/out.json"
            p = memphase_figures(read_json(where), where, True)["progs"]
            names = fault_path(p, fault_progs, where)
        else:
            where = f"{d}/floor"
            fl = floor_figures(kv(where), where, 0)  # its target, a sleep, makes no faults
            p, names = fl["progs"], fl["fault_progs"]
        runs = p[names[0]][0]
        r["ns_traced"] = sum(p[k][1] for k in names) / runs if runs else None
        r["fault_progs"] = names
        # every program of the tool (memphase's syscall programs run for every syscall on the
        # machine), per fault of the bystander
        r["ns_all"] = sum(v[1] for v in p.values()) / r["faults"] if r["faults"] else None
    if r["progs"] is not None:
        where = {"floor": f"{d}/floor", "onetp": f"{d}/onetp"}.get(r["tool"], f"{d}/out.json")
        r.update(bpf_per_fault(r["progs"], progs_fault, r["faults"], where))
        if r["tool"] == "memphase":
            r["sp_nsrun"] = ns_per_run(r["progs"], sample_prog, where)
    return r


def touch(out, fault_progs, sample_prog):
    # older budgets of the dwarf mode (target wall, output size against perf's)
    budget_wall, budget_out_pct = 1.10, 1.0
    env = kv(os.path.join(out, "env"))
    mib = int(env.get("mib", "1024"))
    configs = read_table(os.path.join(out, "configs.tsv"))
    runs = [touch_run(*row, mib, fault_progs, sample_prog)
            for row in read_runs(out, "runs.tsv")]

    meas = measured(runs)
    by = {c: [r for r in meas if r["cfg"] == c] for c, _ in configs}
    base = by.get("baseline") or []
    if not base:
        raise MissingFigure(f"{out}: no successful baseline run: no ratio can be computed")
    scaled = {c for c, _ in configs if by[c] and any(r["mib"] != mib for r in by[c])}
    cw = max([17] + [len(c) for c, _ in configs])  # the config column's width

    def rt(c, key):
        return ratio(by[c], base, key, per_page=c in scaled)

    # BPF time per stack sample: the sampling program's extra run time over the none mode
    none_nsrun = med(r["sp_nsrun"] for r in by.get("memphase_none", []))
    for r in runs:
        r["ns_sample"] = r["extra_ns_fault"] = None
        if r["rc"] == 0 and none_nsrun is not None and r["progs"] and r["samples"]:
            r["ns_sample"], r["extra_ns_fault"] = sample_cost(
                r["progs"], sample_prog, none_nsrun, r["samples"], r["faults"],
                f"{r['dir']}/out.json")

    print()
    print(f"memphase overhead benchmark: touch {mib} MiB in 4 KiB pages ({mib * 256} faults); "
          f"{env.get('cpus', '?')} CPUs, kernel {env.get('kernel', '?')}, loadavg at start "
          f"{env.get('load_start', '?')}, at end {env.get('load_end', '?')}; "
          f"{env.get('elapsed_s', '?')} s")
    print(f"memphase binary: {env.get('memphase', '?')}")
    print()
    print("Runs (warm-up rounds are <= 0 and not counted; failed runs (rc != 0) are listed "
          "but not counted):")
    print(f"{'round':>5} {'config':<{cw}} {'MiB':>5} {'touch ms':>9} {'target ms':>9} "
          f"{'wall ms':>8} {'faults':>7} {'tool cpu%':>9} {'tool maxRSS':>11} {'BPF ns/flt':>10} "
          f"{'samples':>7} {'output':>10} {'rc':>3}")
    for r in runs:
        if r["rc"] != 0:
            print(f"{r['round']:>5} {r['cfg']:<{cw}} {r['mib']:>5} FAILED: see {r['dir']}/stderr"
                  f"{'':>64} {r['rc']:>3}")
            continue
        pct = 100 * r["cpu_ms"] / r["wall_ms"] if r["tool"] and r["wall_ms"] else None
        rss = fbytes(r["rss_kib"] * 1024) if r["tool"] else NA
        print(f"{r['round']:>5} {r['cfg']:<{cw}} {r['mib']:>5} {f0(r['touch_ms']):>9} "
              f"{f0(r['target_ms']):>9} {f0(r['wall_ms']):>8} {f0(r['faults']):>7} "
              f"{fpct(pct):>9} {rss:>11} {f0(r['ns_fault']):>10} {f0(r['samples']):>7} "
              f"{fbytes(r['out_bytes']):>10} {r['rc']:>3}")

    def star(c):
        return "*" if c in scaled else " "

    print()
    print("Time (medians of the measured rounds; x = ratio to the baseline's median):")
    print(f"{'config':<{cw}} {'n':>2} {'MiB':>5} {'touch ms':>9} {'touch x':>8} "
          f"{'TARGET wall':>11} {'TARGET x':>9} {'TOOL wall':>9} {'TOOL x':>8} {'tool wall range':>15} "
          f"{'tool outside target':>19}")
    for c, rs in ran(configs, by, cw):
        walls = [r["wall_ms"] for r in rs]
        outside = med(r["wall_ms"] - r["target_ms"] for r in rs if r["target_ms"] is not None)
        print(f"{c:<{cw}} {len(rs):>2} {f0(med(r['mib'] for r in rs)):>5} "
              f"{f0(med(r['touch_ms'] for r in rs)):>9} {fx(rt(c, 'touch_ms')) + star(c):>8} "
              f"{f0(med(r['target_ms'] for r in rs)):>11} {fx(rt(c, 'target_ms')) + star(c):>9} "
              f"{f0(med(walls)):>9} {fx(rt(c, 'wall_ms')) + star(c):>8} "
              f"{f'{min(walls):.0f}-{max(walls):.0f}':>15} {f0(outside):>19}")

    print()
    print("Cost (medians; tool = the tool's own process, the workload excluded):")
    print(f"{'config':<{cw}} {'tool cpu ms':>11} {'tool cpu%':>9} {'tool maxRSS':>11} "
          f"{'BPF ns/fault':>12} {'all progs':>9} {sample_prog + ' ns/run':>22} {'samples':>7} "
          f"{'lost':>9} {'BPF ns/sample':>13} {'(ns/fault)':>10} {'output':>10} {'output B':>11}")
    for c, rs in ran(configs, by, cw, count=False):
        tool = [r for r in rs if r["tool"]]
        pct = med(100 * r["cpu_ms"] / r["wall_ms"] for r in tool if r["wall_ms"])
        rss = max((r["rss_kib"] for r in tool), default=None)
        lost = med(r["lost"] for r in rs)
        plost = med(r["perf_lost_pct"] for r in rs)
        lost_s = NA if lost is None else (f"{lost:.0f}" if plost is None else f"{plost:.1f}%")
        ob = med(r["out_bytes"] for r in rs)
        print(f"{c:<{cw}} {f0(med(r['cpu_ms'] for r in tool)):>11} {fpct(pct):>9} "
              f"{fbytes(None if rss is None else rss * 1024):>11} "
              f"{f0(med(r['ns_fault'] for r in rs)):>12} {f0(med(r['ns_all'] for r in rs)):>9} "
              f"{f0(med(r['sp_nsrun'] for r in rs)):>22} {f0(med(r['samples'] for r in rs)):>7} "
              f"{lost_s:>9} {f0(med(r['ns_sample'] for r in rs)):>13} "
              f"{f0(med(r['extra_ns_fault'] for r in rs)):>10} {fbytes(ob):>10} {f0(ob):>11}")
    print()
    for c, desc in configs:
        print(f"  {c}: {desc}")

    print(f"""
Columns: touch = the workload's own touch loop. TARGET wall = the workload process alone, fork to
reap of touch by the runstat that starts it (its exit teardown included; the tool's start-up
before it and its detach after it excluded). TOOL wall = the whole command, fork to reap of the
tool (baseline: of that runstat). 'tool outside target' = TOOL wall - TARGET wall: the tool's
start-up (BPF load and attach) and its work after the target exits. For memphase that includes
detaching: each tracepoint/raw-tracepoint link takes ~80 ms to detach on this kernel, serialized
(up to ~0.8 s per run; it varies from run to run, see the tool wall range), a fixed cost whatever
the workload's size, which is why the TARGET column is the one the 1.10x budget is read against;
both columns are printed. n/a = the figure does not apply to the configuration.
Tool cpu / maxRSS = the tool's own process only (its child, the workload, excluded), read at its
exit stop by runstat from /proc/PID/{{schedstat,status}}; tool cpu% = tool cpu / TOOL wall, in % of
one core (perf: its main process; the kernel's work of writing samples runs in the workload).
BPF ns/fault = run time of the fault-path programs (memphase: {' + '.join(fault_progs)}; the
floors: their two, see the table against the floor), from the kernel's BPF_STATS_RUN_TIME counters
(memphase --bpf-stats, its JSON's bpf_stats; the floor's own output), divided by the faults the
workload itself made (its ru_minflt, start-up included). The counters are system-wide (the programs
run for every fault on the machine and filter by target in BPF), so this charges the cost of the
filtered-out events, other processes' faults included, to the workload: an upper bound of the cost
per target fault. 'all progs' divides all memphase programs' run time by the same faults. With
--bpf-stats on, every program run also pays the kernel's two clock reads.
BPF ns/sample = {sample_prog}'s extra run time over the none mode, divided by the stack samples:
its run time minus its runs priced at memphase_none's median ns/run ({f0(none_nsrun)} ns), so that
other processes' events, whose number varies from run to run, cancel out. It covers everything the
stack modes add to that program: the sample itself (fp: bpf_get_stack; dwarf: registers and up to
the stack's end copied into the ring buffer) and the per-fault accounting that decides when to
sample (growth per thread, and the rate cap's check on every fault once a sample is due and capped);
'(ns/fault)' is the same extra time per fault of the workload. It is a difference of two noisy
system-wide totals: read it as an order of magnitude (n/a without a memphase_none run).
samples, lost: memphase's JSON (the phases' stacks.samples summed, lost.stacks); perf's written
samples ('lost' for perf is the share of samples it reported lost: its ring buffer overflowed).
output = memphase: the sum of its --folded/--perf-data/--svg files (not its --json, which every
memphase run writes for this summary); perf: its perf.data (the file perf wrote: larger had it
lost none).
""".rstrip())

    for c in sorted(scaled):
        m = med(r["mib"] for r in by[c])
        why = env.get("perf_dwarf_reason") if c == "perf_dwarf" else ""
        print(f"\n* {c} RAN AT {m:.0f} MiB, NOT {mib} MiB ({why or 'reduced'}): its "
              f"time ratios compare\n  its time PER FAULT (per 4 KiB page touched) with the "
              f"baseline's (which ran at {mib} MiB), so its fixed\n  start-up and exit costs weigh "
              f"more than at {mib} MiB; its output size below is extrapolated linearly to {mib} "
              f"MiB\n  (perf writes one sample per fault).")

    def out_at_mib(c):
        """median output bytes of c, extrapolated to mib when it ran at another size"""
        return med(r["out_bytes"] * (mib / r["mib"] if c in scaled else 1)
                   for r in by.get(c, []) if r["out_bytes"] is not None)

    # --- against the floor of memphase's design (floor_classic, floor_btf), same run ------
    floors = [f for f in ("floor_classic", "floor_btf") if by.get(f)]
    fl_cls = by.get("floor_classic") or []
    rows_fl = [c for c, _ in configs if by[c] and med(r["ns_fault"] for r in by[c]) is not None]
    if floors and rows_fl:
        print()
        print("BPF ns per fault against the floor (trivial programs of memphase's design, "
              "scripts/floor: target lookup + per-CPU count; same run):")
        hdr = "".join(f" {'- ' + f:>15} {'x ' + f:>15}" for f in floors)
        print(f"{'config':<{cw}} {'n':>2} {'BPF ns/fault':>12}{hdr} {'traced':>6} "
              f"{'ns/traced':>9} {'- fc/traced':>11}  fault-path programs")
        for c in rows_fl:
            cells = ""
            for f in floors:
                a = above_floor(by[c], by[f]) if c != f else {"diff": None, "ratio": None}
                d = NA if a["diff"] is None else f"{a['diff']:+.0f}"
                cells += f" {d:>15} {fx(a['ratio']):>15}"
            t = above_floor(by[c], fl_cls, "ns_traced")["diff"] if c != "floor_classic" else None
            names = sorted({p for r in by[c] for p in r["fault_progs"] or []})
            print(f"{c:<{cw}} {len(by[c]):>2} {f0(med(r['ns_fault'] for r in by[c])):>12}{cells} "
                  f"{fx(med(r['traced'] for r in by[c])):>6} "
                  f"{f0(med(r['ns_traced'] for r in by[c])):>9} "
                  f"{NA if t is None else format(t, '+.0f'):>11}  {' + '.join(names)}")
        print("('- F' = ns per fault above floor F, 'x F' = ratio to it: each the median over the "
              "rounds of the\nper-round figure (rounds paired, so a drift of the machine during "
              "the run cancels); a floor runs\none thread in one mapping, so for memphase_tN and "
              "memphase_hops the distance includes what\nthreads or hops add. traced = the first "
              "fault-path program's runs per fault of the workload:\nabove 1.00x by the other "
              "processes' faults, filtered out but charged to the workload in\nns/fault (their "
              "share moves with the machine's load); ns/traced = the fault-path time per\nfault "
              "traced, a mix of target and filtered-out faults; '- fc/traced' its distance to\n"
              "floor_classic's, per-round median.)")

    # --- the one-tracepoint design (scripts/onetp), same run ------------------------------
    ot = [c for c, _ in configs if c.startswith("onetp") and by[c]]
    if ot:
        print()
        print("The one-tracepoint design (scripts/onetp: tp_btf/page_fault_user alone, the exact "
              "counters read at\neach fault, no rss_stat; same run):")
        fl_hdr = "".join(f" {'loop x ' + f:>19}" for f in floors)
        ns_hdr = "".join(f" {'ns - ' + f:>17}" for f in floors)
        print(f"{'config':<{cw}} {'n':>2} {'loop x base':>11}{fl_hdr} {'BPF ns/fault':>12}"
              f"{ns_hdr} {'charged/touched':>15}")
        for c in ot:
            # the threaded and hops runs: against their own baseline, not the floors'
            m = re.search(r"_(t\d+|hops)$", c)
            b = by.get(f"baseline_{m[1]}") if m else base
            loop = ratio(by[c], b, "touch_ms") if b else None
            cells = ""
            for f in floors:
                # a floor runs one thread: no loop ratio for the threaded runs
                x = None if m else paired(by[c], by[f], "touch_ms",
                                          lambda p, q: p / q if q else None)
                cells += f" {fx(x):>19}"
            ns = ""
            for f in floors:
                a = above_floor(by[c], by[f]) if not m else {"diff": None}
                ns += f" {NA if a['diff'] is None else format(a['diff'], '+.0f'):>17}"
            print(f"{c:<{cw}} {len(by[c]):>2} {fx(loop):>11}{cells} "
                  f"{f0(med(r['ns_fault'] for r in by[c])):>12}{ns} "
                  f"{fx(med(r['charged_ratio'] for r in by[c])):>15}")
        print("(loop x base = median touch loop over the baseline's median (onetp_tN, "
              "onetp_*hops: baseline_tN's,\nbaseline_hops'); loop x F = the median of the "
              "per-round ratios to floor F's loop; ns - F =\nBPF ns per fault above floor F, "
              "per-round median; charged/touched = the anon growth it charged\nover the "
              "pages touched: above 1.00x by the processes' own start-up pages. Its "
              "exactness:\nscripts/onetp/run.sh.)")

    print()
    print("Budgets (issue 28: distances to the floor and to the none mode in this run; absolute "
          "ns per fault\nare not comparable across days on this VM):")
    one, dflt = by.get("memphase_none"), by.get("memphase")
    fl_btf = by.get("floor_btf") or []

    def dist(rows, base):
        d = paired(rows, base, "ns_fault", lambda p, q: p - q)
        return NA if d is None else format(d, "+.0f")

    if one:
        v = med(r["ns_fault"] for r in one)
        a = above_floor(one, fl_cls)
        print(f"--stacks none: BPF {f0(v)} ns/fault, floor_classic "
              f"{f0(med(r['ns_fault'] for r in fl_cls))} {dist(one, fl_cls)} (budget floor + "
              f"{B_NONE_FLOOR_NS}: {budget_check(a['diff'], B_NONE_FLOOR_NS)}); floor_btf "
              f"{f0(med(r['ns_fault'] for r in fl_btf))} {dist(one, fl_btf)}  [memphase_none, "
              f"median of {len(one)}; differences: medians of the per-round ones]")
    if one and dflt:
        d = paired(dflt, one, "ns_fault", lambda p, q: p - q)
        print(f"default (dwarf): BPF {f0(med(r['ns_fault'] for r in dflt))} ns/fault, none "
              f"{dist(dflt, one)} (budget none + {B_DWARF_NONE_NS}: "
              f"{budget_check(d, B_DWARF_NONE_NS)}); "
              f"{f0(med(r['samples'] for r in dflt))} samples  [memphase vs memphase_none]")
    if one:
        lp = rt("memphase_none", "touch_ms")
        fls = ", ".join(f"{f} {fx(rt(f, 'touch_ms'))}" for f in floors)
        dl = f", {fx(rt('memphase', 'touch_ms'))} in the default mode" if dflt else ""
        print(f"touch loop: {fx(lp)} of baseline with --stacks none (issue 12's budget "
              f"{B_LOOP:.2f}x: {budget_check(lp, B_LOOP)}){dl}"
              f"{'; floors: ' + fls if fls else ''}")
        if by.get("memphase_nostats"):
            ns = rt("memphase_nostats", "touch_ms")
            print(f"  without --bpf-stats, as a user runs it: {fx(ns)} in the default mode "
                  f"(budget {B_LOOP:.2f}x: {budget_check(ns, B_LOOP)})  [memphase_nostats; the "
                  f"rows above time every program run for their BPF figures]")
    for n in (2, 8):
        t, b, ft = by.get(f"memphase_t{n}"), by.get(f"baseline_t{n}"), by.get(f"floor_t{n}")
        if not t or not one:
            continue
        v, o = med(r["ns_fault"] for r in t), med(r["ns_fault"] for r in one)
        x = paired(t, one, "ns_fault", lambda p, q: p / q if q else None)
        loop = ratio(t, b, "touch_ms") if b else None
        print(f"threads: {n} faulting at once: BPF {f0(v)} ns/fault vs {f0(o)} with 1 "
              f"({fx(x)}; budget {B_THREADS:.2f}x: {budget_check(x, B_THREADS)}); touch loop "
              f"{fx(loop)} of baseline_t{n}  [memphase_t{n} vs memphase_none; ratio: median of "
              f"the per-round ones]")
        if ft and fl_btf:
            fx_n = paired(ft, fl_btf, "ns_fault", lambda p, q: p / q if q else None)
            print(f"  the floor with {n} threads: {f0(med(r['ns_fault'] for r in ft))} ns/fault "
                  f"vs {f0(med(r['ns_fault'] for r in fl_btf))} ({fx(fx_n)}); memphase above "
                  f"its floor: {dist(t, ft)} ns with {n} threads, {dist(one, fl_btf)} with 1  "
                  f"[floor_t{n} vs floor_btf]")
        ex, ex1 = med(r["excess"] for r in t), med(r["excess"] for r in one)
        if ex is not None and ex1 is not None:
            over = ex - ex1
            pct = 100 * over / (mib << 20)
            print(f"  anon growth over-count {over / 1024:+.0f} KiB ({pct:+.4f}% of {mib} MiB; "
                  f"issue 12's budget {B_OVERCOUNT_PCT}%: {budget_check(pct, B_OVERCOUNT_PCT)})"
                  f"  [growth beyond the pages touched, medians: {ex / 1024:.0f} KiB vs "
                  f"{ex1 / 1024:.0f} KiB with 1 thread (its start-up pages; the other threads' "
                  f"stacks count here too)]")
    for c, what in (("memphase_hops", "with every fault in another mapping"),
                    ("memphase_inter3", "with faults alternating between 3 mappings")):
        runs = by.get(c)
        if not runs or not one:
            continue
        h, o = med(r["ns_fault"] for r in runs), med(r["ns_fault"] for r in one)
        dh = paired(runs, one, "ns_fault", lambda p, q: p - q)
        loop = ratio(runs, by["baseline_hops"], "touch_ms") \
            if c == "memphase_hops" and by.get("baseline_hops") else None
        print(f"mapping {'hops' if c == 'memphase_hops' else 'interleave'}: BPF {f0(h)} "
              f"ns/fault {what} vs {f0(o)} in one mapping: "
              f"{NA if dh is None else format(dh, '+.0f')} ns per fault (budget "
              f"+{B_HOPS_NS}: {budget_check(dh, B_HOPS_NS)})  [{c} vs memphase_none"
              f"{'' if loop is None else f'; touch loop {fx(loop)} of baseline_hops'}]")
        fh = by.get("floor_hops")
        if c == "memphase_hops" and fh and fl_btf:
            print(f"  the floor in the hops: {f0(med(r['ns_fault'] for r in fh))} ns/fault vs "
                  f"{f0(med(r['ns_fault'] for r in fl_btf))} in one mapping "
                  f"({dist(fh, fl_btf)}); memphase above its floor: {dist(runs, fh)} ns in the "
                  f"hops, {dist(one, fl_btf)} in one mapping  [floor_hops vs floor_btf]")
    for c, _ in configs:
        st = [r["start_ms"] for r in by[c] if r["start_ms"] is not None]
        ex = [r["exit_ms"] for r in by[c] if r["exit_ms"] is not None]
        if st:
            mine = c.startswith("memphase")
            bs = f" (budget {B_START_MS}: {budget_check(med(st), B_START_MS)})" if mine else ""
            be = f" (budget {B_EXIT_MS}: {budget_check(med(ex), B_EXIT_MS)})" if mine else ""
            print(f"start-up and exit: {c}: start-up {f0(med(st))} ms{bs}, exit "
                  f"{f0(med(ex))} ms after the target's reap{be} (outputs and summary "
                  f"included)  [medians of {len(st)}; ranges {min(st):.0f}-{max(st):.0f} and "
                  f"{min(ex):.0f}-{max(ex):.0f} ms]")
    mine = [(r["rss_kib"], c) for c, _ in configs if c.startswith("memphase")
            for r in by[c] if r["rss_kib"] is not None]
    if mine:
        top, who = max(mine)
        py = by.get("memphase_python")
        p_rss = max((r["rss_kib"] for r in py or []), default=None)
        print(f"own RSS: memphase peaks at {fbytes(top * 1024)} ({who}; budget {B_PY_RSS_MIB} "
              f"MiB on any target: {budget_check(top, B_PY_RSS_MIB * 1024)})"
              f"{'' if p_rss is None else f', {fbytes(p_rss * 1024)} on the Python target'}  "
              f"[the highest VmHWM of {len(mine)} memphase runs]")
    for c in ("memphase_bystander", "floor_bystander_classic", "floor_bystander_btf"):
        bys = by.get(c)
        if not bys:
            continue
        who = "memphase" if c == "memphase_bystander" else f"the {c[16:]} floor"
        print(f"Bystander: an unobserved touch loop while {who} watches a sleep: "
              f"{fx(rt(c, 'touch_ms'))} of baseline; its fault-path programs "
              f"{f0(med(r['ns_traced'] for r in bys))} ns per fault they traced and filtered "
              f"out; all its programs {f0(med(r['ns_all'] for r in bys))} ns per fault of the "
              f"bystander (the machine's other events included)  [{c}, median of {len(bys)}]")
    dw = "memphase_dwarf"
    if by.get(dw):
        print("Older budgets (dwarf mode):")
    if by.get(dw):
        tx, wx = rt(dw, "target_ms"), rt(dw, "wall_ms")
        print(f"dwarf: target wall {fx(tx)} (budget {budget_wall:.2f}x)  [{dw}, median of "
              f"{len(by[dw])} vs {len(base)} baseline runs; "
              f"{'within' if tx <= budget_wall else 'OVER'} budget; memphase's own wall, "
              f"start-up and detach included: {fx(wx)}; touch loop: {fx(rt(dw, 'touch_ms'))}]")
    md, pd = out_at_mib(dw), out_at_mib("perf_dwarf")
    if md is not None and pd:
        pct = 100 * md / pd
        note = (f"perf_dwarf extrapolated from {med(r['mib'] for r in by['perf_dwarf']):.0f} MiB"
                if "perf_dwarf" in scaled else f"both at {mib} MiB")
        print(f"dwarf output / perf dwarf output: {pct:.3f}% (budget {budget_out_pct:g}%)  "
              f"[{fbytes(md)} / {fbytes(pd)}, medians, {note}; "
              f"{'within' if pct <= budget_out_pct else 'OVER'} budget]")
    print()
    for c, _ in configs:
        if c != "baseline" and by[c]:
            print(f"{c:<{cw}} TARGET wall {fx(rt(c, 'target_ms'))}{star(c)} TOOL wall "
                  f"{fx(rt(c, 'wall_ms'))}{star(c)} touch loop {fx(rt(c, 'touch_ms'))}{star(c)}"
                  f"  (median of {len(by[c])} vs {len(base)} baseline runs)")


# --- the live-view configurations --------------------------------------------------------------

def live(out):
    budget_cpu_pct, budget_rss_mib = 2.0, 64
    env = kv(os.path.join(out, "env"))
    configs = read_table(os.path.join(out, "live-configs.tsv"))
    runs = []
    for rnd, cfg, d, rc in read_runs(out, "live-runs.tsv"):
        x, ls, tg = kv(f"{d}/extra"), kv(f"{d}/livestat"), kv(f"{d}/target")
        r = {"round": int(rnd), "cfg": cfg, "rc": int(rc), "dir": d,
             "tool": x.get("tool") == "memphase", "tui": x.get("tui"), "target_ms": None,
             "wall_ms": None, "cpu_ms": None, "pct": None, "rss_kib": None,
             "startup_ms": None, "exit_ms": None, "win_s": None, "win_from_s": None,
             "steady_cpu_ms": None, "steady_pct": None, "steady_src": None,
             "startup_first": False}
        runs.append(r)
        if r["rc"] != 0 or (cfg == "live_tui" and r["tui"] != "1"):
            continue
        if not r["tool"]:
            r["target_ms"] = need_num(tg, "wall_ms", f"{d}/target")
            continue
        r["wall_ms"] = need_num(ls, "wall_ms", f"{d}/livestat")
        # whole run: utime+stime at the exit stop counts every thread, exited ones too, in 10 ms
        # ticks; the schedstat sum is ns-exact but misses exited threads: both are lower bounds
        c = [v for v in (num(ls, "stat_cpu_ms"), num(ls, "sched_cpu_ms")) if v is not None]
        if not c:
            raise MissingFigure(f"{d}/livestat: neither 'stat_cpu_ms' nor 'sched_cpu_ms'")
        r["cpu_ms"] = max(c)
        r["pct"] = 100 * r["cpu_ms"] / r["wall_ms"] if r["wall_ms"] else None
        # VmHWM comes from the approximate per-CPU RSS counters: keep the max of the exit value
        # and the polled ones
        h = [v for v in (num(ls, "self_maxrss_kib"), num(ls, "polled_maxrss_kib")) if v]
        if not h:
            raise MissingFigure(f"{d}/livestat: neither 'self_maxrss_kib' nor "
                                f"'polled_maxrss_kib'")
        r["rss_kib"] = max(h)
        r.update(steady_window(live_samples(f"{d}/samples.tsv"), r["wall_ms"],
                               f"{d}/samples.tsv"))

    ok = [r for r in runs if r["rc"] == 0 and not (r["cfg"] == "live_tui" and r["tui"] != "1")]
    by = {c: [r for r in ok if r["cfg"] == c] for c, _ in configs}
    alone = med(r["target_ms"] for r in by.get("live_alone", []))
    skip_ms = STEADY_SKIP_MS

    print()
    print(f"memphase live-view benchmark: {env.get('live_rounds', '?')} interleaved rounds, no "
          f"warm-up; {env.get('cpus', '?')} CPUs, kernel {env.get('kernel', '?')}, loadavg at "
          f"start {env.get('live_load_start', '?')}, at end {env.get('live_load_end', '?')}; "
          f"{env.get('live_elapsed_s', '?')} s")
    print(f"workload: llama-driver --model F({env.get('live_model_mib', '?')} MiB) "
          f"{env.get('live_args', '?')}")
    print(f"terminal: {env.get('live_term', '?')}; memphase binary: {env.get('memphase', '?')}")
    print()
    print("Runs (memphase = its own process only; the workload and script excluded):")
    print(f"{'round':>5} {'config':<11} {'rc':>3} {'tui':>4} {'workload ms':>11} "
          f"{'memphase ms':>11} {'start-up ms':>11} {'exit ms':>7} {'cpu ms':>7} "
          f"{'cpu% whole':>10} {'window s':>12} {'cpu ms':>7} {'cpu% steady':>11} "
          f"{'peak RSS MiB':>12}")
    for r in runs:
        win = NA if r["win_s"] is None else f"{r['win_from_s']:.1f}+{r['win_s']:.1f}"
        su = f"<{int(r['startup_ms'])}" if r["startup_first"] else f0(r["startup_ms"])
        wl = ("~" if r["tool"] and r["target_ms"] is not None else "") + f0(r["target_ms"])
        tui = {"1": "yes", "0": "no"}.get(r["tui"], NA)
        if r["cfg"] == "live_tui" and r["tui"] != "1":
            tui = "NO!"
        print(f"{r['round']:>5} {r['cfg']:<11} {r['rc']:>3} {tui:>4} {wl:>11} "
              f"{f0(r['wall_ms']):>11} {su:>11} {f0(r['exit_ms']):>7} {f0(r['cpu_ms']):>7} "
              f"{fpct(r['pct'], 2):>10} {win:>12} {f1(r['steady_cpu_ms']):>7} "
              f"{fpct(r['steady_pct'], 2):>11} {fmib(r['rss_kib']):>12}")
    bad = [r for r in runs if r["cfg"] == "live_tui" and r["tui"] != "1"]
    if bad:
        print(f"WARNING: the live view did not engage in {len(bad)} live_tui run(s) (no alternate "
              f"screen in their tty output): left out of the medians")

    print()
    print("Medians:")
    print(f"{'config':<11} {'n':>2} {'workload ms':>11} {'vs alone':>8} {'memphase ms':>11} "
          f"{'cpu% whole':>10} {'cpu% steady':>11} {'steady range':>15} {'peak RSS MiB':>12} "
          f"{'RSS range':>11}")
    for c, _ in configs:
        rs = by[c]
        tw = med(r["target_ms"] for r in rs)
        sp = [r["steady_pct"] for r in rs if r["steady_pct"] is not None]
        rss = [r["rss_kib"] for r in rs if r["rss_kib"] is not None]
        print(f"{c:<11} {len(rs):>2} {f0(tw):>11} "
              f"{NA if tw is None or not alone else f'{tw / alone:.2f}x':>8} "
              f"{f0(med(r['wall_ms'] for r in rs)):>11} {fpct(med(r['pct'] for r in rs), 2):>10} "
              f"{fpct(med(sp), 2):>11} {(f'{min(sp):.2f}-{max(sp):.2f}%' if sp else NA):>15} "
              f"{fmib(med(rss)):>12} "
              f"{(f'{min(rss) / 1024:.1f}-{max(rss) / 1024:.1f}' if rss else NA):>11}")
    print()
    for c, desc in configs:
        print(f"  {c}: {desc}")
    print(f"""
Columns: workload = llama-driver's wall time: alone, fork to reap (by runstat); under memphase
(~), from the first to the last 100 ms sample that saw it running (memphase runs it directly, so
no wrapper takes its time; to 0.1 s). 'vs alone' = ratio to live_alone's median. memphase = its
process from exec to its exit stop. start-up = until the workload was first seen resumed
(memphase spawns it stopped, loads and attaches BPF, then resumes it; '<100': already at the first
sample), exit = from the workload's last sample to memphase's exit (final collection, summary,
detach). cpu whole = memphase's utime+stime at its exit stop (all its
threads; the larger of that and its ns-exact schedstat sum) / its wall time. cpu steady = its CPU
over the window 'from+length' (s): from the first sample at or after {skip_ms / 1000:g} s and after
the workload was resumed, to the last sample with the workload alive (so BPF load/attach and the
exit are outside it); ns-exact schedstat when memphase had a single thread over the window (else
utime+stime in 10 ms ticks). All in % of one core. peak RSS = VmHWM of memphase's process at its
exit stop (or the largest polled, when larger: the kernel's RSS counters are approximate).
live_notui runs on the same pseudo-terminal with --no-tui, so the difference to live_tui is the
live view's cost (ncurses screen updates, 4 a second) over the status line's. n/a = does not
apply (no memphase process in live_alone).
""".rstrip())

    print()
    print("Budgets:")
    t = by.get("live_tui", [])
    st, wh = med(r["steady_pct"] for r in t), med(r["pct"] for r in t)
    if st is not None:
        print(f"live view CPU: {st:.2f}% of one core (budget {budget_cpu_pct:g}%)  [live_tui, "
              f"steady state, median of {len(t)}; {'within' if st < budget_cpu_pct else 'OVER'} "
              f"budget; whole run, BPF load/attach and detach included: {fpct(wh, 2)}]")
    elif "live_tui" in by:
        print("live view CPU: NO USABLE live_tui RUN")
    rss = med(r["rss_kib"] for r in t)
    if rss is not None:
        mx = max(r["rss_kib"] for r in t)
        print(f"memphase peak RSS: {rss / 1024:.1f} MiB (budget {budget_rss_mib} MiB)  [live_tui, "
              f"VmHWM, median of {len(t)}, max {mx / 1024:.1f} MiB; "
              f"{'within' if rss < budget_rss_mib * 1024 else 'OVER'} budget]")
    elif "live_tui" in by:
        print("memphase peak RSS: NO USABLE live_tui RUN")
    n = by.get("live_notui", [])
    if n:
        ns_, nw = med(r["steady_pct"] for r in n), med(r["pct"] for r in n)
        print(f"for comparison, --no-tui: CPU {fpct(ns_, 2)} steady, {fpct(nw, 2)} whole run; "
              f"peak RSS {fmib(med(r['rss_kib'] for r in n))} MiB  [live_notui, median of "
              f"{len(n)}]")
        if st is not None and ns_ is not None:
            print(f"live view's own cost over the status lines: {st - ns_:+.2f} points of one "
                  f"core (steady state)")


# --- the engine configurations -----------------------------------------------------------------

def llama(out):
    env = kv(os.path.join(out, "env"))
    configs = read_table(os.path.join(out, "llama-configs.tsv"))
    runs = []
    for rnd, cfg, d, rc in read_runs(out, "llama-runs.tsv"):
        x = kv(f"{d}/extra")
        r = {"round": int(rnd), "cfg": cfg, "rc": int(rc), "dir": d, "tool": x.get("tool"),
             "ready_ms": None, "load_ms": None, "prompt_tps": None, "gen_tps": None,
             "prompt_n": None, "gen_n": None, "stop_ms": None, "wall_ms": None,
             "tool_cpu_ms": None, "others_pct": None, "samples": None, "bpf_ms": None}
        runs.append(r)
        if r["rc"] != 0:
            continue
        r.update(llama_figures(kv(f"{d}/llama"), f"{d}/llama"))
        log = f"{d}/server.log"
        if not os.path.isfile(log):
            raise MissingFigure(f"{log}: no such file (the server's log)")
        r["load_ms"] = llama_load_ms(text(log), log)
        if r["tool"] == "memphase":
            fig = memphase_figures(read_json(f"{d}/out.json"), f"{d}/out.json",
                                   x.get("bpf_stats") == "1")
            r["samples"] = fig["samples"]
            if fig["progs"] is not None:
                r["bpf_ms"] = sum(v[1] for v in fig["progs"].values()) / 1e6

    meas = measured(runs)
    by = {c: [r for r in meas if r["cfg"] == c] for c, _ in configs}
    cw = max([14] + [len(c) for c, _ in configs])

    print()
    print(f"memphase engine benchmark: llama-server of {env.get('llama_bin', '?')}, "
          f"{os.path.basename(env.get('llama_model', '?'))} {env.get('llama_args', '?')}, as "
          f"{env.get('llama_user', '?')}; {env.get('llama_requests', '?')} requests of "
          f"{env.get('llama_words', '?')} words, {env.get('llama_predict', '?')} tokens "
          f"generated each; {env.get('llama_warmup', '?')} warm-up + "
          f"{env.get('llama_rounds', '?')} interleaved rounds; {env.get('cpus', '?')} CPUs, "
          f"kernel {env.get('kernel', '?')}, loadavg at start {env.get('llama_load_start', '?')}, "
          f"at end {env.get('llama_load_end', '?')}; {env.get('llama_elapsed_s', '?')} s")
    print(f"memphase binary: {env.get('memphase', '?')}")
    print()
    print("Runs (warm-up rounds are <= 0 and not counted; failed runs (rc != 0) are listed but "
          "not counted):")
    print(f"{'round':>5} {'config':<{cw}} {'rc':>3} {'ready ms':>8} {'load ms':>7} "
          f"{'prompt tok/s':>12} {'gen tok/s':>9} {'prompt tok':>10} {'gen tok':>7} "
          f"{'stop ms':>7} {'wall ms':>7} {'tool cpu ms':>11} {'others cpu%':>11} "
          f"{'samples':>7} {'BPF ms':>7}")
    for r in runs:
        print(f"{r['round']:>5} {r['cfg']:<{cw}} {r['rc']:>3} {f0(r['ready_ms']):>8} "
              f"{f1(r['load_ms']):>7} {f0(r['prompt_tps']):>12} {f0(r['gen_tps']):>9} "
              f"{f0(r['prompt_n']):>10} {f0(r['gen_n']):>7} {f0(r['stop_ms']):>7} "
              f"{f0(r['wall_ms']):>7} {f0(r['tool_cpu_ms']):>11} {fpct(r['others_pct']):>11} "
              f"{f0(r['samples']):>7} {f1(r['bpf_ms']):>7}")

    def rng(rs, key, fmt):
        v = [r[key] for r in rs if r[key] is not None]
        return f"{fmt(min(v))}-{fmt(max(v))}" if v else NA

    print()
    print("Medians (and ranges) of the measured rounds:")
    print(f"{'config':<{cw}} {'n':>2} {'ready ms':>8} {'range':>9} {'load ms':>7} {'range':>11} "
          f"{'prompt tok/s':>12} {'range':>11} {'gen tok/s':>9} {'range':>9} "
          f"{'tool cpu ms':>11} {'others cpu%':>11} {'range':>11}")
    for c, rs in ran(configs, by, cw):
        print(f"{c:<{cw}} {len(rs):>2} {f0(med(r['ready_ms'] for r in rs)):>8} "
              f"{rng(rs, 'ready_ms', f0):>9} {f1(med(r['load_ms'] for r in rs)):>7} "
              f"{rng(rs, 'load_ms', f1):>11} {f0(med(r['prompt_tps'] for r in rs)):>12} "
              f"{rng(rs, 'prompt_tps', f0):>11} {f0(med(r['gen_tps'] for r in rs)):>9} "
              f"{rng(rs, 'gen_tps', f0):>9} {f0(med(r['tool_cpu_ms'] for r in rs)):>11} "
              f"{fpct(med(r['others_pct'] for r in rs)):>11} "
              f"{rng(rs, 'others_pct', lambda v: f'{v:.0f}'):>11}")
    print()
    for c, desc in configs:
        print(f"  {c}: {desc}")
    print("""
Columns: ready = from the command's start (llama-server alone; memphase, its BPF load and
attach included) to the first /health answer 200, polled every 5 ms by llamarun.py. load = the
server's own: the time stamp of its 'llama_server: model loaded' log line (--log-timestamps),
from its log's start early in its main (memphase's start-up is before it, in ready only).
prompt and gen tok/s = the run's prompt (generated) tokens over the server's own prompt (eval)
times, from the 'timings' of its replies, all requests pooled. stop = from the SIGINT to the
command's exit (memphase: its summary and outputs included). wall = the command's start to its
exit. tool cpu = the CPU time of the command and what it reaped less the server's own (read just
before the SIGINT): memphase's, its start-up and exit included (alone: the server's exit).
others cpu% = what the rest of the machine used meanwhile (/proc/stat's busy time less the
command's and llamarun.py's), in % of one core: the server computes on every CPU, so another
program's work slows its tokens/s at once. samples, BPF ms = memphase's stack samples and its
programs' run time (its --json, bpf_stats: system-wide, other processes' events included).
n/a = does not apply.
""".rstrip())

    print()
    print("Budgets (issue 28: what a user of the engine pays; memphase against alone, rounds "
          "paired):")
    a, m = by.get("llama_alone") or [], by.get("llama_memphase") or []
    if not a or not m:
        print("no llama_alone and llama_memphase runs to compare")
        return
    cost = llama_cost(m, a)

    def fx3(v):
        return NA if v is None else f"{v:.3f}x"

    for key, what in (("prompt", "prompt tokens/s"), ("gen", "generation tokens/s")):
        tps = f"{key}_tps"
        print(f"{what}: {fx3(cost[key])} of alone (budget within "
              f"{100 * (1 - B_LLAMA_TPS):.0f}%, at least {B_LLAMA_TPS:.2f}x: "
              f"{budget_at_least(cost[key], B_LLAMA_TPS)})  [{f0(med(r[tps] for r in m))} vs "
              f"{f0(med(r[tps] for r in a))} tok/s, medians of {len(m)} and {len(a)}; ratio: "
              f"median of the per-round ratios; the best runs: {f0(max(r[tps] for r in m))} vs "
              f"{f0(max(r[tps] for r in a))}, {fx3(cost['best_' + key])}]")
    print(f"model load: {fx3(cost['load'])} of "
          f"alone (budget within {100 * (B_LLAMA_LOAD - 1):.0f}%, at most {B_LLAMA_LOAD:.2f}x: "
          f"{budget_check(cost['load'], B_LLAMA_LOAD)})  [{f1(med(r['load_ms'] for r in m))} vs "
          f"{f1(med(r['load_ms'] for r in a))} ms, medians; ratio: median of the per-round "
          f"ratios]")
    print(f"time to ready: {NA if cost['ready'] is None else format(cost['ready'], '+.0f')} ms "
          f"(budget +{B_LLAMA_READY_MS} ms: {budget_check(cost['ready'], B_LLAMA_READY_MS)})  "
          f"[{f0(med(r['ready_ms'] for r in m))} vs {f0(med(r['ready_ms'] for r in a))} ms, "
          f"medians; difference: median of the per-round differences]")
    st = by.get("llama_memphase_stats") or []
    if st:
        cs = llama_cost(st, a)
        print(f"with --bpf-stats (llama_memphase_stats, not what a user pays): prompt "
              f"{fx3(cs['prompt'])}, generation {fx3(cs['gen'])}, load {fx3(cs['load'])} of "
              f"alone; memphase's BPF {f1(med(r['bpf_ms'] for r in st if r['bpf_ms'] is not None))} "
              f"ms a run  [the kernel's statistics time every program run]")
    tc, wl = med(r["tool_cpu_ms"] for r in m), med(r["wall_ms"] for r in m)
    print(f"memphase's own CPU: {f0(tc)} ms a run, {fpct(100 * tc / wl if wl else None)} of one "
          f"core over its {f0(wl)} ms (start-up and exit included)  [medians of {len(m)}; the "
          f"server uses both CPUs, so what memphase takes while it computes comes off its "
          f"tokens/s]")
    busy = max(med(r["others_pct"] for r in a), med(r["others_pct"] for r in m))
    if busy > 5:
        print(f"WARNING: the machine was busy: the other programs used {busy:.0f}% of one core "
              f"(median over the runs of one configuration): the ratios above carry their noise; "
              f"read the best runs' too")


def main(argv):
    try:
        if len(argv) == 5 and argv[1] == "touch":
            touch(argv[2], argv[3].split(), argv[4])
        elif len(argv) == 3 and argv[1] == "live":
            live(argv[2])
        elif len(argv) == 3 and argv[1] == "llama":
            llama(argv[2])
        else:
            print(__doc__.strip(), file=sys.stderr)
            return 2
    except MissingFigure as e:
        sys.stdout.flush()
        print(f"\nbench_report.py: ERROR, a figure is missing: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
