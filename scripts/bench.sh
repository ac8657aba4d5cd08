#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# memphase overhead benchmark (a benchmark, not a test: it never fails on numbers).
#
# Workload: scripts/touch.c touches BENCH_MIB MiB of anonymous memory in 4 KiB pages
# (MADV_NOHUGEPAGE), one fault per page, and reports its own touch-loop time and minor faults.
# Every configuration runs that workload once per round. The rounds are interleaved and the
# order of the configurations rotates from round to round, because this VM is noisy (see
# ../shared/PLATFORM.md); the first BENCH_WARMUP rounds are run and thrown away.
#
# Reported per configuration: medians of the touch-loop time and of the wall time of the whole
# command, both as a ratio to the baseline's median; the wall time outside the loop (start-up and
# teardown); the CPU time and peak RSS of the tool's own process (children excluded); and, from
# the kernel's BPF run-time stats (memphase --bpf-stats), the BPF time per page fault.
#
# Environment:
#   BENCH_ROUNDS=5      measured rounds (at least 5 for the medians the issues ask for)
#   BENCH_MIB=1024      MiB the workload touches
#   BENCH_WARMUP=1      rounds run first and discarded
#   BENCH_SETTLE=1      seconds to sleep between runs (lets the previous run's teardown finish)
#   BENCH_CONFIGS="baseline memphase memphase_nostats"   configurations, in this order
#   BENCH_FAULT_PROGS="handle_fault handle_rss_stat"     BPF programs that run per page fault
#   BENCH_OUT=DIR       where the raw output of every run goes (default build/bench/run-DATE)
#   MEMPHASE=PATH       memphase binary (default build/memphase)
#
# Adding a configuration: write desc_NAME (prints a one-line description) and cfg_NAME DIR (runs
# the workload once; the run's files go to DIR, see run_wrapped) and add NAME to BENCH_CONFIGS.

set -uo pipefail

if [[ $EUID -ne 0 ]]; then
	echo "bench.sh: must run as root (memphase loads BPF programs and enables BPF stats); try: sudo $0" >&2
	exit 1
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${BENCH_ROUNDS:-5}
MIB=${BENCH_MIB:-1024}
WARMUP=${BENCH_WARMUP:-1}
SETTLE=${BENCH_SETTLE:-1}
read -r -a CONFIGS <<<"${BENCH_CONFIGS:-baseline memphase memphase_nostats}"
FAULT_PROGS=${BENCH_FAULT_PROGS:-handle_fault handle_rss_stat}
MEMPHASE=${MEMPHASE:-$ROOT/build/memphase}
BENCH_BIN=$ROOT/build/bench
TOUCH=$BENCH_BIN/touch
RUNSTAT=$BENCH_BIN/runstat
OUT=${BENCH_OUT:-$BENCH_BIN/run-$(date +%Y%m%d-%H%M%S)}

die() {
	echo "bench.sh: $*" >&2
	exit 1
}

build() {
	mkdir -p "$BENCH_BIN" || die "cannot create $BENCH_BIN"
	cc -O2 -Wall -Wextra -o "$TOUCH" "$ROOT/scripts/touch.c" || die "building touch failed"
	cc -O2 -Wall -Wextra -o "$RUNSTAT" "$ROOT/scripts/runstat.c" || die "building runstat failed"
	if [[ ! -x $MEMPHASE ]]; then
		make -C "$ROOT" --no-print-directory "$MEMPHASE" || die "building memphase failed"
	fi
}

# run_wrapped DIR CMD ARGS...: runs CMD under runstat. Files in DIR:
#   stdout, stderr  CMD's output (the touch workload prints touch_ms=, minflt_total=... on stdout;
#                   memphase --bpf-stats prints its "BPF program RUNS TOTAL_MS NS/RUN" table on stderr)
#   runstat         wall_ms, self_cpu_ms, self_maxrss_kib... of CMD's own process (scripts/runstat.c)
#   extra           optional key=value lines from the configuration, read by the summary:
#                   tool=NAME (the wrapped process is the tool: report its CPU and RSS),
#                   out_bytes=N (size of what the tool wrote, for the configurations to come)
run_wrapped() {
	local dir=$1
	shift
	"$RUNSTAT" "$dir/runstat" -- "$@" >"$dir/stdout" 2>"$dir/stderr"
}

