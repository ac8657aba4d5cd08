#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# memphase overhead benchmark (a benchmark, not a test: it never fails on numbers).
#
# Workload: scripts/touch.c touches BENCH_MIB MiB of anonymous memory in 4 KiB pages
# (MADV_NOHUGEPAGE), one fault per page, and reports its own touch-loop time and minor faults.
# Every configuration runs that workload once per round. The rounds are interleaved and the
# order of the configurations rotates from round to round, because a VM's timing is noisy (a
# first touch costs 1.4 us warm, 11-14 us after the host reclaimed the guest's free pages); the
# first BENCH_WARMUP rounds are run and thrown away.
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
# This script only runs things. The summaries are made by scripts/bench_report.py from the files
# of each run: memphase's --json (every memphase configuration writes DIR/out.json; the BPF
# figures are its bpf_stats, the samples its phases' stacks), the key=value files of touch,
# runstat and livestat, and perf's stderr. Its readers and statistics (medians, ratios to the
# baseline, BPF ns per fault and per sample) are in scripts/benchlib.py, tested by
# tests/integration/test_benchlib.py. A figure missing from a run that should have it stops the
# summary with an error naming the file and the key, and bench.sh exits 1; 'n/a' in a table only
# means that the figure does not apply to the configuration.
#
# Configurations (BENCH_CONFIGS, default all of them, in this order):
#   baseline           touch alone
#   floor_classic      the floor of memphase's fault-path design: scripts/floor/ loads trivial
#                      programs on memphase's tracepoints, tp_btf/page_fault_user and the
#                      classic tp/kmem/rss_stat, that only find the target (its tgid's slot in an
#                      array, as memphase's target_lookup()) and count in a per-CPU counter,
#                      with BPF stats on; the workload runs under it as under memphase. memphase's
#                      BPF ns/fault is reported beside it (difference and ratio, round by round):
#                      absolute ns per fault swing 2-3x between days on this VM, the distance to
#                      a floor measured in the same run does not
#   floor_btf          the same with tp_btf/rss_stat (approximate counter) instead of the classic
#   floor_hops, floor_t2, floor_t8   floor_btf on touch MIB hops / threads 2 / threads 8: what
#                      hops or threads add to any program on these tracepoints (cold lines,
#                      the other CPU), so that memphase's own part of it can be told apart
#   onetp              past the floor, the one-tracepoint design: scripts/onetp/ (time mode) with
#                      only tp_btf/page_fault_user (and page_fault_kernel) attached, no rss_stat:
#                      at each target fault it reads the exact RSS counters (this CPU's part of
#                      the mm's 4 counters, every part when a fold moved a count) and charges
#                      their change since this CPU's last fault to that fault's 2 MiB bucket
#                      (a per-CPU batch); its loop and BPF ns/fault are reported beside the
#                      floors' (scripts/onetp/run.sh measures its exactness)
#   onetp_sum, onetp_t8   (not in the default set) the same reading the whole sum at every
#                      fault, charged to the thread's previous fault; the design with touch
#                      MIB threads 8 (its loop against baseline_t8)
#   onetp_hops, onetp_vma, onetp_vma_hops   (not in the default set) the design on touch MIB
#                      hops (its loop against baseline_hops); charging per VMA (onetp -V: the
#                      VMA looked up with bpf_find_vma in the fault program, interrupts off,
#                      when the address charged is outside the CPU's last VMA), on one
#                      mapping and on hops
#   memphase           memphase run --bpf-stats (default mode: --stacks dwarf, no exports)
#   memphase_noorigins the same with --origin-min 0: no mapping origins (their cost is the
#                      difference; they are taken at mmap time, so the fault path must not move)
#   memphase_nostats   the same without --bpf-stats
#   memphase_none      --stacks none
#   memphase_fp        --stacks fp --folded F
#   memphase_dwarf     --stacks dwarf --folded F --perf-data F2 --svg F3 (all exports)
#   perf_fp            perf record -e page-faults -c 1 -g
#   perf_dwarf         perf record -e page-faults -c 1 --call-graph dwarf (GBs at 1 GiB, see below)
#   bpftrace_count     bpftrace counting the workload's faults (page_fault_user, filtered by
#                      comm): the simplest BPF observer, for scale
#   baseline_hops      touch MIB hops alone: the same pages as MIB * 16 mappings of 64 KiB, every
#                      fault in another mapping than the one before
#   memphase_hops      memphase run --bpf-stats --stacks none -- touch MIB hops: its BPF ns/fault
#                      is reported beside memphase_none's (one mapping), as a ratio and a difference
#   memphase_inter3    memphase run --bpf-stats --stacks none -- touch MIB interleave 3: faults that
#                      alternate between 3 large mappings (as llama.cpp's between its model file, KV
#                      cache and compute buffers): its BPF ns/fault beside memphase_none's
#   memphase_bystander touch MIB alone, not observed, while a memphase run --bpf-stats -- sleep
#                      watches another process: the system-wide cost of its tracepoints for
#                      bystanders (loop ratio to baseline; BPF ns per fault traced and filtered)
#   floor_bystander_classic, floor_bystander_btf   the same as memphase_bystander with the floor
#                      (classic or tp_btf rss_stat) watching the sleep: what the tracepoints
#                      themselves cost the other processes
#   memphase_python    memphase run -- python3 (the first in PATH: a pyenv shim chain execs ~40
#                      processes) allocating 200 MiB in 1 MiB steps: memphase's own peak RSS on
#                      a Python target, beside the C target's (its touch figures do not apply)
#   baseline_t2, baseline_t8   touch MIB threads N alone: N threads fault at once, each in its
#                      slice of the one mapping
#   memphase_t2, memphase_t8   memphase run --bpf-stats --stacks none -- touch MIB threads N:
#                      loop ratio (to baseline_tN), BPF ns/fault beside memphase_none's (1 thread)
#
# Environment:
#   BENCH_ROUNDS=7      measured rounds (at least 5 for the medians the issues ask for; the default
#                       run takes ~4 minutes)
#   BENCH_MIB=1024      MiB the workload touches
#   BENCH_WARMUP=1      rounds run first and discarded
#   BENCH_SETTLE=1      seconds to sleep between runs (lets the previous run's teardown finish)
#   BENCH_CONFIGS="baseline memphase ..."                configurations, in this order
#   BENCH_FAULT_PROGS="handle_fault handle_fault_kernel handle_rss_stat*"
#                       memphase's BPF programs that run per page fault: names or fnmatch
#                       patterns, each of which must match a program in memphase's bpf_stats
#                       (handle_rss_stat*: on the classic tracepoint, on tp_btf, or both); the
#                       first one's runs count the faults traced. The floors' own pair is named
#                       in their output.
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
#   BPFTRACE=PATH       bpftrace binary (default: bpftrace from PATH)
#   BENCH_PYTHON=PATH   memphase_python's interpreter (default: python3 from PATH, e.g.
#                       ~/.pyenv/shims/python3: run with sudo -E or set it)
#   BENCH_REPORT=DIR    run nothing: print again the summary of the run whose raw output is in DIR
#
# Adding a configuration: write desc_NAME (prints a one-line description) and cfg_NAME DIR (runs
# the workload once; the run's files go to DIR, see run_wrapped) and add NAME to BENCH_CONFIGS.
#
# Live-view section (BENCH_LIVE=1, the default; a separate set of configurations, run after the
# ones above, in its own rounds, with its own summary below theirs): memphase's own CPU use and
# peak RSS while its full-screen live view runs (the budgets: under 2% of one core at the
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
#
# Engine section (its own configurations and summary, run after the touch ones and before the
# live view; BENCH_ROUNDS interleaved rounds after BENCH_WARMUP, order rotated): what a user of
# the real engine pays. The unmodified llama-server of BENCH_LLAMA_BIN serves tiny-gemma3 on a
# free port, started by scripts/llamarun.py, which times from the command's start to the first
# /health 200 (ready), then sends BENCH_LLAMA_REQUESTS /completion requests one after the other
# (distinct prompts of BENCH_LLAMA_WORDS words, ~5 tokens a word, the same ones in every run;
# BENCH_LLAMA_PREDICT tokens generated each, EOS ignored, byte tokens 131..258 banned), keeps the
# server's own 'timings' of each reply, then sends SIGINT and waits for the exit. The folder and
# the model are copied to a temporary folder any user can read (a file holding only another
# file's name, a symlink stored as text as in ../shared/llama, becomes that symlink). The
# server never runs as root: under sudo it runs as the invoking user (memphase run drops to
# SUDO_UID itself; alone, setpriv drops to the same uid, gid and groups, with the same HOME,
# USER and LOGNAME), started by root itself as BENCH_LLAMA_USER (memphase run --user). Reported:
# medians over the rounds of the prompt and generation tokens/s (each run's tokens over the
# server's own times, all its requests pooled), the time to ready and the model load time (the
# server's log, --log-timestamps: from its log's start, early in main, to 'llama_server: model
# loaded'), alone and under memphase, and memphase's cost as the median of the per-round
# ratios (ready: of the differences), each against its budget: tokens/s within 1%, load
# within 3%, ready within +100 ms. Files per run in DIR: llama (llamarun.py's key=value
# figures), server.log (the server's stdout and stderr), out.json (memphase's --json), stdout
# and stderr (memphase's own; llamarun.py's messages).
#   llama_alone        llama-server -m tiny-gemma3.gguf BENCH_LLAMA_ARGS, alone
#   llama_memphase     memphase run --json F --target-log F2 -- the same (default mode: dwarf
#                      stacks, no exports): what a user pays, the one the budgets read
#   llama_memphase_stats   the same with --bpf-stats, for memphase's BPF ms: the kernel's
#                      run-time statistics add two clock reads to every program run, and the
#                      server's threads make a syscall (futex) every few microseconds while it
#                      generates, so its tokens/s are not what a user pays
# BENCH_CONFIGS may name them (or 'llama' for all three). Without the engine (no llama-server in
# BENCH_LLAMA_BIN, no model, or BENCH_LLAMA_BIN set empty) they are skipped, and the reason
# printed.
#   BENCH_LLAMA_BIN=../shared/llama/bin   the engine's folder (relative to the repository's root)
#   BENCH_LLAMA_MODEL=BENCH_LLAMA_BIN/../models/tiny-gemma3.gguf
#   BENCH_LLAMA_ARGS="-c 16384 --seed 42 -lv 3"   llama-server's flags (-m, --port,
#                       --log-timestamps and --log-prefix are added)
#   BENCH_LLAMA_REQUESTS=4 BENCH_LLAMA_WORDS=800 BENCH_LLAMA_PREDICT=128   (~5 s a run)
#   BENCH_LLAMA_USER=nobody   who the server runs as when root itself (not sudo) runs the bench

