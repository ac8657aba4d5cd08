#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fuzzes the recording reader (lib/recfile + collect/replay, as `memphase report` runs them)
# with clang 14's libFuzzer and AddressSanitizer, like a benchmark: it builds its own
# instrumented copy, starts from tests/fuzz/corpus, and runs for FUZZ_SECONDS (default 600).
# New inputs that cover new code are added to the corpus directory; a crash is saved under
# tests/fuzz/crashers/ (keep it: `make test` replays every file there and in the corpus).
#   sudo make build/memphase && scripts/fuzz-record.sh      (FUZZ_SECONDS=60 for a short run)
set -eu
cd "$(dirname "$0")/.."
OUT=${OUTPUT:-build}/fuzz
SECS=${FUZZ_SECONDS:-600}
CLANG=${CLANG:-clang-14}
mkdir -p "$OUT/obj" tests/fuzz/corpus tests/fuzz/crashers
CFLAGS="-g -O1 -fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer -D_GNU_SOURCE \
-DMEMPHASE_VERSION=\"fuzz\" -I${OUTPUT:-build} -Ibpf -Iuser -Wno-unused-command-line-argument"
[ -f "${OUTPUT:-build}/memphase.skel.h" ] || make "${OUTPUT:-build}/memphase.skel.h"
objs=""
# a header newer than an object may change what it was compiled against: rebuild them all
newest_h=$(ls -t user/*/*.h bpf/memphase.h | head -1)
for src in user/lib/*.c user/model/*.c user/collect/*.c; do
	o="$OUT/obj/$(echo "$src" | tr / _).o"
	if [ ! -f "$o" ] || [ "$src" -nt "$o" ] || [ "$newest_h" -nt "$o" ]; then
		# shellcheck disable=SC2086
		$CLANG $CFLAGS -c "$src" -o "$o"
	fi
	objs="$objs $o"
done
# shellcheck disable=SC2086
$CLANG $CFLAGS -fsanitize=fuzzer tests/fuzz/fuzz_record.c $objs -o "$OUT/fuzz_record" \
	$(pkg-config --libs libbpf) -lelf -ldw -lz -lm -lstdc++
echo "fuzzing the recording reader for ${SECS}s (corpus: tests/fuzz/corpus)"
start=$(date +%s)
set +e
"$OUT/fuzz_record" -max_total_time="$SECS" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix=tests/fuzz/crashers/ -print_final_stats=1 \
	tests/fuzz/corpus 2>"$OUT/fuzz.log"
rc=$?
set -e
end=$(date +%s)
grep -E "^stat::(number_of_executed_units|peak_rss_mb|new_units_added)" "$OUT/fuzz.log" || true
echo "fuzz_seconds=$((end - start)) exit=$rc corpus_files=$(ls tests/fuzz/corpus | wc -l) \
crashers=$(ls tests/fuzz/crashers | wc -l)"
[ "$rc" -eq 0 ] || { tail -40 "$OUT/fuzz.log"; exit "$rc"; }
