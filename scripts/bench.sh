#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# memphase overhead benchmark (a benchmark, not a test: it never fails on numbers).
#
# Workload: scripts/touch.c touches BENCH_MIB MiB of anonymous memory in 4 KiB pages
# (MADV_NOHUGEPAGE), one fault per page, and reports its own touch-loop time and minor faults.
# Every configuration runs that workload once per round. The rounds are interleaved and the
# order of the configurations rotates from round to round, because this VM is noisy (the
# first round of a configuration was often 20-40% slower); the first BENCH_WARMUP rounds are
# run and thrown away.
#
# The workload is always started as `runstat DIR/target -- touch MIB`, under the tool when there
# is one, so that the TARGET's own wall time (fork to reap of touch, its exit teardown included,
# the tool's start-up and detach excluded) is measured the same way in every configuration.
#
# Reported per configuration: medians of the touch-loop time, of the target's wall time and of
# the wall time of the whole command, each as a ratio to the baseline's median; the CPU time and
# peak RSS of the tool's own process (children excluded); from the kernel's BPF run-time stats
# (memphase --bpf-stats), the BPF time per page fault and per stack sample; the stack samples;
# and the size of what the tool wrote (memphase: its --folded/--perf-data/--svg files; perf: its
# perf.data), with memphase's dwarf output as a share of perf's dwarf output.
#
# Configurations (BENCH_CONFIGS, default all of them, in this order):
#   baseline           touch alone
#   memphase           memphase run --bpf-stats (default mode: --stacks dwarf, no exports)
#   memphase_nostats   the same without --bpf-stats
#   memphase_none      --stacks none
#   memphase_fp        --stacks fp --folded F
#   memphase_dwarf     --stacks dwarf --folded F --perf-data F2 --svg F3 (all exports)
#   perf_fp            perf record -e page-faults -c 1 -g
#   perf_dwarf         perf record -e page-faults -c 1 --call-graph dwarf (GBs at 1 GiB, see below)
#
# Environment:
#   BENCH_ROUNDS=7      measured rounds (at least 5 for the medians the issues ask for; the default
#                       run takes ~4 minutes)
#   BENCH_MIB=1024      MiB the workload touches
#   BENCH_WARMUP=1      rounds run first and discarded
#   BENCH_SETTLE=1      seconds to sleep between runs (lets the previous run's teardown finish)
#   BENCH_CONFIGS="baseline memphase ..."                configurations, in this order
#   BENCH_FAULT_PROGS="handle_fault handle_fault_kernel handle_rss_stat"
#                       BPF programs that run per page fault
#   BENCH_SAMPLE_PROG=handle_rss_stat                    BPF program that takes the stack samples
#   BENCH_PERF_DWARF_MIB=256   perf_dwarf writes ~8.4 KB per fault (2+ GB at 1 GiB); when the
#                       file system of BENCH_OUT has too little room for one such run (df), perf_dwarf
#                       runs at this size instead and its numbers are reported per fault (and said so)
#   BENCH_PERF_DWARF_REDUCE=auto   auto (by df), yes (always reduce) or no (never)
#   BENCH_KEEP_PERF_DATA=0   1: keep perf's perf.data files (default: deleted right after their
#                       size is taken; memphase's small output files are kept)
#   BENCH_OUT=DIR       where the raw output of every run goes (default build/bench/run-DATE)
#   MEMPHASE=PATH       memphase binary (default build/memphase)
#   PERF=PATH           perf binary (default: perf from PATH)
#   BENCH_REPORT=DIR    run nothing: print again the summary of the run whose raw output is in DIR
#
# Adding a configuration: write desc_NAME (prints a one-line description) and cfg_NAME DIR (runs
# the workload once; the run's files go to DIR, see run_wrapped) and add NAME to BENCH_CONFIGS.
#
# Live-view section (BENCH_LIVE=1, the default; a separate set of configurations, run after the
# ones above, in its own rounds, with its own summary below theirs): memphase's own CPU use and
# peak RSS while its full-screen live view runs (its budgets: under 2% of one core at the
# default refresh, under 64 MiB). memphase runs under script(1), so its stdout is a pseudo-terminal
# (BENCH_LIVE_COLS x BENCH_LIVE_ROWS, TERM=xterm-256color) and the ncurses view engages (checked
# in each run's raw screen output), against a long, slow workload: build/workload/llama-driver on
# a 64 MiB model file (build/bench/live-model.bin, made once), ~10 s alone. The workload ends on
# its own; memphase then restores the terminal and exits. memphase is started by
# scripts/livestat.c, which samples its own process only (not the workload, not script) every
# 100 ms and at its exit stop. Reported: its CPU time in % of one core over the whole run (BPF
# load/attach and detach included) and over a steady-state window (from 1 s after its start, and
# not before the workload was resumed, to the workload's exit), and its peak RSS (VmHWM).
#   live_alone         llama-driver alone
#   live_tui           memphase run -- llama-driver, live view on the pseudo-terminal
#   live_notui         the same with --no-tui (a status line per second, on the same terminal)
# BENCH_CONFIGS may name them (or 'live' for the three): it then selects exactly the
# configurations that run, e.g. BENCH_CONFIGS=live runs the live-view section alone.
#   BENCH_LIVE=1          0: skip the live-view section (even when BENCH_CONFIGS names it)
#   BENCH_LIVE_ROUNDS=3   interleaved rounds, order rotated, no warm-up (~40 s a round)
#   BENCH_LIVE_ARGS="--ctx-mib 64 --prompt-batches 4 --batch-mib 16 --tokens 400 --token-kib 256
#                    --sleep-ms 25"   llama-driver options (its --model is added)
#   BENCH_LIVE_COLS=120 BENCH_LIVE_ROWS=40   size of the pseudo-terminal

set -uo pipefail

if [[ $EUID -ne 0 ]]; then
	echo "bench.sh: must run as root (memphase loads BPF programs and enables BPF stats); try: sudo $0" >&2
	exit 1
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${BENCH_ROUNDS:-7}
MIB=${BENCH_MIB:-1024}
WARMUP=${BENCH_WARMUP:-1}
SETTLE=${BENCH_SETTLE:-1}
ALL_CONFIGS="baseline memphase memphase_nostats memphase_none memphase_fp memphase_dwarf perf_fp perf_dwarf"
ALL_LIVE="live_alone live_tui live_notui"
LIVE=${BENCH_LIVE:-1}
LIVE_ROUNDS=${BENCH_LIVE_ROUNDS:-3}
LIVE_ARGS=${BENCH_LIVE_ARGS:---ctx-mib 64 --prompt-batches 4 --batch-mib 16 --tokens 400 --token-kib 256 --sleep-ms 25}
LIVE_COLS=${BENCH_LIVE_COLS:-120}
LIVE_ROWS=${BENCH_LIVE_ROWS:-40}
LIVE_MODEL_MIB=64
# CONFIGS: the touch configurations; LIVE_CONFIGS: the live-view ones (see the header)
CONFIGS=()
LIVE_CONFIGS=()
for cfg in ${BENCH_CONFIGS:-$ALL_CONFIGS $ALL_LIVE}; do
	[[ $cfg == live ]] && cfg=$ALL_LIVE
	for c in $cfg; do
		if [[ $c == live_* ]]; then
			[[ $LIVE == 1 ]] && LIVE_CONFIGS+=("$c")
		else
			CONFIGS+=("$c")
		fi
	done