set -uo pipefail

if [[ $EUID -ne 0 ]]; then
	echo "bench.sh: must run as root (memphase loads BPF programs and enables BPF stats); try: sudo $0" >&2
	exit 1
fi

# Root itself lets memphase run its command as root (--allow-root); under sudo memphase runs it as
# the invoking user and writes its files as them, into run folders given to them (run_dir).
if [[ -n ${SUDO_UID:-} && $SUDO_UID != 0 ]]; then
	MP_ROOT=()
else
	MP_ROOT=(--allow-root)
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${BENCH_ROUNDS:-7}
MIB=${BENCH_MIB:-1024}
WARMUP=${BENCH_WARMUP:-1}
SETTLE=${BENCH_SETTLE:-1}
ALL_CONFIGS="baseline floor_classic floor_btf floor_hops floor_t2 floor_t8 onetp memphase
	memphase_noorigins memphase_nostats memphase_none memphase_fp memphase_dwarf perf_fp
	perf_dwarf bpftrace_count baseline_hops memphase_hops memphase_inter3 baseline_t2
	memphase_t2 baseline_t8 memphase_t8
	memphase_bystander floor_bystander_classic floor_bystander_btf memphase_python"
ALL_LIVE="live_alone live_tui live_notui"
ALL_LLAMA="llama_alone llama_memphase llama_memphase_stats"
LIVE=${BENCH_LIVE:-1}
LIVE_ROUNDS=${BENCH_LIVE_ROUNDS:-3}
LIVE_ARGS=${BENCH_LIVE_ARGS:---ctx-mib 64 --prompt-batches 4 --batch-mib 16 --tokens 400 --token-kib 256 --sleep-ms 25}
LIVE_COLS=${BENCH_LIVE_COLS:-120}
LIVE_ROWS=${BENCH_LIVE_ROWS:-40}
LIVE_MODEL_MIB=64
LLAMA_BIN=${BENCH_LLAMA_BIN-$(dirname "$ROOT")/shared/llama/bin}
LLAMA_MODEL=${BENCH_LLAMA_MODEL:-$LLAMA_BIN/../models/tiny-gemma3.gguf}
LLAMA_ARGS=${BENCH_LLAMA_ARGS:--c 16384 --seed 42 -lv 3}
LLAMA_REQUESTS=${BENCH_LLAMA_REQUESTS:-4}
LLAMA_WORDS=${BENCH_LLAMA_WORDS:-800}
LLAMA_PREDICT=${BENCH_LLAMA_PREDICT:-128}
LLAMA_COPY=""	# the engine's copy (llama_copy), removed at exit
# CONFIGS: the touch configurations; LIVE_CONFIGS: the live-view ones; LLAMA_CONFIGS: the
# engine's (see the header)
CONFIGS=()
LIVE_CONFIGS=()
LLAMA_CONFIGS=()
for cfg in ${BENCH_CONFIGS:-$ALL_CONFIGS $ALL_LLAMA $ALL_LIVE}; do
	[[ $cfg == live ]] && cfg=$ALL_LIVE
	[[ $cfg == llama ]] && cfg=$ALL_LLAMA
	for c in $cfg; do
		if [[ $c == live_* ]]; then
			[[ $LIVE == 1 ]] && LIVE_CONFIGS+=("$c")
		elif [[ $c == llama_* ]]; then
			LLAMA_CONFIGS+=("$c")
		else
			CONFIGS+=("$c")
		fi
	done