# --- configurations ---------------------------------------------------------------------------

desc_baseline() { echo "touch $MIB alone"; }
cfg_baseline() {
	run_wrapped "$1" "$TOUCH" "$MIB"
}

desc_memphase() { echo "memphase run --bpf-stats -- touch $MIB"; }
cfg_memphase() {
	echo "tool=memphase" >"$1/extra"
	run_wrapped "$1" "$MEMPHASE" run --bpf-stats -- "$TOUCH" "$MIB"
}

# Without --bpf-stats: BPF_STATS_RUN_TIME itself adds two clock reads to every program run.
desc_memphase_nostats() { echo "memphase run -- touch $MIB (no BPF stats)"; }
cfg_memphase_nostats() {
	echo "tool=memphase" >"$1/extra"
	run_wrapped "$1" "$MEMPHASE" run -- "$TOUCH" "$MIB"
}

# --- driver -----------------------------------------------------------------------------------

run_one() { # ROUND CONFIG
	local round=$1 cfg=$2 dir rc t
	dir=$OUT/r${round}-$cfg
	mkdir -p "$dir"
	"cfg_$cfg" "$dir"
	rc=$?
	printf '%s\t%s\t%s\t%s\n' "$round" "$cfg" "$dir" "$rc" >>"$OUT/runs.tsv"
	t=$(sed -n 's/^touch_ms=//p' "$dir/stdout" | tail -1)
	printf '  round %-3s %-18s rc=%d touch=%s ms wall=%s ms\n' "$round" "$cfg" "$rc" "${t:-?}" \
		"$(sed -n 's/^wall_ms=//p' "$dir/runstat" 2>/dev/null)" >&2
	[[ $rc -eq 0 ]] || echo "bench.sh: $cfg failed in round $round (rc=$rc): see $dir/stderr" >&2
	sleep "$SETTLE"
	return "$rc"
}