done
unset cfg c
FAULT_PROGS=${BENCH_FAULT_PROGS:-handle_fault handle_fault_kernel handle_rss_stat}
SAMPLE_PROG=${BENCH_SAMPLE_PROG:-handle_rss_stat}
PERF_DWARF_SMALL_MIB=${BENCH_PERF_DWARF_MIB:-256}
PERF_DWARF_REDUCE=${BENCH_PERF_DWARF_REDUCE:-auto}
KEEP_PERF_DATA=${BENCH_KEEP_PERF_DATA:-0}
MEMPHASE=${MEMPHASE:-$ROOT/build/memphase}
PERF=${PERF:-perf}
BENCH_BIN=$ROOT/build/bench
TOUCH=$BENCH_BIN/touch
RUNSTAT=$BENCH_BIN/runstat
LIVESTAT=$BENCH_BIN/livestat
DRIVER=$ROOT/build/workload/llama-driver
LIVE_MODEL=$BENCH_BIN/live-model.bin
OUT=${BENCH_OUT:-$BENCH_BIN/run-$(date +%Y%m%d-%H%M%S)}
PERF_DWARF_MIB=$MIB	# decided in main() from the free space
PERF_DWARF_WHY=""
PERF_DWARF_REASON=""

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
	((${#LIVE_CONFIGS[@]})) || return 0
	cc -O2 -Wall -Wextra -o "$LIVESTAT" "$ROOT/scripts/livestat.c" || die "building livestat failed"
	if [[ ! -x $DRIVER ]]; then
		make -C "$ROOT" --no-print-directory workload || die "building the workload failed"
	fi
	# the model file the driver maps and reads (made once, kept for later runs)
	if [[ $(stat -c %s "$LIVE_MODEL" 2>/dev/null) != $((LIVE_MODEL_MIB << 20)) ]]; then
		dd if=/dev/zero of="$LIVE_MODEL" bs=1M count="$LIVE_MODEL_MIB" status=none ||
			die "cannot create $LIVE_MODEL"
	fi
	chmod 644 "$LIVE_MODEL"
}

# run_wrapped DIR CMD ARGS...: runs CMD under runstat. Files in DIR:
#   stdout, stderr  CMD's output (the touch workload prints touch_ms=, minflt_total=... on stdout;
#                   memphase prints its summary, with the 'stacks: N samples' line, on stdout and
#                   its --bpf-stats "BPF program RUNS TOTAL_MS NS/RUN" table on stderr; perf
#                   prints its "Captured and wrote ... (N samples)" line on stderr)
#   runstat         wall_ms, self_cpu_ms, self_maxrss_kib... of CMD's own process (scripts/runstat.c)
#   target          the same for the workload, written by the runstat that starts touch (see
#                   target_cmd): its wall_ms is the target's own wall time
#   extra           optional key=value lines from the configuration, read by the summary:
#                   tool=NAME (the wrapped process is the tool: report its CPU and RSS),
#                   mib=N (MiB the workload touched, when it is not BENCH_MIB),
#                   out_bytes=N (size of what the tool wrote), out_files=N
run_wrapped() {
	local dir=$1
	shift
	"$RUNSTAT" "$dir/runstat" -- "$@" >"$dir/stdout" 2>"$dir/stderr"
}

# target_cmd DIR [MIB]: sets TARGET_CMD to the workload command: touch MIB under its own runstat.
# memphase runs its command as the invoking user under sudo: DIR/target must be writable by them.
target_cmd() {
	local dir=$1 mib=${2:-$MIB}
	: >"$dir/target"
	if [[ -n ${SUDO_UID:-} ]]; then
		chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$dir/target" 2>/dev/null
	fi
	TARGET_CMD=("$RUNSTAT" "$dir/target" -- "$TOUCH" "$mib")
}

# note_output DIR FILE...: writes out_bytes (sum of the sizes of the FILEs that exist) to DIR/extra
note_output() {
	local dir=$1 f n=0 total=0 size
	shift
	for f in "$@"; do
		if [[ -f $f ]]; then
			size=$(stat -c %s "$f") || continue
			total=$((total + size))
			n=$((n + 1))
		fi
	done
	printf 'out_bytes=%s\nout_files=%s\n' "$total" "$n" >>"$dir/extra"
}

# --- configurations ---------------------------------------------------------------------------

desc_baseline() { echo "touch $MIB alone"; }
cfg_baseline() {
	target_cmd "$1"
	run_wrapped "$1" "${TARGET_CMD[@]}"
}

desc_memphase() { echo "memphase run --bpf-stats -- touch $MIB (default mode: dwarf stacks, no exports)"; }
cfg_memphase() {
	echo "tool=memphase" >"$1/extra"
	target_cmd "$1"
	run_wrapped "$1" "$MEMPHASE" run --allow-root --bpf-stats -- "${TARGET_CMD[@]}"
}

# Without --bpf-stats: BPF_STATS_RUN_TIME itself adds two clock reads to every program run.
desc_memphase_nostats() { echo "memphase run -- touch $MIB (default mode, no BPF stats)"; }
cfg_memphase_nostats() {
	echo "tool=memphase" >"$1/extra"
	target_cmd "$1"
	run_wrapped "$1" "$MEMPHASE" run --allow-root -- "${TARGET_CMD[@]}"
}

desc_memphase_none() { echo "memphase run --bpf-stats --stacks none -- touch $MIB"; }
cfg_memphase_none() {
	echo "tool=memphase" >"$1/extra"
	target_cmd "$1"
	run_wrapped "$1" "$MEMPHASE" run --allow-root --bpf-stats --stacks none -- "${TARGET_CMD[@]}"
}

desc_memphase_fp() { echo "memphase run --bpf-stats --stacks fp --folded F -- touch $MIB"; }
cfg_memphase_fp() {
	local dir=$1 rc
	echo "tool=memphase" >"$dir/extra"
	target_cmd "$dir"
	run_wrapped "$dir" "$MEMPHASE" run --allow-root --bpf-stats --stacks fp --folded "$dir/out.folded" \
		-- "${TARGET_CMD[@]}"
	rc=$?
	note_output "$dir" "$dir/out.folded"
	return "$rc"
}

desc_memphase_dwarf() {
	echo "memphase run --bpf-stats --stacks dwarf --folded F --perf-data F2 --svg F3 -- touch $MIB"
}
cfg_memphase_dwarf() {
	local dir=$1 rc
	echo "tool=memphase" >"$dir/extra"
	target_cmd "$dir"
	run_wrapped "$dir" "$MEMPHASE" run --allow-root --bpf-stats --stacks dwarf --folded "$dir/out.folded" \
		--perf-data "$dir/out.perf.data" --svg "$dir/out.svg" -- "${TARGET_CMD[@]}"
	rc=$?
	note_output "$dir" "$dir/out.folded" "$dir/out.perf.data" "$dir/out.svg"
	return "$rc"
}

# perf_record DIR MIB PERF-OPTIONS...: perf record on the workload; perf.data is measured, then
# deleted unless BENCH_KEEP_PERF_DATA=1 (perf_dwarf writes GBs per run).
perf_record() {
	local dir=$1 mib=$2 rc
	shift 2
	printf 'tool=perf\nmib=%s\n' "$mib" >"$dir/extra"
	target_cmd "$dir" "$mib"
	run_wrapped "$dir" "$PERF" record "$@" -o "$dir/perf.data" -- "${TARGET_CMD[@]}"
	rc=$?
	note_output "$dir" "$dir/perf.data"
	[[ $KEEP_PERF_DATA == 1 ]] || rm -f "$dir/perf.data" "$dir/perf.data.old"
	return "$rc"
}

desc_perf_fp() { echo "perf record -e page-faults -c 1 -g -o F -- touch $MIB"; }
cfg_perf_fp() {
	perf_record "$1" "$MIB" -e page-faults -c 1 -g
}

desc_perf_dwarf() {
	echo "perf record -e page-faults -c 1 --call-graph dwarf -o F -- touch $PERF_DWARF_MIB$PERF_DWARF_WHY"
}
cfg_perf_dwarf() {
	perf_record "$1" "$PERF_DWARF_MIB" -e page-faults -c 1 --call-graph dwarf
}

# --- live-view configurations (see the header) -------------------------------------------------

# live_target: sets LIVE_CMD to the workload command, llama-driver. Under memphase it is the
# command itself, not wrapped in runstat as in the touch configurations: the live view shows the
# phases of the process it runs, and a wrapper would leave it on the wrapper's (no markers, no
# histograms), which is not the view being measured. Its wall time under memphase is taken from
# livestat's samples instead (to 0.1 s).
live_target() {
	local args
	read -r -a args <<<"$LIVE_ARGS"
	LIVE_CMD=("$DRIVER" --model "$LIVE_MODEL" "${args[@]}")
}

desc_live_alone() { echo "llama-driver --model F($LIVE_MODEL_MIB MiB) $LIVE_ARGS, alone"; }
cfg_live_alone() {
	echo "tool=none" >"$1/extra"
	live_target
	"$RUNSTAT" "$1/target" -- "${LIVE_CMD[@]}" >"$1/stdout" 2>"$1/stderr" </dev/null
}

# live_memphase DIR [MEMPHASE-OPTIONS...]: memphase run -- the workload, started by livestat
# (DIR/livestat, DIR/samples.tsv) on a LIVE_COLS x LIVE_ROWS pseudo-terminal made by script(1);
# everything written to the terminal (the screen, the summary, stderr) goes to DIR/tty. The
# command run inside script is kept in DIR/cmd.sh.
live_memphase() {
	local dir=$1 rc q
	shift
	live_target
	printf -v q '%q ' "$LIVESTAT" "$dir/livestat" "$dir/samples.tsv" -- "$MEMPHASE" run --allow-root \
		--target-log "$dir/target.log" "$@" -- "${LIVE_CMD[@]}"
	printf 'stty rows %d cols %d\nexec %s\n' "$LIVE_ROWS" "$LIVE_COLS" "$q" >"$dir/cmd.sh"
	TERM=xterm-256color script -qfec "bash $(printf %q "$dir/cmd.sh")" /dev/null \
		</dev/null >"$dir/tty" 2>"$dir/stderr"
	rc=$?
	# did the full-screen view engage? (ncurses switches to the alternate screen: smcup)
	if grep -q $'\e\[?1049h' "$dir/tty"; then echo "tui=1"; else echo "tui=0"; fi >>"$dir/extra"
	return "$rc"
}

desc_live_tui() {
	echo "memphase run -- llama-driver ..., live view on a ${LIVE_COLS}x$LIVE_ROWS pseudo-terminal (script)"
}
cfg_live_tui() {
	echo "tool=memphase" >"$1/extra"
	live_memphase "$1"
}

desc_live_notui() { echo "memphase run --no-tui -- llama-driver ..., status lines on the same pseudo-terminal"; }
cfg_live_notui() {
	echo "tool=memphase" >"$1/extra"
	live_memphase "$1" --no-tui
}

# perf_dwarf_size: decide the size perf_dwarf runs at. perf writes one sample per fault with an
# 8 KiB stack copy plus registers (~8.4 KB measured), so a 1 GiB run writes ~2.2 GB (less when
# its ring buffer overflows and it loses samples). One run's file must fit, with room to spare.
perf_dwarf_size() {
	local avail need copies=1
	[[ " ${CONFIGS[*]} " == *" perf_dwarf "* ]] || return 0
	[[ $PERF_DWARF_SMALL_MIB =~ ^[0-9]+$ && $PERF_DWARF_SMALL_MIB -ge 1 ]] ||
		die "BENCH_PERF_DWARF_MIB must be a positive integer"
	[[ $KEEP_PERF_DATA == 1 ]] && copies=$((ROUNDS + WARMUP))
	need=$((MIB * 256 * 8704 * 5 * copies / 4))
	avail=$(df -B1 --output=avail "$OUT" 2>/dev/null | tail -1 | tr -d ' ')
	case $PERF_DWARF_REDUCE in
	yes)
		PERF_DWARF_MIB=$PERF_DWARF_SMALL_MIB
		PERF_DWARF_REASON="BENCH_PERF_DWARF_REDUCE=yes"
		;;
	no) ;;
	auto)
		if [[ ! $avail =~ ^[0-9]+$ ]]; then
			echo "bench.sh: df on $OUT failed: perf_dwarf runs at $PERF_DWARF_SMALL_MIB MiB to be safe" >&2
			PERF_DWARF_MIB=$PERF_DWARF_SMALL_MIB
		elif ((avail < need + (2 << 30))); then
			PERF_DWARF_MIB=$PERF_DWARF_SMALL_MIB
			PERF_DWARF_REASON="too little disk space: $((avail >> 20)) MiB free on $OUT, ~$((need >> 20)) MiB needed at $MIB MiB"
		fi
		;;
	*) die "BENCH_PERF_DWARF_REDUCE must be auto, yes or no" ;;
	esac
	if ((PERF_DWARF_MIB < MIB)); then
		PERF_DWARF_REASON=${PERF_DWARF_REASON:-df failed}
		PERF_DWARF_WHY=" (REDUCED from $MIB MiB: $PERF_DWARF_REASON; its numbers are per fault)"
	fi
	echo "bench.sh: perf_dwarf runs at $PERF_DWARF_MIB MiB (${avail:-?} bytes free on $OUT," \
		"~$need needed at $MIB MiB per perf.data file kept at a time: $copies)" >&2
}