done
unset cfg c
FAULT_PROGS=${BENCH_FAULT_PROGS:-handle_fault handle_fault_kernel handle_rss_stat*}
SAMPLE_PROG=${BENCH_SAMPLE_PROG:-handle_rss_stat}
PERF_DWARF_SMALL_MIB=${BENCH_PERF_DWARF_MIB:-256}
PERF_DWARF_REDUCE=${BENCH_PERF_DWARF_REDUCE:-auto}
KEEP_PERF_DATA=${BENCH_KEEP_PERF_DATA:-0}
MEMPHASE=${MEMPHASE:-$ROOT/build/memphase}
PERF=${PERF:-perf}
BPFTRACE=${BPFTRACE:-bpftrace}
# the python3 a user would run (under sudo, PATH is sudo's: take the invoking user's shell's)
PYTHON=${BENCH_PYTHON:-$(command -v python3)}
BENCH_BIN=$ROOT/build/bench
TOUCH=$BENCH_BIN/touch
RUNSTAT=$BENCH_BIN/runstat
FLOOR=$BENCH_BIN/floor
ONETP=$BENCH_BIN/onetp
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
	cc -O2 -Wall -Wextra -pthread -o "$TOUCH" "$ROOT/scripts/touch.c" || die "building touch failed"
	cc -O2 -Wall -Wextra -o "$RUNSTAT" "$ROOT/scripts/runstat.c" || die "building runstat failed"
	if [[ ! -x $MEMPHASE ]]; then
		make -C "$ROOT" --no-print-directory "$MEMPHASE" || die "building memphase failed"
	fi
	if [[ " ${CONFIGS[*]} " == *" floor_"* ]]; then
		build_floor || die "building the floor (scripts/floor) failed"
	fi
	if [[ " ${CONFIGS[*]} " == *" onetp"* ]]; then
		build_onetp || die "building the one-tracepoint design (scripts/onetp) failed"
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

# build_floor: scripts/floor/ (BPF programs and their loader) into $FLOOR, its intermediate
# files (vmlinux.h, object, skeleton) in $BENCH_BIN/floor-build
build_floor() {
	local b=$BENCH_BIN/floor-build s=$ROOT/scripts/floor
	mkdir -p "$b" || return 1
	if [[ ! -s $b/vmlinux.h ]]; then
		"${BPFTOOL:-bpftool}" btf dump file /sys/kernel/btf/vmlinux format c >"$b/vmlinux.h.tmp" &&
			mv "$b/vmlinux.h.tmp" "$b/vmlinux.h" || return 1
	fi
	"${CLANG:-clang-14}" -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -I"$b" -I"$s" \
		-c "$s/floor.bpf.c" -o "$b/floor.bpf.o" &&
		"${BPFTOOL:-bpftool}" gen skeleton "$b/floor.bpf.o" name floor_bpf >"$b/floor.skel.h" &&
		cc -O2 -Wall -Wextra -Werror -I"$b" -I"$s" -o "$FLOOR" "$s/floor.c" \
			$(pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)
}

# build_onetp: scripts/onetp/ (the one-tracepoint design's programs and loader) into $ONETP,
# its intermediate files in $BENCH_BIN/onetp-build (vmlinux.h shared with the floor's)
build_onetp() {
	local b=$BENCH_BIN/onetp-build s=$ROOT/scripts/onetp
	mkdir -p "$b" "$BENCH_BIN/floor-build" || return 1
	if [[ ! -s $BENCH_BIN/floor-build/vmlinux.h ]]; then
		"${BPFTOOL:-bpftool}" btf dump file /sys/kernel/btf/vmlinux format c \
			>"$BENCH_BIN/floor-build/vmlinux.h.tmp" &&
			mv "$BENCH_BIN/floor-build/vmlinux.h.tmp" "$BENCH_BIN/floor-build/vmlinux.h" || return 1
	fi
	"${CLANG:-clang-14}" -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror \
		-I"$BENCH_BIN/floor-build" -I"$ROOT/scripts/floor" -I"$s" \
		-c "$s/onetp.bpf.c" -o "$b/onetp.bpf.o" &&
		"${BPFTOOL:-bpftool}" gen skeleton "$b/onetp.bpf.o" name onetp_bpf >"$b/onetp.skel.h" &&
		cc -O2 -Wall -Wextra -Werror -I"$b" -I"$ROOT/scripts/floor" -I"$s" -o "$ONETP" \
			"$s/onetp.c" $(pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)
}

