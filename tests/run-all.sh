#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs the unit tests and the integration tests; the last line sums them up as
# "N passed, N failed, N skipped" (what CI reads). Usage: tests/run-all.sh [filter]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${OUTPUT:-$top/build}
filter=${1:-}
tp=0 tf=0 ts=0

tally() {
	# the last "N passed, N failed, N skipped" line of a runner's output
	local line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$1" | tail -n1)
	if [ -z "$line" ]; then
		echo "runner $2 printed no summary line: counted as 1 failure"
		tf=$((tf + 1))
		return
	fi
	set -- $line
	tp=$((tp + $1)) tf=$((tf + $3)) ts=$((ts + $5))
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== unit tests"
"$out/unit-tests" $filter 2>&1 | tee "$log"
tally "$log" unit

echo "== unit tests under AddressSanitizer and UndefinedBehaviorSanitizer (make asan)"
if [ -x "$out/asan/unit-tests" ]; then
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$out/asan/unit-tests" $filter 2>&1 | tee "$log"
	tally "$log" sanitizers
else
	echo "SKIP sanitizers: $out/asan/unit-tests was not built (make asan builds it)"
	ts=$((ts + 1))
fi

echo "== integration tests"
python3 "$top/tests/integration/run.py" $filter 2>&1 | tee "$log"
tally "$log" integration

echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" -eq 0 ]