# --- driver -----------------------------------------------------------------------------------

run_one() { # ROUND CONFIG
	local round=$1 cfg=$2 dir rc t tw
	dir=$OUT/r${round}-$cfg
	mkdir -p "$dir"
	"cfg_$cfg" "$dir"
	rc=$?
	printf '%s\t%s\t%s\t%s\n' "$round" "$cfg" "$dir" "$rc" >>"$OUT/runs.tsv"
	t=$(sed -n 's/^touch_ms=//p' "$dir/stdout" | tail -1)
	tw=$(sed -n 's/^wall_ms=//p' "$dir/target" 2>/dev/null)
	printf '  round %-3s %-18s rc=%d touch=%s ms target=%s ms wall=%s ms\n' "$round" "$cfg" "$rc" \
		"${t:-?}" "${tw:-?}" "$(sed -n 's/^wall_ms=//p' "$dir/runstat" 2>/dev/null)" >&2
	[[ $rc -eq 0 ]] || echo "bench.sh: $cfg failed in round $round (rc=$rc): see $dir/stderr" >&2
	sleep "$SETTLE"
	return "$rc"
}

run_live_one() { # ROUND CONFIG
	local round=$1 cfg=$2 dir rc what
	dir=$OUT/live-r${round}-$cfg
	mkdir -p "$dir"
	"cfg_$cfg" "$dir"
	rc=$?
	printf '%s\t%s\t%s\t%s\n' "$round" "$cfg" "$dir" "$rc" >>"$OUT/live-runs.tsv"
	if [[ -f $dir/livestat ]]; then
		printf -v what 'memphase wall=%s ms cpu=%s ms (schedstat) VmHWM=%s KiB %s' \
			"$(sed -n 's/^wall_ms=//p' "$dir/livestat")" "$(sed -n 's/^sched_cpu_ms=//p' "$dir/livestat")" \
			"$(sed -n 's/^self_maxrss_kib=//p' "$dir/livestat")" "$(grep -h '^tui=' "$dir/extra")"
	else
		what="workload wall=$(sed -n 's/^wall_ms=//p' "$dir/target" 2>/dev/null) ms"
	fi
	printf '  live round %-3s %-11s rc=%d %s\n' "$round" "$cfg" "$rc" "$what" >&2
	[[ $rc -eq 0 ]] || echo "bench.sh: $cfg failed in live round $round (rc=$rc): see $dir/stderr and $dir/tty" >&2
	sleep "$SETTLE"
	return "$rc"
}