# run_wrapped DIR CMD ARGS...: runs CMD under runstat. Files in DIR:
#   stdout, stderr  CMD's output (the touch workload prints touch_ms=, minflt_total=... on stdout;
#                   perf prints its "Captured and wrote ... (N samples)" line on stderr)
#   out.json        memphase's --json (every memphase configuration writes one): the summary
#                   reads its stack samples and, with --bpf-stats, its bpf_stats from it, never
#                   memphase's human summary
#   runstat         wall_ms, self_cpu_ms, self_maxrss_kib... of CMD's own process (scripts/runstat.c)
#   target          the same for the workload, written by the runstat that starts touch (see
#                   target_cmd): its wall_ms is the target's own wall time
#   floor           the floor's figures (scripts/floor/floor.c: its programs' runs and run time,
#                   the target's faults it counted)
#   onetp           the one-tracepoint design's, in the floor's format, and the anon growth it
#                   charged (scripts/onetp/onetp.c, time mode)
#   extra           optional key=value lines from the configuration, read by the summary:
#                   tool=NAME (the wrapped process is the tool: report its CPU and RSS),
#                   bystander=1|floor (the workload runs unobserved while memphase or the
#                   floor watches a sleep),
#                   bpf_stats=1 (memphase ran with --bpf-stats: its JSON must carry them),
#                   mib=N (MiB the workload touched, when it is not BENCH_MIB),
#                   out_bytes=N (size of what the tool wrote), out_files=N
run_wrapped() {
	local dir=$1
	shift
	"$RUNSTAT" "$dir/runstat" -- "$@" >"$dir/stdout" 2>"$dir/stderr"
}

