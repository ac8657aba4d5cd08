#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An attach's own memory and its JSON over a long observation (not part of `make test`):
#   sudo scripts/bench_long.sh [SECONDS] [MEMPHASE...]
# A stand-in server (llama-serve) answers requests as fast as it can (no sleep, no memory:
# tens of thousands of phase changes a second, what days of a real server add up to); each
# memphase given (build/memphase by default; give an older build beside it to compare)
# attaches to a fresh one for SECONDS (40) and writes its JSON. Printed per build: its peak
# RSS (VmHWM), the JSON's size, the intervals the JSON lists and those merged past the
# history's bound. Figures for docs/watch.md ("Its own memory").
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${OUTPUT:-$top/build}
secs=${1:-40}
shift || true
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=("$out/memphase")
[ "$(id -u)" -eq 0 ] || { echo "bench_long: needs root (sudo)" >&2; exit 1; }
[ -x "$out/workload/llama-serve" ] || { echo "bench_long: build first (make)" >&2; exit 1; }

dir=$(mktemp -d /tmp/memphase-bench-long.XXXXXX)
chmod 755 "$dir"
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
head -c $((1 << 20)) /dev/urandom > "$dir/model.gguf"

for m in "${builds[@]}"; do
	"$out/workload/llama-serve" --model "$dir/model.gguf" --requests 0 --prompt-batches 1 \
		--batch-mib 0 --tokens 2 --token-kib 0 --ctx-mib 1 --tokenize-kib 0 \
		--sleep-ms 0 --hold-ms 0 &
	spid=$!
	sleep 0.2
	"$m" attach -p "$spid" --no-tui --interval 3600 --duration "$secs" \
		--json "$dir/o.json" >/dev/null 2>"$dir/err" &
	apid=$!
	peak=0
	while kill -0 "$apid" 2>/dev/null; do
		r=$(awk '/VmHWM/ {print $2}' "/proc/$apid/status" 2>/dev/null || true)
		[ -n "$r" ] && peak=$r
		sleep 0.5
	done
	wait "$apid" || { cat "$dir/err" >&2; exit 1; }
	kill "$spid"
	wait "$spid" 2>/dev/null || true
	spid=
	python3 - "$m" "$peak" "$dir/o.json" <<'EOF'
import json, os, sys
m, peak, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = json.load(open(path))
listed = sum(len(p["intervals"]) for p in d["phases"])
print("%s: peak RSS %.1f MiB, JSON %.1f MB, %d intervals listed, %s merged, %d requests"
      % (m, peak / 1024, os.path.getsize(path) / 1e6, listed,
         d["lost"].get("intervals_merged", "none"), len(d["requests"])))
EOF
done