main() {
	local cfg r i n failed=0
	[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "BENCH_ROUNDS must be a positive integer"
	[[ $MIB =~ ^[0-9]+$ && $MIB -ge 1 ]] || die "BENCH_MIB must be a positive integer"
	for cfg in "${CONFIGS[@]}"; do
		declare -F "cfg_$cfg" >/dev/null || die "unknown configuration '$cfg'"
	done
	command -v python3 >/dev/null || die "python3 is needed for the statistics"
	build
	mkdir -p "$OUT" || die "cannot create $OUT"
	: >"$OUT/runs.tsv"
	for cfg in "${CONFIGS[@]}"; do
		printf '%s\t%s\n' "$cfg" "$("desc_$cfg")"
	done >"$OUT/configs.tsv"

	n=${#CONFIGS[@]}
	echo "memphase overhead benchmark: touch $MIB MiB in 4 KiB pages; $WARMUP warm-up + $ROUNDS" \
		"interleaved rounds of: ${CONFIGS[*]}; raw output in $OUT" >&2
	for ((r = 1 - WARMUP; r <= ROUNDS; r++)); do
		# rotate the order every round so no configuration always runs first
		for ((i = 0; i < n; i++)); do
			cfg=${CONFIGS[$(((i + r + n * WARMUP) % n))]}
			run_one "$r" "$cfg" || failed=1
		done
	done

	python3 - "$OUT" "$FAULT_PROGS" <<'PY'
import os, statistics, sys

out, fault_progs = sys.argv[1], sys.argv[2].split()
BUDGET_NS = 400

def kv(path):
    d = {}
    try:
        with open(path) as f:
            for line in f:
                k, sep, v = line.strip().partition("=")
                if sep and k.isidentifier():
                    d[k] = v
    except FileNotFoundError:
        pass
    return d

def num(d, k):
    try:
        return float(d[k])
    except (KeyError, ValueError):
        return None

def bpf_stats(path):
    """memphase --bpf-stats table: {prog: (runs, run_time_ns)}"""
    progs, on = {}, False
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("BPF program"):
                on, progs = True, {}
                continue
            if on:
                p = line.split()
                if len(p) < 3 or p[0] == "total":
                    on = False
                    continue
                try:
                    progs[p[0]] = (int(p[1]), float(p[2]) * 1e6)
                except ValueError:
                    on = False
    return progs

configs = [l.rstrip("\n").split("\t", 1) for l in open(os.path.join(out, "configs.tsv"))]
runs = []
for line in open(os.path.join(out, "runs.tsv")):
    rnd, cfg, d, rc = line.rstrip("\n").split("\t")
    r = {"round": int(rnd), "cfg": cfg, "rc": int(rc)}
    w, s, x = kv(f"{d}/stdout"), kv(f"{d}/runstat"), kv(f"{d}/extra")
    r["touch_ms"], r["wall_ms"] = num(w, "touch_ms"), num(s, "wall_ms")
    r["faults"] = num(w, "minflt_total")
    r["tool"] = x.get("tool")
    r["cpu_ms"], r["rss_kib"] = num(s, "self_cpu_ms"), num(s, "self_maxrss_kib")
    r["out_bytes"] = num(x, "out_bytes")
    st = bpf_stats(f"{d}/stderr")
    r["ns_fault"] = r["ns_traced"] = r["ns_all"] = None
    if st and r["faults"]:
        fp_ns = sum(st[p][1] for p in fault_progs if p in st)
        r["ns_fault"] = fp_ns / r["faults"]
        r["ns_all"] = sum(v[1] for v in st.values()) / r["faults"]
        if st.get(fault_progs[0], (0,))[0]:
            r["ns_traced"] = fp_ns / st[fault_progs[0]][0]
    runs.append(r)

def f0(v, suffix=""):
    return "-" if v is None else f"{v:.0f}{suffix}"

def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None

print()
print("Runs (warm-up rounds are <= 0 and not counted):")
print(f"{'round':>5} {'config':<18} {'touch ms':>9} {'wall ms':>9} {'faults':>8} "
      f"{'tool cpu ms':>11} {'tool cpu%':>9} {'tool maxRSS':>11} {'BPF ns/fault':>12} {'rc':>3}")
for r in runs:
    tool = r["tool"] is not None
    pct = (100 * r["cpu_ms"] / r["wall_ms"]) if tool and r["cpu_ms"] is not None and r["wall_ms"] else None
    rss = f"{r['rss_kib'] / 1024:.1f} MiB" if tool and r["rss_kib"] is not None else "-"
    print(f"{r['round']:>5} {r['cfg']:<18} {f0(r['touch_ms']):>9} {f0(r['wall_ms']):>9} "
          f"{f0(r['faults']):>8} {f0(r['cpu_ms'] if tool else None):>11} "
          f"{'-' if pct is None else f'{pct:.1f}%':>9} {rss:>11} {f0(r['ns_fault']):>12} {r['rc']:>3}")

meas = [r for r in runs if r["round"] >= 1 and r["rc"] == 0]
by = {c: [r for r in meas if r["cfg"] == c] for c, _ in configs}
base = by.get("baseline") or []
b_touch, b_wall = med(r["touch_ms"] for r in base), med(r["wall_ms"] for r in base)

def ratio(v, b):
    return "-" if v is None or not b else f"{v / b:.2f}x"

print()
print(f"Summary (medians of the measured rounds; ratios against the baseline's median):")
hdr = (f"{'config':<18} {'n':>2} {'touch ms':>9} {'touch x':>7} {'wall ms':>8} {'wall x':>7} "
       f"{'wall range':>13} {'outside loop':>12} {'tool cpu ms':>11} {'tool cpu%':>9} "
       f"{'tool maxRSS':>11} {'BPF ns/fault':>12} {'all progs':>9}")
print(hdr)
for c, desc in configs:
    rs = by[c]
    t, w = med(r["touch_ms"] for r in rs), med(r["wall_ms"] for r in rs)
    walls = [r["wall_ms"] for r in rs if r["wall_ms"] is not None]
    rng = f"{min(walls):.0f}-{max(walls):.0f}" if walls else "-"
    outside = med(r["wall_ms"] - r["touch_ms"] for r in rs
                  if r["wall_ms"] is not None and r["touch_ms"] is not None)
    tool = [r for r in rs if r["tool"]]
    cpu = med(r["cpu_ms"] for r in tool)
    pct = med(100 * r["cpu_ms"] / r["wall_ms"] for r in tool if r["cpu_ms"] is not None and r["wall_ms"])
    rss = max((r["rss_kib"] for r in tool if r["rss_kib"] is not None), default=None)
    print(f"{c:<18} {len(rs):>2} {f0(t):>9} {ratio(t, b_touch):>7} {f0(w):>8} {ratio(w, b_wall):>7} "
          f"{rng:>13} {f0(outside):>12} {f0(cpu):>11} {'-' if pct is None else f'{pct:.1f}%':>9} "
          f"{'-' if rss is None else f'{rss / 1024:.1f} MiB':>11} "
          f"{f0(med(r['ns_fault'] for r in rs)):>12} {f0(med(r['ns_all'] for r in rs)):>9}")
    if any(r["out_bytes"] is not None for r in rs):
        print(f"{'':<18}    output bytes (median): {f0(med(r['out_bytes'] for r in rs))}")
print()
for c, desc in configs:
    print(f"  {c}: {desc}")
print(f"""
Columns: touch = the workload's own touch loop; wall = the whole command, fork to reap;
outside loop = wall - touch (start-up, BPF load/attach, teardown, summary); tool cpu / maxRSS = the
tool's own process only (its child, the workload, excluded), read at its exit stop by runstat from
/proc/PID/{{schedstat,status}}; tool cpu% = tool cpu / wall, in % of one core.
BPF ns/fault = run time of the fault-path programs ({' + '.join(fault_progs)}), from the kernel's
BPF_STATS_RUN_TIME counters, divided by the faults the workload itself made (its ru_minflt, start-up
included). The counters are system-wide (the programs run for every fault on the machine and filter
by target in BPF), so this charges the cost of the filtered-out events to the workload: an upper
bound of the cost per target fault. Dividing by the programs' own run count instead mixes in the
cheap filtered-out runs and would understate it. 'all progs' divides all memphase programs' run time
by the same faults. With --bpf-stats on, every program run also pays the kernel's two clock reads.
""".rstrip())

fault_cfgs = [(c, med(r["ns_fault"] for r in by[c])) for c, _ in configs]
fault_cfgs = [(c, v) for c, v in fault_cfgs if v is not None]
print()
for c, v in fault_cfgs:
    traced = med(r["ns_traced"] for r in by[c])
    print(f"BPF ns/fault on the fault path: {v:.0f} (budget {BUDGET_NS})"
          f"  [{c}, median of {len(by[c])}; {'within' if v <= BUDGET_NS else 'OVER'} budget;"
          f" per traced fault system-wide: {f0(traced)}]")
if b_wall:
    for c, _ in configs:
        w = med(r["wall_ms"] for r in by[c])
        if c != "baseline" and w:
            print(f"wall ratio {c} / baseline: {w / b_wall:.2f}x (median of {len(by[c])} vs {len(base)} runs)")
PY
	if ((failed)); then
		echo "bench.sh: some runs failed (see above); their rows are left out of the summary" >&2
		exit 1
	fi
	exit 0
}

main "$@"