# target_cmd DIR [MIB [hops | threads N]]: sets TARGET_CMD to the workload command: touch MIB under its own
# runstat. memphase runs its command as the invoking user under sudo: DIR/target must be writable
# by them.
target_cmd() {
	local dir=$1 mib=${2:-$MIB}
	local mode=("${@:3}")
	: >"$dir/target"
	if [[ -n ${SUDO_UID:-} ]]; then
		chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$dir/target" 2>/dev/null
	fi
	TARGET_CMD=("$RUNSTAT" "$dir/target" -- "$TOUCH" "$mib" "${mode[@]}")
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

# floor DIR MODE: the floor's programs (MODE: classic or btf rss_stat) on the workload. Unlike
# memphase, the floor runs its command as root (not as the sudo user): a fault costs the same.
# floor_run DIR MODE [hops | threads N]: the floor (MODE classic or btf) on the workload
floor_run() {
	printf 'tool=floor\n' >"$1/extra"
	target_cmd "$1" "$MIB" "${@:3}"
	run_wrapped "$1" "$FLOOR" "$2" "$1/floor" -- "${TARGET_CMD[@]}"
}
desc_floor_classic() {
	echo "floor classic -- touch $MIB (tp_btf/page_fault_user + tp/kmem/rss_stat, lookup + count)"
}
cfg_floor_classic() { floor_run "$1" classic; }
desc_floor_btf() {
	echo "floor btf -- touch $MIB (tp_btf/page_fault_user + tp_btf/rss_stat, lookup + count)"
}
cfg_floor_btf() { floor_run "$1" btf; }
desc_floor_hops() { echo "floor btf -- touch $MIB hops"; }
cfg_floor_hops() { floor_run "$1" btf hops; }
desc_floor_t2() { echo "floor btf -- touch $MIB threads 2"; }
cfg_floor_t2() { floor_run "$1" btf threads 2; }
desc_floor_t8() { echo "floor btf -- touch $MIB threads 8"; }
cfg_floor_t8() { floor_run "$1" btf threads 8; }

# onetp_run DIR "MODE [OPTION...]" [TOUCH-MODE...]: the one-tracepoint design's programs (MODE:
# cpu or sum; onetp's options) on the workload, run as the floor's (as root)
onetp_run() {
	local dir=$1 opts
	read -r -a opts <<<"$2"
	shift 2
	printf 'tool=onetp\n' >"$dir/extra"
	target_cmd "$dir" "$MIB" "$@"
	run_wrapped "$dir" "$ONETP" -m "${opts[@]}" time "$dir/onetp" -- "${TARGET_CMD[@]}"
}
desc_onetp() {
	echo "onetp -m cpu time -- touch $MIB (tp_btf/page_fault_user alone: exact counters read per fault)"
}
cfg_onetp() { onetp_run "$1" cpu; }
desc_onetp_sum() { echo "onetp -m sum time -- touch $MIB (the whole sum read at every fault)"; }
cfg_onetp_sum() { onetp_run "$1" sum; }
desc_onetp_t8() { echo "onetp -m cpu time -- touch $MIB threads 8"; }
cfg_onetp_t8() { onetp_run "$1" cpu threads 8; }
desc_onetp_hops() { echo "onetp -m cpu time -- touch $MIB hops"; }
cfg_onetp_hops() { onetp_run "$1" cpu hops; }
desc_onetp_vma() { echo "onetp -m cpu -V time -- touch $MIB (per VMA: bpf_find_vma in the fault)"; }
cfg_onetp_vma() { onetp_run "$1" "cpu -V"; }
desc_onetp_vma_hops() { echo "onetp -m cpu -V time -- touch $MIB hops"; }
cfg_onetp_vma_hops() { onetp_run "$1" "cpu -V" hops; }

desc_memphase() { echo "memphase run --bpf-stats -- touch $MIB (default mode: dwarf stacks, no exports)"; }
cfg_memphase() {
	printf 'tool=memphase\nbpf_stats=1\n' >"$1/extra"
	target_cmd "$1"
	run_wrapped "$1" "$MEMPHASE" run "${MP_ROOT[@]}" --json "$1/out.json" --bpf-stats -- "${TARGET_CMD[@]}"
}

# Mapping origins off: what they cost is the difference with cfg_memphase, round by round.
desc_memphase_noorigins() { echo "memphase run --bpf-stats --origin-min 0 -- touch $MIB (no origins)"; }
cfg_memphase_noorigins() {
	printf 'tool=memphase\nbpf_stats=1\n' >"$1/extra"
	target_cmd "$1"
	run_wrapped "$1" "$MEMPHASE" run "${MP_ROOT[@]}" --json "$1/out.json" --bpf-stats --origin-min 0 \
		-- "${TARGET_CMD[@]}"
}

# Without --bpf-stats: BPF_STATS_RUN_TIME itself adds two clock reads to every program run.
desc_memphase_nostats() { echo "memphase run -- touch $MIB (default mode, no BPF stats)"; }
cfg_memphase_nostats() {
	echo "tool=memphase" >"$1/extra"
	target_cmd "$1"
	run_wrapped "$1" "$MEMPHASE" run "${MP_ROOT[@]}" --json "$1/out.json" -- "${TARGET_CMD[@]}"
}

desc_memphase_none() { echo "memphase run --bpf-stats --stacks none -- touch $MIB"; }
cfg_memphase_none() {
	printf 'tool=memphase\nbpf_stats=1\n' >"$1/extra"
	target_cmd "$1"
	run_wrapped "$1" "$MEMPHASE" run "${MP_ROOT[@]}" --json "$1/out.json" --bpf-stats --stacks none \
		-- "${TARGET_CMD[@]}"
}

desc_baseline_hops() { echo "touch $MIB hops alone ($((MIB * 16)) mappings of 64 KiB)"; }
cfg_baseline_hops() {
	target_cmd "$1" "$MIB" hops
	run_wrapped "$1" "${TARGET_CMD[@]}"
}

desc_memphase_hops() { echo "memphase run --bpf-stats --stacks none -- touch $MIB hops"; }
cfg_memphase_hops() {
	printf 'tool=memphase\nbpf_stats=1\n' >"$1/extra"
	target_cmd "$1" "$MIB" hops
	run_wrapped "$1" "$MEMPHASE" run "${MP_ROOT[@]}" --json "$1/out.json" --bpf-stats --stacks none \
		-- "${TARGET_CMD[@]}"
}

desc_memphase_inter3() { echo "memphase run --bpf-stats --stacks none -- touch $MIB interleave 3"; }
cfg_memphase_inter3() {
	printf 'tool=memphase\nbpf_stats=1\n' >"$1/extra"
	target_cmd "$1" "$MIB" interleave 3
	run_wrapped "$1" "$MEMPHASE" run "${MP_ROOT[@]}" --json "$1/out.json" --bpf-stats --stacks none \
		-- "${TARGET_CMD[@]}"
}

# baseline_tN / memphase_tN: N threads fault at once (shared state on the fault path shows here)
baseline_threads() {
	target_cmd "$1" "$MIB" threads "$2"
	run_wrapped "$1" "${TARGET_CMD[@]}"
}
memphase_threads() {
	printf 'tool=memphase\nbpf_stats=1\n' >"$1/extra"
	target_cmd "$1" "$MIB" threads "$2"
	run_wrapped "$1" "$MEMPHASE" run "${MP_ROOT[@]}" --json "$1/out.json" --bpf-stats --stacks none \
		-- "${TARGET_CMD[@]}"
}
desc_baseline_t2() { echo "touch $MIB threads 2 alone"; }
cfg_baseline_t2() { baseline_threads "$1" 2; }
desc_memphase_t2() { echo "memphase run --bpf-stats --stacks none -- touch $MIB threads 2"; }
cfg_memphase_t2() { memphase_threads "$1" 2; }
desc_baseline_t8() { echo "touch $MIB threads 8 alone"; }
cfg_baseline_t8() { baseline_threads "$1" 8; }
desc_memphase_t8() { echo "memphase run --bpf-stats --stacks none -- touch $MIB threads 8"; }
cfg_memphase_t8() { memphase_threads "$1" 8; }

desc_memphase_bystander() { echo "touch $MIB alone while memphase run --bpf-stats -- sleep watches"; }
cfg_memphase_bystander() {
	printf 'bystander=1\n' >"$1/extra"
	bystander "$1" int "$MEMPHASE" run "${MP_ROOT[@]}" --no-tui --bpf-stats --json "$1/out.json" \
		-- sleep 3600
}

# bystander DIR STOP WATCHER...: touch alone while WATCHER (a command that ends with
# "-- sleep 3600") watches the sleep; STOP: int (SIGINT to the watcher, memphase) or child
# (end the sleep: the floor writes its figures once its command ends)
bystander() {
	local dir=$1 stop=$2 pid i rc
	shift 2
	"$@" >"$dir/watcher.out" 2>"$dir/watcher.err" &
	pid=$!
	# attached once its command runs: the sleep has exec'd
	for ((i = 0; i < 100; i++)); do
		pgrep -x -P "$pid" sleep >/dev/null && break
		sleep 0.1
	done
	target_cmd "$dir"
	run_wrapped "$dir" "${TARGET_CMD[@]}"
	rc=$?
	if [[ $stop == int ]]; then
		kill -INT "$pid"
	else
		kill $(pgrep -x -P "$pid" sleep)
	fi
	wait "$pid"
	return "$rc"
}

# floor_bystander DIR MODE: touch alone while the floor watches a sleep
floor_bystander() {
	printf 'bystander=floor\n' >"$1/extra"
	bystander "$1" child "$FLOOR" "$2" "$1/floor" -- sleep 3600
}

desc_floor_bystander_classic() { echo "touch $MIB alone while floor classic -- sleep watches"; }
cfg_floor_bystander_classic() { floor_bystander "$1" classic; }
desc_floor_bystander_btf() { echo "touch $MIB alone while floor btf -- sleep watches"; }
cfg_floor_bystander_btf() { floor_bystander "$1" btf; }

desc_memphase_python() { echo "memphase run -- $PYTHON (allocates 200 MiB in 1 MiB steps, 10 ms apart)"; }
cfg_memphase_python() {
	local dir=$1
	printf 'tool=memphase\npython=1\n' >"$dir/extra"
	printf 'import time\nkeep = []\nfor i in range(200):\n    keep.append(bytearray(1 << 20))\n    time.sleep(0.01)\n' \
		>"$dir/alloc.py"
	chmod 644 "$dir/alloc.py"
	: >"$dir/target"
	run_wrapped "$dir" "$MEMPHASE" run "${MP_ROOT[@]}" --json "$dir/out.json" -- "$PYTHON" "$dir/alloc.py"
}

desc_memphase_fp() { echo "memphase run --bpf-stats --stacks fp --folded F -- touch $MIB"; }
cfg_memphase_fp() {
	local dir=$1 rc
	printf 'tool=memphase\nbpf_stats=1\n' >"$dir/extra"
	target_cmd "$dir"
	run_wrapped "$dir" "$MEMPHASE" run "${MP_ROOT[@]}" --json "$dir/out.json" --bpf-stats --stacks fp \
		--folded "$dir/out.folded" -- "${TARGET_CMD[@]}"
	rc=$?
	note_output "$dir" "$dir/out.folded"
	return "$rc"
}

desc_memphase_dwarf() {
	echo "memphase run --bpf-stats --stacks dwarf --folded F --perf-data F2 --svg F3 -- touch $MIB"
}
cfg_memphase_dwarf() {
	local dir=$1 rc
	printf 'tool=memphase\nbpf_stats=1\n' >"$dir/extra"
	target_cmd "$dir"
	run_wrapped "$dir" "$MEMPHASE" run "${MP_ROOT[@]}" --json "$dir/out.json" --bpf-stats --stacks dwarf \
		--folded "$dir/out.folded" --perf-data "$dir/out.perf.data" --svg "$dir/out.svg" \
		-- "${TARGET_CMD[@]}"
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

desc_bpftrace_count() {
	echo "bpftrace -e 'page_fault_user /comm == \"touch\"/ { @ = count() }' -c 'touch $MIB'"
}
cfg_bpftrace_count() {
	printf 'tool=bpftrace\n' >"$1/extra"
	target_cmd "$1"
	run_wrapped "$1" "$BPFTRACE" -e \
		'tracepoint:exceptions:page_fault_user /comm == "touch"/ { @faults = count(); }' \
		-c "${TARGET_CMD[*]}"
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
	printf -v q '%q ' "$LIVESTAT" "$dir/livestat" "$dir/samples.tsv" -- "$MEMPHASE" run "${MP_ROOT[@]}" \
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

# --- engine configurations (see the header) ---------------------------------------------------

# llama_skip: why the engine's configurations cannot run ('' when they can)
llama_skip() {
	if [[ -z $LLAMA_BIN ]]; then
		echo "BENCH_LLAMA_BIN is empty"
	elif [[ ! -f $LLAMA_BIN/llama-server ]]; then
		echo "no llama-server in BENCH_LLAMA_BIN=$LLAMA_BIN (set it to a llama.cpp build's bin folder)"
	elif [[ ! -f $LLAMA_MODEL ]]; then
		echo "no model $LLAMA_MODEL (set BENCH_LLAMA_MODEL)"
	fi
}

# llama_user: sets LLAMA_UID, LLAMA_GID, LLAMA_NAME, LLAMA_HOME (who the server runs as in both
# configurations) and LLAMA_MP_OPTS (memphase's option for it): under sudo the invoking user,
# whom memphase run drops to by itself; started by root itself, BENCH_LLAMA_USER (--user)
llama_user() {
	local u
	if [[ -n ${SUDO_UID:-} && $SUDO_UID != 0 ]]; then
		LLAMA_UID=$SUDO_UID
		LLAMA_GID=${SUDO_GID:-$SUDO_UID}
		LLAMA_MP_OPTS=()
	else
		u=${BENCH_LLAMA_USER:-nobody}
		LLAMA_UID=$(id -u "$u" 2>/dev/null) || die "BENCH_LLAMA_USER: no such user '$u'"
		LLAMA_GID=$(id -g "$u")
		LLAMA_MP_OPTS=(--user "$u")
	fi
	[[ $LLAMA_UID != 0 ]] || die "the engine must not run as root (BENCH_LLAMA_USER)"
	LLAMA_NAME=$(getent passwd "$LLAMA_UID" | cut -d: -f1)
	LLAMA_HOME=$(getent passwd "$LLAMA_UID" | cut -d: -f6)
	[[ -n $LLAMA_NAME ]] || die "uid $LLAMA_UID has no passwd entry (setpriv --init-groups needs one)"
}

# llama_copy: LLAMA_BIN's files and the model copied to LLAMA_COPY, a temporary folder the
# server's user can read (removed at exit); a file holding only the name of another file of the
# folder (a symlink stored as text) becomes that symlink again
llama_copy() {
	local f n t
	LLAMA_COPY=$(mktemp -d /tmp/memphase-bench-llama.XXXXXX) || return 1
	trap 'rm -rf "$LLAMA_COPY"' EXIT
	mkdir "$LLAMA_COPY/bin" || return 1
	for f in "$LLAMA_BIN"/*; do
		n=${f##*/}
		t=""
		if [[ -L $f ]]; then
			t=$(readlink "$f")
		elif [[ -f $f && $(stat -c %s "$f") -lt 256 ]]; then
			t=$(tr -d '\n\0' <"$f" 2>/dev/null)
			[[ $t != "$n" && $t != */* && -f $LLAMA_BIN/$t ]] || t=""
		fi
		if [[ -n $t ]]; then
			ln -s "$t" "$LLAMA_COPY/bin/$n" || return 1
		elif [[ -f $f ]]; then
			cp "$f" "$LLAMA_COPY/bin/$n" || return 1
		fi
	done
	cp "$LLAMA_MODEL" "$LLAMA_COPY/" || return 1
	chmod -R a+rX,u+w "$LLAMA_COPY"
}

# llama_cmd DIR: sets LLAMA_CMD to the server's command line, on a free port (LLAMA_PORT)
llama_cmd() {
	local args
	read -r -a args <<<"$LLAMA_ARGS"
	LLAMA_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])') || return 1
	LLAMA_CMD=("$LLAMA_COPY/bin/llama-server" -m "$LLAMA_COPY/${LLAMA_MODEL##*/}" --port "$LLAMA_PORT"
		"${args[@]}" --log-timestamps --log-prefix)
}

# llama_run DIR [--capture LOG] -- CMD...: one run of CMD (which starts the server) by
# scripts/llamarun.py: its figures to DIR/llama
llama_run() {
	local dir=$1
	shift
	python3 "$ROOT/scripts/llamarun.py" "$dir/llama" "$LLAMA_PORT" "$LLAMA_REQUESTS" "$LLAMA_WORDS" \
		"$LLAMA_PREDICT" "$@" >"$dir/stdout" 2>"$dir/stderr"
}

desc_llama_alone() {
	echo "llama-server -m ${LLAMA_MODEL##*/} $LLAMA_ARGS, alone, as $LLAMA_NAME (setpriv)"
}
cfg_llama_alone() {
	local dir=$1
	echo "tool=none" >"$dir/extra"
	llama_cmd "$dir" || return 1
	HOME=$LLAMA_HOME USER=$LLAMA_NAME LOGNAME=$LLAMA_NAME llama_run "$dir" --capture "$dir/server.log" \
		-- setpriv --reuid="$LLAMA_UID" --regid="$LLAMA_GID" --init-groups "${LLAMA_CMD[@]}"
}

desc_llama_memphase() {
	echo "memphase run --json F --target-log F2 -- llama-server ... (default mode: dwarf stacks," \
		"no exports), as $LLAMA_NAME"
}
cfg_llama_memphase() {
	local dir=$1
	printf 'tool=memphase\nbpf_stats=0\n' >"$dir/extra"
	llama_cmd "$dir" || return 1
	llama_run "$dir" -- "$MEMPHASE" run "${LLAMA_MP_OPTS[@]}" --json "$dir/out.json" \
		--target-log "$dir/server.log" -- "${LLAMA_CMD[@]}"
}

desc_llama_memphase_stats() {
	echo "the same with --bpf-stats (the kernel's run-time statistics on: its BPF ms)"
}
cfg_llama_memphase_stats() {
	local dir=$1
	printf 'tool=memphase\nbpf_stats=1\n' >"$dir/extra"
	llama_cmd "$dir" || return 1
	llama_run "$dir" -- "$MEMPHASE" run "${LLAMA_MP_OPTS[@]}" --bpf-stats --json "$dir/out.json" \
		--target-log "$dir/server.log" -- "${LLAMA_CMD[@]}"
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

# run_dir DIR: makes a run's folder; under sudo it is the invoking user's (memphase writes there
# as them)
run_dir() {
	mkdir -p "$1" || return 1
	if [[ -n ${SUDO_UID:-} && $SUDO_UID != 0 ]]; then
		chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$1"
	fi
}

# run_cfg ROUND CONFIG SECTION: CONFIG once, into $OUT/SECTIONrROUND-CONFIG, recorded in
# $OUT/SECTIONruns.tsv (SECTION: "" for the touch runs, live- or llama-); sets RUN_DIR and RUN_RC
run_cfg() {
	RUN_DIR=$OUT/${3}r$1-$2
	run_dir "$RUN_DIR"
	"cfg_$2" "$RUN_DIR"
	RUN_RC=$?
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$RUN_DIR" "$RUN_RC" >>"$OUT/${3}runs.tsv"
}

run_one() { # ROUND CONFIG
	local round=$1 cfg=$2 dir rc t tw
	run_cfg "$round" "$cfg" ""
	dir=$RUN_DIR rc=$RUN_RC
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
	run_cfg "$round" "$cfg" live-
	dir=$RUN_DIR rc=$RUN_RC
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

run_llama_one() { # ROUND CONFIG
	local round=$1 cfg=$2 dir rc what
	run_cfg "$round" "$cfg" llama-
	dir=$RUN_DIR rc=$RUN_RC
	# the run's tokens over the server's times, its requests pooled (the summary's figures)
	what=$(awk -F= '/^req[0-9]+_prompt_n=/ { pn += $2 } /^req[0-9]+_prompt_ms=/ { pm += $2 }
		/^req[0-9]+_predicted_n=/ { gn += $2 } /^req[0-9]+_predicted_ms=/ { gm += $2 }
		/^ready_ms=/ { r = $2 } /^stop_ms=/ { s = $2 }
		END { printf "ready=%.0f ms prompt=%.0f tok/s gen=%.0f tok/s stop=%.0f ms", r,
			pm ? pn * 1000 / pm : 0, gm ? gn * 1000 / gm : 0, s }' "$dir/llama" 2>/dev/null)
	printf '  engine round %-3s %-14s rc=%d %s\n' "$round" "$cfg" "$rc" "${what:-?}" >&2
	[[ $rc -eq 0 ]] ||
		echo "bench.sh: $cfg failed in engine round $round (rc=$rc): see $dir/stderr and $dir/server.log" >&2
	sleep "$SETTLE"
	return "$rc"
}

# summarize: prints the summary of the runs in $OUT (also kept in $OUT/summary.txt); fails when
# a summary could not be made (a figure missing from a run's files: the error names it)
summarize() {
	local rc=0
	{
		if [[ -s $OUT/configs.tsv ]]; then summarize_touch || rc=1; fi
		if [[ -s $OUT/llama-configs.tsv ]]; then summarize_llama || rc=1; fi
		if [[ -s $OUT/live-configs.tsv ]]; then summarize_live || rc=1; fi
		exit "$rc"
	} | tee "$OUT/summary.txt"
}

# summarize_touch, summarize_live: the summaries, computed and printed by scripts/bench_report.py
# (statistics in scripts/benchlib.py); a figure missing from a run's files is an error there
summarize_touch() {
	python3 "$ROOT/scripts/bench_report.py" touch "$OUT" "$FAULT_PROGS" "$SAMPLE_PROG"
}

summarize_live() {
	python3 "$ROOT/scripts/bench_report.py" live "$OUT"
}

summarize_llama() {
	python3 "$ROOT/scripts/bench_report.py" llama "$OUT"
}

# rounds FIRST LAST RUNNER CONFIG...: RUNNER ROUND CONFIG for each configuration, rounds FIRST
# to LAST, the order rotated every round so that no configuration always runs first (round r
# in the same order in every section); a failed run sets main's failed.
rounds() {
	local first=$1 last=$2 runner=$3 r i n
	shift 3
	local cfgs=("$@")
	n=${#cfgs[@]}
	for ((r = first; r <= last; r++)); do
		for ((i = 0; i < n; i++)); do
			"$runner" "$r" "${cfgs[$(((i + r + n * (1 - first)) % n))]}" || failed=1
		done
	done
}

# loadavg_note KEY: the load average now into the run's env file
loadavg_note() {
	echo "$1=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/env"
}

main() {
	local cfg n failed=0 t0 why
	if [[ -n ${BENCH_REPORT:-} ]]; then
		OUT=$BENCH_REPORT
		[[ (-f $OUT/runs.tsv || -f $OUT/live-runs.tsv || -f $OUT/llama-runs.tsv) && -f $OUT/env ]] ||
			die "$OUT holds no benchmark run"
		summarize || exit 1
		exit 0
	fi
	for cfg in "${LLAMA_CONFIGS[@]}"; do
		declare -F "cfg_$cfg" >/dev/null || die "unknown configuration '$cfg'"
	done
	why=$(llama_skip)
	if ((${#LLAMA_CONFIGS[@]})) && [[ -n $why ]]; then
		echo "bench.sh: skipping ${LLAMA_CONFIGS[*]}: $why" >&2
		LLAMA_CONFIGS=()
		if ((${#CONFIGS[@]} + ${#LIVE_CONFIGS[@]} == 0)); then
			echo "bench.sh: nothing else to run" >&2
			exit 0
		fi
	fi
	((${#CONFIGS[@]} + ${#LIVE_CONFIGS[@]} + ${#LLAMA_CONFIGS[@]})) ||
		die "no configuration selected (BENCH_CONFIGS, BENCH_LIVE)"
	[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "BENCH_ROUNDS must be a positive integer"
	[[ $MIB =~ ^[0-9]+$ && $MIB -ge 1 ]] || die "BENCH_MIB must be a positive integer"
	[[ $LIVE_ROUNDS =~ ^[0-9]+$ && $LIVE_ROUNDS -ge 1 ]] || die "BENCH_LIVE_ROUNDS must be a positive integer"
	[[ $LIVE_COLS =~ ^[0-9]+$ && $LIVE_ROWS =~ ^[0-9]+$ ]] || die "BENCH_LIVE_COLS/ROWS must be integers"
	for cfg in "${CONFIGS[@]}" "${LIVE_CONFIGS[@]}"; do
		declare -F "cfg_$cfg" >/dev/null || die "unknown configuration '$cfg'"
		if [[ $cfg == perf_* ]] && ! command -v "$PERF" >/dev/null; then
			die "configuration $cfg needs perf (Debian: linux-perf), or set PERF=PATH"
		fi
		if [[ $cfg == bpftrace_* ]] && ! command -v "$BPFTRACE" >/dev/null; then
			die "configuration $cfg needs bpftrace (Debian: bpftrace), or set BPFTRACE=PATH"
		fi
		if [[ $cfg == live_* ]] && ! command -v script >/dev/null; then
			die "configuration $cfg needs script(1) (Debian: bsdutils)"
		fi
	done
	command -v python3 >/dev/null || die "python3 is needed for the statistics"
	[[ $LLAMA_REQUESTS =~ ^[0-9]+$ && $LLAMA_REQUESTS -ge 1 && $LLAMA_WORDS =~ ^[0-9]+$ &&
		$LLAMA_WORDS -ge 1 && $LLAMA_PREDICT =~ ^[0-9]+$ && $LLAMA_PREDICT -ge 1 ]] ||
		die "BENCH_LLAMA_REQUESTS/WORDS/PREDICT must be positive integers"
	if ((${#LLAMA_CONFIGS[@]})); then
		llama_user
		command -v setpriv >/dev/null || die "the engine's configurations need setpriv (Debian: util-linux)"
		llama_copy || die "cannot copy $LLAMA_BIN and $LLAMA_MODEL to a temporary folder"
	fi
	build
	mkdir -p "$OUT" || die "cannot create $OUT"
	perf_dwarf_size
	: >"$OUT/runs.tsv"
	: >"$OUT/live-runs.tsv"
	: >"$OUT/llama-runs.tsv"
	for cfg in "${CONFIGS[@]}"; do
		printf '%s\t%s\n' "$cfg" "$("desc_$cfg")"
	done >"$OUT/configs.tsv"
	for cfg in "${LIVE_CONFIGS[@]}"; do
		printf '%s\t%s\n' "$cfg" "$("desc_$cfg")"
	done >"$OUT/live-configs.tsv"
	for cfg in "${LLAMA_CONFIGS[@]}"; do
		printf '%s\t%s\n' "$cfg" "$("desc_$cfg")"
	done >"$OUT/llama-configs.tsv"
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
		echo "llama_bin=$LLAMA_BIN"
		echo "llama_model=$LLAMA_MODEL"
		echo "llama_args=$LLAMA_ARGS"
		echo "llama_user=${LLAMA_NAME:-}"
		echo "llama_requests=$LLAMA_REQUESTS"
		echo "llama_words=$LLAMA_WORDS"
		echo "llama_predict=$LLAMA_PREDICT"
		echo "llama_rounds=$ROUNDS"
		echo "llama_warmup=$WARMUP"
	} >"$OUT/env"

	n=${#CONFIGS[@]}
	t0=$SECONDS
	if ((n)); then
		echo "memphase overhead benchmark: touch $MIB MiB in 4 KiB pages; $WARMUP warm-up + $ROUNDS" \
			"interleaved rounds of: ${CONFIGS[*]}; raw output in $OUT" >&2
		rounds $((1 - WARMUP)) "$ROUNDS" run_one "${CONFIGS[@]}"
	fi
	loadavg_note load_end
	echo "elapsed_s=$((SECONDS - t0))" >>"$OUT/env"

	n=${#LLAMA_CONFIGS[@]}
	if ((n)); then
		t0=$SECONDS
		loadavg_note llama_load_start
		echo "memphase engine benchmark: llama-server, $LLAMA_REQUESTS requests of $LLAMA_WORDS words" \
			"and $LLAMA_PREDICT tokens; $WARMUP warm-up + $ROUNDS interleaved rounds of:" \
			"${LLAMA_CONFIGS[*]}; raw output in $OUT/llama-*" >&2
		rounds $((1 - WARMUP)) "$ROUNDS" run_llama_one "${LLAMA_CONFIGS[@]}"
		loadavg_note llama_load_end
		echo "llama_elapsed_s=$((SECONDS - t0))" >>"$OUT/env"
	fi

	n=${#LIVE_CONFIGS[@]}
	if ((n)); then
		t0=$SECONDS
		loadavg_note live_load_start
		echo "memphase live-view benchmark: llama-driver $LIVE_ARGS; $LIVE_ROUNDS interleaved rounds" \
			"of: ${LIVE_CONFIGS[*]}; raw output in $OUT/live-*" >&2
		rounds 1 "$LIVE_ROUNDS" run_live_one "${LIVE_CONFIGS[@]}"
		loadavg_note live_load_end
		echo "live_elapsed_s=$((SECONDS - t0))" >>"$OUT/env"
	fi
	summarize || die "the summary is incomplete: a figure is missing (see the error above)"
	if ((failed)); then
		echo "bench.sh: some runs failed (see above); their rows are left out of the summary" >&2
		exit 1
	fi
	exit 0
}

main "$@"