# summarize: prints the summary of the runs in $OUT (also kept in $OUT/summary.txt)
summarize() {
	{
		[[ -s $OUT/configs.tsv ]] && summarize_touch
		[[ -s $OUT/live-configs.tsv ]] && summarize_live
	} | tee "$OUT/summary.txt"
}

# summarize_touch: the summary of the touch configurations
summarize_touch() {
	BENCH_SCRIPTS="$ROOT/scripts" python3 - "$OUT" "$FAULT_PROGS" "$SAMPLE_PROG" <<'PY'
import os, re, statistics, sys

out, fault_progs, sample_prog = sys.argv[1], sys.argv[2].split(), sys.argv[3]
BUDGET_NS, BUDGET_WALL, BUDGET_OUT_PCT = 400, 1.10, 1.0

sys.path.insert(0, os.environ["BENCH_SCRIPTS"])
from benchlib import kv, med, num  # noqa: E402

def text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""

def bpf_stats(path):
    """memphase --bpf-stats table: {prog: (runs, run_time_ns)}"""
    progs, on = {}, False
    for line in text(path).splitlines():
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

env = kv(os.path.join(out, "env"))
MIB = int(env.get("mib", "1024"))
configs = [l.rstrip("\n").split("\t", 1) for l in open(os.path.join(out, "configs.tsv"))]
runs = []
for line in open(os.path.join(out, "runs.tsv")):
    rnd, cfg, d, rc = line.rstrip("\n").split("\t")
    r = {"round": int(rnd), "cfg": cfg, "rc": int(rc)}
    w, s, x, tg = kv(f"{d}/stdout"), kv(f"{d}/runstat"), kv(f"{d}/extra"), kv(f"{d}/target")
    r["touch_ms"], r["wall_ms"], r["target_ms"] = num(w, "touch_ms"), num(s, "wall_ms"), num(tg, "wall_ms")
    r["faults"], r["pages"] = num(w, "minflt_total"), num(w, "pages")
    r["tool"] = x.get("tool")
    r["mib"] = int(x.get("mib", MIB))
    r["cpu_ms"], r["rss_kib"] = num(s, "self_cpu_ms"), num(s, "self_maxrss_kib")
    r["out_bytes"] = num(x, "out_bytes") if x.get("out_files", "0") != "0" else None
    r["samples"] = r["growth_pct"] = r["lost"] = r["perf_lost_pct"] = None
    so, se = text(f"{d}/stdout"), text(f"{d}/stderr")
    if r["tool"] == "memphase":
        m = re.search(r"^stacks: (\d+) samples carry ([\d.]+)% of the RSS growth; (\d+) lost", so, re.M)
        if m:
            r["samples"], r["growth_pct"], r["lost"] = int(m[1]), float(m[2]), int(m[3])
    elif r["tool"] == "perf":
        m = re.search(r"Captured and wrote [\d.]+ MB .*\((\d+) samples\)", se)
        if m:
            r["samples"] = int(m[1])
        m = re.search(r"Processed (\d+) samples and lost ([\d.]+)%", se)
        r["perf_lost_pct"] = float(m[2]) if m else 0.0
        r["lost"] = int(m[1]) - (r["samples"] or 0) if m else 0
    st = bpf_stats(f"{d}/stderr")
    r["st"] = st
    r["ns_fault"] = r["ns_traced"] = r["ns_all"] = r["sp_nsrun"] = None
    if st and r["faults"]:
        fp_ns = sum(st[p][1] for p in fault_progs if p in st)
        r["ns_fault"] = fp_ns / r["faults"]
        r["ns_all"] = sum(v[1] for v in st.values()) / r["faults"]
        if st.get(fault_progs[0], (0,))[0]:
            r["ns_traced"] = fp_ns / st[fault_progs[0]][0]
        if st.get(sample_prog, (0,))[0]:
            r["sp_nsrun"] = st[sample_prog][1] / st[sample_prog][0]
    runs.append(r)

def f0(v, suffix=""):
    return "-" if v is None else f"{v:.0f}{suffix}"

def fx(v):
    return "-" if v is None else f"{v:.2f}x"

def fpct(v, nd=1):
    return "-" if v is None else f"{v:.{nd}f}%"

def fbytes(v):
    if v is None:
        return "-"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= div:
            return f"{v / div:.1f} {unit}"
    return f"{v:.0f} B"

meas = [r for r in runs if r["round"] >= 1 and r["rc"] == 0]
by = {c: [r for r in meas if r["cfg"] == c] for c, _ in configs}
base = by.get("baseline") or []
B = {k: med(r[k] for r in base) for k in ("touch_ms", "target_ms", "wall_ms", "pages")}
scaled = {c for c, _ in configs if by[c] and any(r["mib"] != MIB for r in by[c])}

def ratio(c, key):
    """median ratio to the baseline; per 4 KiB page when the configuration ran at another size"""
    rs, b = by[c], B.get(key)
    if not rs or not b:
        return None
    if c in scaled:
        if not B["pages"]:
            return None
        v = med(r[key] / r["pages"] for r in rs if r[key] is not None and r["pages"])
        return None if v is None else v / (b / B["pages"])
    v = med(r[key] for r in rs)
    return None if v is None else v / b

# BPF time per stack sample: the sampling program's extra run time over the none mode, i.e. its
# run time minus its runs priced at the none mode's median ns/run, divided by the samples.
none_nsrun = med(r["sp_nsrun"] for r in by.get("memphase_none", []))
for r in runs:
    r["ns_sample"] = r["extra_ns_fault"] = None
    if none_nsrun is not None and r["samples"] and r["tool"] == "memphase" and sample_prog in r["st"]:
        runs_, ns = r["st"][sample_prog]
        extra = ns - runs_ * none_nsrun
        r["ns_sample"] = extra / r["samples"]
        if r["faults"]:
            r["extra_ns_fault"] = extra / r["faults"]

print()
print(f"memphase overhead benchmark: touch {MIB} MiB in 4 KiB pages ({MIB * 256} faults); "
      f"{env.get('cpus', '?')} CPUs, kernel {env.get('kernel', '?')}, loadavg at start "
      f"{env.get('load_start', '?')}, at end {env.get('load_end', '?')}; {env.get('elapsed_s', '?')} s")
print(f"memphase binary: {env.get('memphase', '?')}")
print()
print("Runs (warm-up rounds are <= 0 and not counted):")
print(f"{'round':>5} {'config':<17} {'MiB':>5} {'touch ms':>9} {'target ms':>9} {'wall ms':>8} {'faults':>7} "
      f"{'tool cpu%':>9} {'tool maxRSS':>11} {'BPF ns/flt':>10} {'samples':>7} {'output':>10} {'rc':>3}")
for r in runs:
    tool = r["tool"] is not None
    pct = (100 * r["cpu_ms"] / r["wall_ms"]) if tool and r["cpu_ms"] is not None and r["wall_ms"] else None
    rss = f"{r['rss_kib'] / 1024:.1f} MiB" if tool and r["rss_kib"] is not None else "-"
    print(f"{r['round']:>5} {r['cfg']:<17} {r['mib']:>5} {f0(r['touch_ms']):>9} {f0(r['target_ms']):>9} "
          f"{f0(r['wall_ms']):>8} {f0(r['faults']):>7} {fpct(pct):>9} {rss:>11} {f0(r['ns_fault']):>10} "
          f"{f0(r['samples']):>7} {fbytes(r['out_bytes']):>10} {r['rc']:>3}")

star = lambda c: "*" if c in scaled else " "
print()
print("Time (medians of the measured rounds; x = ratio to the baseline's median):")
print(f"{'config':<17} {'n':>2} {'MiB':>5} {'touch ms':>9} {'touch x':>8} {'TARGET wall':>11} "
      f"{'TARGET x':>9} {'TOOL wall':>9} {'TOOL x':>8} {'tool wall range':>15} {'tool outside target':>19}")
for c, _ in configs:
    rs = by[c]
    walls = [r["wall_ms"] for r in rs if r["wall_ms"] is not None]
    rng = f"{min(walls):.0f}-{max(walls):.0f}" if walls else "-"
    outside = med(r["wall_ms"] - r["target_ms"] for r in rs
                  if r["wall_ms"] is not None and r["target_ms"] is not None)
    mib = med(r["mib"] for r in rs)
    print(f"{c:<17} {len(rs):>2} {f0(mib):>5} {f0(med(r['touch_ms'] for r in rs)):>9} "
          f"{fx(ratio(c, 'touch_ms')) + star(c):>8} {f0(med(r['target_ms'] for r in rs)):>11} "
          f"{fx(ratio(c, 'target_ms')) + star(c):>9} {f0(med(r['wall_ms'] for r in rs)):>9} "
          f"{fx(ratio(c, 'wall_ms')) + star(c):>8} {rng:>15} {f0(outside):>19}")

print()
print("Cost (medians; tool = the tool's own process, the workload excluded):")
print(f"{'config':<17} {'tool cpu ms':>11} {'tool cpu%':>9} {'tool maxRSS':>11} {'BPF ns/fault':>12} "
      f"{'all progs':>9} {sample_prog + ' ns/run':>22} {'samples':>7} {'lost':>9} "
      f"{'BPF ns/sample':>13} {'(ns/fault)':>10} {'output':>10} {'output B':>11}")
for c, _ in configs:
    rs = by[c]
    tool = [r for r in rs if r["tool"]]
    pct = med(100 * r["cpu_ms"] / r["wall_ms"] for r in tool if r["cpu_ms"] is not None and r["wall_ms"])
    rss = max((r["rss_kib"] for r in tool if r["rss_kib"] is not None), default=None)
    lost = med(r["lost"] for r in rs)
    plost = med(r["perf_lost_pct"] for r in rs)
    lost_s = "-" if lost is None else (f"{lost:.0f}" if plost is None else f"{plost:.1f}%")
    ob = med(r["out_bytes"] for r in rs)
    print(f"{c:<17} {f0(med(r['cpu_ms'] for r in tool)):>11} {fpct(pct):>9} "
          f"{'-' if rss is None else f'{rss / 1024:.1f} MiB':>11} {f0(med(r['ns_fault'] for r in rs)):>12} "
          f"{f0(med(r['ns_all'] for r in rs)):>9} {f0(med(r['sp_nsrun'] for r in rs)):>22} "
          f"{f0(med(r['samples'] for r in rs)):>7} {lost_s:>9} {f0(med(r['ns_sample'] for r in rs)):>13} "
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
both columns are printed.
Tool cpu / maxRSS = the tool's own process only (its child, the workload, excluded), read at its
exit stop by runstat from /proc/PID/{{schedstat,status}}; tool cpu% = tool cpu / TOOL wall, in % of
one core (perf: its main process; the kernel's work of writing samples runs in the workload).
BPF ns/fault = run time of the fault-path programs ({' + '.join(fault_progs)}), from the kernel's
BPF_STATS_RUN_TIME counters, divided by the faults the workload itself made (its ru_minflt, start-up
included). The counters are system-wide (the programs run for every fault on the machine and filter
by target in BPF), so this charges the cost of the filtered-out events, other processes' faults
included, to the workload: an upper bound of the cost per target fault. 'all progs' divides all
memphase programs' run time by the same faults. With --bpf-stats on, every program run also pays
the kernel's two clock reads.
BPF ns/sample = {sample_prog}'s extra run time over the none mode, divided by the stack samples:
its run time minus its runs priced at memphase_none's median ns/run ({f0(none_nsrun)} ns), so that
other processes' events, whose number varies from run to run, cancel out. It covers everything the
stack modes add to that program: the sample itself (fp: bpf_get_stack; dwarf: registers and up to
the stack's end copied into the ring buffer) and the per-fault accounting that decides when to
sample (growth per thread, and the rate cap's check on every fault once a sample is due and capped);
'(ns/fault)' is the same extra time per fault of the workload. It is a difference of two noisy
system-wide totals: read it as an order of magnitude.
samples: memphase's 'stacks: N samples' summary line; perf's written samples ('lost' for perf is the
share of samples it reported lost: its ring buffer overflowed). output = memphase: the sum of its
--folded/--perf-data/--svg files; perf: its perf.data (the file perf wrote: larger had it lost none).
""".rstrip())

if scaled:
    for c in sorted(scaled):
        mib = med(r["mib"] for r in by[c])
        why = env.get("perf_dwarf_reason") if c == "perf_dwarf" else ""
        print(f"\n* {c} RAN AT {mib:.0f} MiB, NOT {MIB} MiB ({why or 'reduced'}): its "
              f"time ratios compare\n  its time PER FAULT (per 4 KiB page touched) with the baseline's "
              f"(which ran at {MIB} MiB), so its fixed\n  start-up and exit costs weigh more than at "
              f"{MIB} MiB; its output size below is extrapolated linearly to {MIB} MiB\n  "
              f"(perf writes one sample per fault).")

def out_at_mib(c):
    """median output bytes of c, extrapolated to MIB when it ran at another size"""
    vals = [r["out_bytes"] * (MIB / r["mib"] if c in scaled else 1) for r in by.get(c, [])
            if r["out_bytes"] is not None]
    return med(vals)

print()
print("Budgets:")
dw = "memphase_dwarf"
if by.get(dw) and B["target_ms"]:
    tx, wx = ratio(dw, "target_ms"), ratio(dw, "wall_ms")
    print(f"dwarf: target wall {fx(tx)} (budget {BUDGET_WALL:.2f}x)  [{dw}, median of {len(by[dw])} vs "
          f"{len(base)} baseline runs; {'within' if tx is not None and tx <= BUDGET_WALL else 'OVER'} "
          f"budget; memphase's own wall, start-up and detach included: {fx(wx)}; touch loop: "
          f"{fx(ratio(dw, 'touch_ms'))}]")
md, pd = out_at_mib(dw), out_at_mib("perf_dwarf")
if md is not None and pd:
    pct = 100 * md / pd
    note = (f"perf_dwarf extrapolated from {med(r['mib'] for r in by['perf_dwarf']):.0f} MiB"
            if "perf_dwarf" in scaled else f"both at {MIB} MiB")
    print(f"dwarf output / perf dwarf output: {pct:.3f}% (budget {BUDGET_OUT_PCT:g}%)  [{fbytes(md)} / "
          f"{fbytes(pd)}, medians, {note}; {'within' if pct <= BUDGET_OUT_PCT else 'OVER'} budget]")
nn = med(r["ns_fault"] for r in by.get("memphase_none", []))
if nn is not None:
    print(f"BPF ns/fault (none mode): {nn:.0f} (budget {BUDGET_NS})  [memphase_none, median of "
          f"{len(by['memphase_none'])}; {'within' if nn <= BUDGET_NS else 'OVER'} budget; per traced "
          f"fault system-wide: {f0(med(r['ns_traced'] for r in by['memphase_none']))}]")
for c, _ in configs:
    v = med(r["ns_fault"] for r in by[c])
    if v is not None and c != "memphase_none":
        print(f"BPF ns/fault on the fault path: {v:.0f} (budget {BUDGET_NS})  [{c}, median of "
              f"{len(by[c])}; {'within' if v <= BUDGET_NS else 'OVER'} budget; per traced fault "
              f"system-wide: {f0(med(r['ns_traced'] for r in by[c]))}]")
print()
for c, _ in configs:
    if c != "baseline" and by[c]:
        print(f"{c:<17} TARGET wall {fx(ratio(c, 'target_ms'))}{star(c)} TOOL wall "
              f"{fx(ratio(c, 'wall_ms'))}{star(c)} touch loop {fx(ratio(c, 'touch_ms'))}{star(c)}"
              f"  (median of {len(by[c])} vs {len(base)} baseline runs)")
PY
}

# summarize_live: the summary of the live-view section
summarize_live() {
	BENCH_SCRIPTS="$ROOT/scripts" python3 - "$OUT" <<'PY'
import os, statistics, sys

out = sys.argv[1]
BUDGET_CPU_PCT, BUDGET_RSS_MIB, SKIP_MS = 2.0, 64, 1000

sys.path.insert(0, os.environ["BENCH_SCRIPTS"])
from benchlib import kv, med, num  # noqa: E402

def samples(path):
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
        pass
    return rows

def steady(rows, r):
    """memphase's CPU over the steady-state window: from the first sample at or after both
    SKIP_MS and the workload's resumption (its child no longer stopped) to the last sample with
    the workload alive; ns-exact schedstat when memphase had one thread all along, else
    utime+stime (10 ms ticks)"""
    alive = [x for x in rows if x["child"] and x["state"] not in "ZX-"]
    running = [x for x in alive if x["state"] not in "Tt"]
    if not running:
        return
    r["startup_ms"] = running[0]["t"]
    r["startup_first"] = running[0] is rows[0]
    r["target_ms"] = alive[-1]["t"] - running[0]["t"]
    r["exit_ms"] = (r["wall_ms"] - alive[-1]["t"]) if r["wall_ms"] is not None else None
    start = max(SKIP_MS, running[0]["t"])
    win = [x for x in rows if start <= x["t"] <= alive[-1]["t"]]
    if len(win) < 2 or win[-1]["t"] - win[0]["t"] < 1000:
        return
    src = "sched" if all(x["threads"] == 1 for x in win) else "stat"
    r["win_s"] = (win[-1]["t"] - win[0]["t"]) / 1e3
    r["win_from_s"] = win[0]["t"] / 1e3
    r["steady_cpu_ms"] = win[-1][src] - win[0][src]
    r["steady_pct"] = 100 * r["steady_cpu_ms"] / (win[-1]["t"] - win[0]["t"])
    r["steady_src"] = src

env = kv(os.path.join(out, "env"))
configs = [l.rstrip("\n").split("\t", 1) for l in open(os.path.join(out, "live-configs.tsv"))]
runs = []
for line in open(os.path.join(out, "live-runs.tsv")):
    rnd, cfg, d, rc = line.rstrip("\n").split("\t")
    x, ls, tg = kv(f"{d}/extra"), kv(f"{d}/livestat"), kv(f"{d}/target")
    r = {"round": int(rnd), "cfg": cfg, "rc": int(rc), "tool": x.get("tool") == "memphase",
         "tui": x.get("tui"), "target_ms": num(tg, "wall_ms"), "wall_ms": num(ls, "wall_ms"),
         "cpu_ms": None, "pct": None, "rss_kib": None, "startup_ms": None, "exit_ms": None,
         "win_s": None, "win_from_s": None, "steady_cpu_ms": None, "steady_pct": None,
         "steady_src": None, "startup_first": False}
    if r["tool"]:
        # whole run: utime+stime at the exit stop counts every thread, exited ones too, in 10 ms
        # ticks; the schedstat sum is ns-exact but misses exited threads: both are lower bounds
        c = [v for v in (num(ls, "stat_cpu_ms"), num(ls, "sched_cpu_ms")) if v is not None]
        r["cpu_ms"] = max(c) if c else None
        if r["cpu_ms"] is not None and r["wall_ms"]:
            r["pct"] = 100 * r["cpu_ms"] / r["wall_ms"]
        # VmHWM comes from the approximate per-CPU RSS counters: keep the max of the exit value
        # and the polled ones
        h = [v for v in (num(ls, "self_maxrss_kib"), num(ls, "polled_maxrss_kib")) if v and v > 0]
        r["rss_kib"] = max(h) if h else None
        steady(samples(f"{d}/samples.tsv"), r)
    runs.append(r)

def f0(v):
    return "-" if v is None else f"{v:.0f}"

def f1(v):
    return "-" if v is None else f"{v:.1f}"

def fpct(v):
    return "-" if v is None else f"{v:.2f}%"

def fmib(kib):
    return "-" if kib is None else f"{kib / 1024:.1f}"

ok = [r for r in runs if r["rc"] == 0 and not (r["cfg"] == "live_tui" and r["tui"] != "1")]
by = {c: [r for r in ok if r["cfg"] == c] for c, _ in configs}
alone = med(r["target_ms"] for r in by.get("live_alone", []))

print()
print(f"memphase live-view benchmark: {env.get('live_rounds', '?')} interleaved rounds, no warm-up; "
      f"{env.get('cpus', '?')} CPUs, kernel {env.get('kernel', '?')}, loadavg at start "
      f"{env.get('live_load_start', '?')}, at end {env.get('live_load_end', '?')}; "
      f"{env.get('live_elapsed_s', '?')} s")
print(f"workload: llama-driver --model F({env.get('live_model_mib', '?')} MiB) {env.get('live_args', '?')}")
print(f"terminal: {env.get('live_term', '?')}; memphase binary: {env.get('memphase', '?')}")
print()
print("Runs (memphase = its own process only; the workload and script excluded):")
print(f"{'round':>5} {'config':<11} {'rc':>3} {'tui':>4} {'workload ms':>11} {'memphase ms':>11} "
      f"{'start-up ms':>11} {'exit ms':>7} {'cpu ms':>7} {'cpu% whole':>10} {'window s':>12} "
      f"{'cpu ms':>7} {'cpu% steady':>11} {'peak RSS MiB':>12}")
for r in runs:
    win = "-" if r["win_s"] is None else f"{r['win_from_s']:.1f}+{r['win_s']:.1f}"
    su = f"<{int(r['startup_ms'])}" if r["startup_first"] else f0(r["startup_ms"])
    wl = ("~" if r["tool"] and r["target_ms"] is not None else "") + f0(r["target_ms"])
    tui = {"1": "yes", "0": "no"}.get(r["tui"], "-")
    if r["cfg"] == "live_tui" and r["tui"] != "1":
        tui = "NO!"
    print(f"{r['round']:>5} {r['cfg']:<11} {r['rc']:>3} {tui:>4} {wl:>11} "
          f"{f0(r['wall_ms']):>11} {su:>11} {f0(r['exit_ms']):>7} {f0(r['cpu_ms']):>7} "
          f"{fpct(r['pct']):>10} {win:>12} {f1(r['steady_cpu_ms']):>7} {fpct(r['steady_pct']):>11} "
          f"{fmib(r['rss_kib']):>12}")
bad = [r for r in runs if r["cfg"] == "live_tui" and r["tui"] != "1"]
if bad:
    print(f"WARNING: the live view did not engage in {len(bad)} live_tui run(s) (no alternate screen "
          f"in their tty output): left out of the medians")

print()
print("Medians:")
print(f"{'config':<11} {'n':>2} {'workload ms':>11} {'vs alone':>8} {'memphase ms':>11} {'cpu% whole':>10} "
      f"{'cpu% steady':>11} {'steady range':>15} {'peak RSS MiB':>12} {'RSS range':>11}")
for c, _ in configs:
    rs = by[c]
    tw = med(r["target_ms"] for r in rs)
    sp = [r["steady_pct"] for r in rs if r["steady_pct"] is not None]
    rss = [r["rss_kib"] for r in rs if r["rss_kib"] is not None]
    print(f"{c:<11} {len(rs):>2} {f0(tw):>11} "
          f"{'-' if tw is None or not alone else f'{tw / alone:.2f}x':>8} "
          f"{f0(med(r['wall_ms'] for r in rs)):>11} {fpct(med(r['pct'] for r in rs)):>10} "
          f"{fpct(med(sp)):>11} {(f'{min(sp):.2f}-{max(sp):.2f}%' if sp else '-'):>15} "
          f"{fmib(med(rss)):>12} {(f'{min(rss) / 1024:.1f}-{max(rss) / 1024:.1f}' if rss else '-'):>11}")
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
over the window 'from+length' (s): from the first sample at or after {SKIP_MS / 1000:g} s and after
the workload was resumed, to the last sample with the workload alive (so BPF load/attach and the
exit are outside it); ns-exact schedstat when memphase had a single thread over the window (else
utime+stime in 10 ms ticks). All in % of one core. peak RSS = VmHWM of memphase's process at its
exit stop (or the largest polled, when larger: the kernel's RSS counters are approximate).
live_notui runs on the same pseudo-terminal with --no-tui, so the difference to live_tui is the
live view's cost (ncurses screen updates, 4 a second) over the status line's.
""".rstrip())

print()
print("Budgets of the live view:")
t = by.get("live_tui", [])
st, wh = med(r["steady_pct"] for r in t), med(r["pct"] for r in t)
if st is not None:
    print(f"live view CPU: {st:.2f}% of one core (budget {BUDGET_CPU_PCT:g}%)  [live_tui, steady state, median "
          f"of {len(t)}; {'within' if st < BUDGET_CPU_PCT else 'OVER'} budget; whole run, BPF load/attach "
          f"and detach included: {fpct(wh)}]")
else:
    print("live view CPU: - (no usable live_tui run)")
rss = med(r["rss_kib"] for r in t)
if rss is not None:
    mx = max(r["rss_kib"] for r in t if r["rss_kib"] is not None)
    print(f"memphase peak RSS: {rss / 1024:.1f} MiB (budget {BUDGET_RSS_MIB} MiB)  [live_tui, VmHWM, median of "
          f"{len(t)}, max {mx / 1024:.1f} MiB; {'within' if rss < BUDGET_RSS_MIB * 1024 else 'OVER'} budget]")
else:
    print("memphase peak RSS: - (no usable live_tui run)")
n = by.get("live_notui", [])
if n:
    ns_, nw = med(r["steady_pct"] for r in n), med(r["pct"] for r in n)
    print(f"for comparison, --no-tui: CPU {fpct(ns_)} steady, {fpct(nw)} whole run; peak RSS "
          f"{fmib(med(r['rss_kib'] for r in n))} MiB  [live_notui, median of {len(n)}]")
    if st is not None and ns_ is not None:
        print(f"live view's own cost over the status lines: {st - ns_:+.2f} points of one core (steady state)")
PY
}

main() {
	local cfg r i n failed=0 t0
	if [[ -n ${BENCH_REPORT:-} ]]; then
		OUT=$BENCH_REPORT
		[[ (-f $OUT/runs.tsv || -f $OUT/live-runs.tsv) && -f $OUT/env ]] || die "$OUT holds no benchmark run"
		summarize
		exit 0
	fi
	((${#CONFIGS[@]} + ${#LIVE_CONFIGS[@]})) || die "no configuration selected (BENCH_CONFIGS, BENCH_LIVE)"
	[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "BENCH_ROUNDS must be a positive integer"
	[[ $MIB =~ ^[0-9]+$ && $MIB -ge 1 ]] || die "BENCH_MIB must be a positive integer"
	[[ $LIVE_ROUNDS =~ ^[0-9]+$ && $LIVE_ROUNDS -ge 1 ]] || die "BENCH_LIVE_ROUNDS must be a positive integer"
	[[ $LIVE_COLS =~ ^[0-9]+$ && $LIVE_ROWS =~ ^[0-9]+$ ]] || die "BENCH_LIVE_COLS/ROWS must be integers"
	for cfg in "${CONFIGS[@]}" "${LIVE_CONFIGS[@]}"; do
		declare -F "cfg_$cfg" >/dev/null || die "unknown configuration '$cfg'"
		if [[ $cfg == perf_* ]] && ! command -v "$PERF" >/dev/null; then
			die "configuration $cfg needs perf (Debian: linux-perf), or set PERF=PATH"
		fi
		if [[ $cfg == live_* ]] && ! command -v script >/dev/null; then
			die "configuration $cfg needs script(1) (Debian: bsdutils)"
		fi
	done
	command -v python3 >/dev/null || die "python3 is needed for the statistics"
	build
	mkdir -p "$OUT" || die "cannot create $OUT"
	perf_dwarf_size
	: >"$OUT/runs.tsv"
	: >"$OUT/live-runs.tsv"
	for cfg in "${CONFIGS[@]}"; do
		printf '%s\t%s\n' "$cfg" "$("desc_$cfg")"
	done >"$OUT/configs.tsv"
	for cfg in "${LIVE_CONFIGS[@]}"; do
		printf '%s\t%s\n' "$cfg" "$("desc_$cfg")"
	done >"$OUT/live-configs.tsv"
	{
		echo "mib=$MIB"
		echo "perf_dwarf_mib=$PERF_DWARF_MIB"
		echo "perf_dwarf_reason=$PERF_DWARF_REASON"
		echo "cpus=$(nproc)"
		echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
		echo "memphase=$MEMPHASE"
		echo "kernel=$(uname -r)"
		echo "live_args=$LIVE_ARGS"
		echo "live_model_mib=$LIVE_MODEL_MIB"
		echo "live_rounds=$LIVE_ROUNDS"
		echo "live_term=${LIVE_COLS}x$LIVE_ROWS pseudo-terminal from script(1), TERM=xterm-256color"
	} >"$OUT/env"

	n=${#CONFIGS[@]}
	t0=$SECONDS
	if ((n)); then
		echo "memphase overhead benchmark: touch $MIB MiB in 4 KiB pages; $WARMUP warm-up + $ROUNDS" \
			"interleaved rounds of: ${CONFIGS[*]}; raw output in $OUT" >&2
		for ((r = 1 - WARMUP; r <= ROUNDS; r++)); do
			# rotate the order every round so no configuration always runs first
			for ((i = 0; i < n; i++)); do
				cfg=${CONFIGS[$(((i + r + n * WARMUP) % n))]}
				run_one "$r" "$cfg" || failed=1
			done
		done
	fi
	{
		echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
		echo "elapsed_s=$((SECONDS - t0))"
	} >>"$OUT/env"

	n=${#LIVE_CONFIGS[@]}
	if ((n)); then
		t0=$SECONDS
		echo "live_load_start=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/env"
		echo "memphase live-view benchmark: llama-driver $LIVE_ARGS; $LIVE_ROUNDS interleaved rounds" \
			"of: ${LIVE_CONFIGS[*]}; raw output in $OUT/live-*" >&2
		for ((r = 1; r <= LIVE_ROUNDS; r++)); do
			for ((i = 0; i < n; i++)); do
				run_live_one "$r" "${LIVE_CONFIGS[$(((i + r) % n))]}" || failed=1
			done
		done
		{
			echo "live_load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
			echo "live_elapsed_s=$((SECONDS - t0))"
		} >>"$OUT/env"
	fi
	summarize
	if ((failed)); then
		echo "bench.sh: some runs failed (see above); their rows are left out of the summary" >&2
		exit 1
	fi
	exit 0
}

main "$@"
