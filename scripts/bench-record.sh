#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The recording and the views at scale (a benchmark: it prints figures, it never fails on
# them).
#
# 1. Size of a recording of a steady run: the stand-in driver generating tokens at a steady
#    pace (64 KiB per token, one every ~20 ms, like a server answering requests) under
#    `memphase record` for BENCH_RECORD_S seconds (default 60); the size as MiB per minute
#    (the budget is 1 MiB per minute), and the same run with --record-max 256K.
# 2. The HTML report at 1,000 requests (2,000 phase changes) and 100,000 stack samples:
#    scripts/mkrec.py writes such a recording (a 10-minute server run; a fifth of the samples
#    in frames the cause rules name), `memphase report --html` turns it into a page;
#    its size, and in headless chromium (tests/integration/html_check.js, the test's driver)
#    the time to first contentful paint, until the page's script has drawn everything, and
#    to the first frame after that (all of it laid out and painted), median of
#    BENCH_HTML_LOADS (5) loads.
#
#   sudo scripts/bench-record.sh         (after `make` and one `sudo make test`, which
#                                         installs chromium and puppeteer-core)
set -eu
cd "$(dirname "$0")/.."
B=${OUTPUT:-build}
MP=${MEMPHASE:-$B/memphase}
SECS=${BENCH_RECORD_S:-60}
LOADS=${BENCH_HTML_LOADS:-5}
OUT=${BENCH_OUT:-$B/bench/record-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
tokens=$((SECS * 1000 / 22))
drv=("$B/workload/llama-driver" --ctx-mib 64 --prompt-batches 4 --batch-mib 8 --tokens "$tokens"
     --token-kib 64 --sleep-ms 20)

echo "== recording of a steady run (${SECS}s, $tokens tokens of 64 KiB)"
for cfg in plain max256k; do
	extra=()
	[ $cfg = max256k ] && extra=(--record-max 256K)
	start=$(date +%s.%N)
	"$MP" record --allow-root --no-tui -o "$OUT/$cfg.mprec" "${extra[@]}" \
		--json "$OUT/$cfg.json" -- "${drv[@]}" >/dev/null 2>"$OUT/$cfg.err"
	end=$(date +%s.%N)
	size=$(stat -c %s "$OUT/$cfg.mprec")
	python3 - "$size" "$start" "$end" "$cfg" "$OUT/$cfg.err" <<'PY'
import sys
size, start, end, cfg, err = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
mins = (end - start) / 60
thinned = [l.strip() for l in open(err) if "record-max" in l]
print("record_%s_bytes=%d run_s=%.1f mib_per_min=%.3f%s" % (cfg, size, end - start,
      size / 2**20 / mins, (" (" + thinned[0] + ")") if thinned else ""))
PY
	"$MP" report "$OUT/$cfg.mprec" --json "$OUT/$cfg.report.json" >/dev/null
done

echo "== HTML report at 1,000 requests (2,000 phase changes) and 100,000 stack samples"
python3 scripts/mkrec.py "$OUT/scale.mprec" 2000 100000 600
"$MP" report "$OUT/scale.mprec" --html "$OUT/scale.html" >/dev/null
echo "html_bytes=$(stat -c %s "$OUT/scale.html") recording_bytes=$(stat -c %s "$OUT/scale.mprec")"
for i in $(seq "$LOADS"); do
	NODE_PATH=$B/node/node_modules node tests/integration/html_check.js "$(command -v chromium)" \
		"$(realpath "$OUT/scale.html")" generate "$OUT/scale.png"
done > "$OUT/html-loads.jsonl"
python3 - "$OUT/html-loads.jsonl" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
errs = sum(len(r["errors"]) for r in runs)
print("html_loads=%d first_paint_ms_median=%.0f drawn_ms_median=%.0f shown_ms_median=%.0f "
      "console_errors=%d" % (len(runs), statistics.median(r["paint_ms"] for r in runs),
      statistics.median(r["drawn_ms"] for r in runs),
      statistics.median(r["shown_ms"] for r in runs), errs))
PY
echo "raw output in $OUT"
