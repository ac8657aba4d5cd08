#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The one-tracepoint design's exactness (issue 28, item 3): builds scripts/onetp into
# build/onetp and runs its exactness mode (onetp exact, see onetp.c) on the benchmark's touch
# (TOUCH_STOP=1: it stops after its loop) with 1, 2 and 8 threads and hops, in both reading
# modes, ONETP_ROUNDS times each, then on scripts/onetp/cases.c's growth outside faults. Its
# timing is bench.sh's (BENCH_CONFIGS="baseline floor_classic floor_btf onetp").
#
# Per run and process: the sizes against /proc/PID/status (bytes, summed over the classes:
# each class's baseline plus what was charged, less RssFile/RssAnon/VmSwap/RssShmem), then
# the growth charged to another page / 2 MiB range / mapping than the reference's (rss_stat,
# memphase's way), and each against the present pages (/proc/PID/pagemap: the truth per
# page; the baseline's pages and file pages that fault-around mapped beside the faulting one
# count against both), in % of the reference's growth.
#
#   ONETP_MIB=256 ONETP_ROUNDS=3 scripts/onetp/run.sh     (root)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build/onetp
S=$ROOT/scripts/onetp
MIB=${ONETP_MIB:-256}
ROUNDS=${ONETP_ROUNDS:-3}
mkdir -p "$B"
[[ -s $B/vmlinux.h ]] || bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$B/vmlinux.h"
clang-14 -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror -I"$B" \
	-I"$ROOT/scripts/floor" -I"$S" -c "$S/onetp.bpf.c" -o "$B/onetp.bpf.o"
bpftool gen skeleton "$B/onetp.bpf.o" name onetp_bpf >"$B/onetp.skel.h"
cc -O2 -Wall -Wextra -Werror -I"$B" -I"$ROOT/scripts/floor" -I"$S" -o "$B/onetp" "$S/onetp.c" \
	-lbpf -lelf -lz
cc -O2 -Wall -Wextra -pthread -o "$B/touch" "$ROOT/scripts/touch.c"
cc -O2 -Wall -Wextra -o "$B/cases" "$S/cases.c"

# row MODE WHAT FILE: one line per process compared in FILE (onetp exact's key=value output)
row() {
	python3 - "$@" <<'EOF'
import re, sys
mode, what, path = sys.argv[1:4]
d = dict(l.strip().split("=", 1) for l in open(path) if "=" in l)
pids = sorted({m[1] for k in d for m in [re.match(r"stop1_pid(\d+)_", k)] if m})
for i, pid in enumerate(pids):
    g = lambda k: float(d[f"stop1_pid{pid}_{k}"])
    cls = ("file", "anon", "swap", "shmem")
    o = sum(abs(g(f"{c}_onetp") - g(f"{c}_proc")) for c in cls)
    r = sum(abs(g(f"{c}_ref") - g(f"{c}_proc")) for c in cls)
    grow = g("growth_ref") or 1
    pct = lambda k: " ".join(f"{100 * g(f'mis_{k}_{l}') / grow:6.3f}"
                             for l in ("bucket", "2mib", "vma"))
    who = what if not i else f"  (its child {pid})"
    print(f"{mode:<4} {who:<26} {g('growth_ref') / 2**20:7.1f} {o:>9.0f} {r:>9.0f} | "
          f"{pct('onetp_ref')} | {pct('onetp_truth')} | {pct('ref_truth')} | "
          f"{d.get('diag_fold_guess', '?'):>5} {d.get('diag_fold_multi', '?'):>5} "
          f"{d.get('diag_deferred', '?'):>4}")
EOF
}

echo "                                  growth  |size-/proc| B | one-tp vs reference  | one-tp vs present    | reference vs present | folds: guessed,"
echo "mode workload                      MiB   one-tp   ref    | page   2MiB   mapping| page   2MiB   mapping| page   2MiB   mapping| split, put off"
for m in cpu sum; do
	for a in "" "threads 2" "threads 8" "hops"; do
		for ((r = 1; r <= ROUNDS; r++)); do
			# shellcheck disable=SC2086
			TOUCH_STOP=1 "$B/onetp" -m "$m" exact "$B/out" -- "$B/touch" "$MIB" $a \
				>"$B/log" 2>&1 || { cat "$B/log"; exit 1; }
			row "$m" "touch $MIB $a" "$B/out"
		done
	done
done
for c in none populate mlock read read-K dontneed munmap fork migrate populate-last; do
	k=()
	[[ $c == *-K ]] && k=(-K)
	l=()
	[[ $c == *-last ]] && l=(32 last)
	"$B/onetp" "${k[@]}" exact "$B/out" -- "$B/cases" "${c%%-*}" "${l[@]}" >"$B/log" 2>&1 ||
		{ cat "$B/log"; exit 1; }
	row cpu "cases $c" "$B/out"
done
