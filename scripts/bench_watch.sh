#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# memphase watch's own memory over a long run (not part of `make test`):
#   sudo scripts/bench_watch.sh [REQUESTS] [SHORT]
# One watch (--comm of a name no other program uses) observes a stand-in server doing
# REQUESTS requests (10000; 4 ms per decode, 3 decodes each: about 2 minutes) while SHORT
# (1000) short-lived matching processes start and end beside it (one in 50 lives ~6 s and is
# observed to its end; the others end within milliseconds). The RSS of the supervisor, and
# of the supervisor and its attach children together, is sampled every 0.5 s; printed:
# start, end and peak of each, and what watch counted. Figures for docs/watch.md.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${OUTPUT:-$top/build}
requests=${1:-10000}
short=${2:-1000}
[ "$(id -u)" -eq 0 ] || { echo "bench_watch: needs root (sudo)" >&2; exit 1; }
[ -x "$out/memphase" ] && [ -x "$out/workload/llama-serve" ] || {
	echo "bench_watch: build first (make)" >&2; exit 1; }

dir=$(mktemp -d /tmp/memphase-bench-watch.XXXXXX)
chmod 755 "$dir"
wpid=
cleanup() {
	[ -n "$wpid" ] && kill "$wpid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT

comm=bw$$
serve="$dir/$comm"			# comm $comm: only this benchmark's processes match
ln -s "$out/workload/llama-serve" "$serve"
head -c $((4 << 20)) /dev/urandom > "$dir/model.bin"
mkdir "$dir/out"

# watch as root's own (no SUDO_*: root may observe anything)
env -u SUDO_UID -u SUDO_GID "$out/memphase" watch --comm "$comm" --out-dir "$dir/out" \
	--json 2> "$dir/watch.err" &
wpid=$!
until grep -q "watch: started" "$dir/watch.err"; do
	kill -0 "$wpid" 2>/dev/null || { cat "$dir/watch.err" >&2; exit 1; }
	sleep 0.1
done

# the sampler: VmRSS of watch, and of watch + its children, every 0.5 s
python3 - "$wpid" "$dir/rss.csv" <<'PY' &
import os, sys, time
wp, path = int(sys.argv[1]), sys.argv[2]
def rss(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
with open(path, "w") as out:
    t0 = time.time()
    while os.path.exists("/proc/%d" % wp):
        kids = []
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    with open("/proc/%s/stat" % p) as f:
                        if int(f.read().rsplit(")", 1)[1].split()[1]) == wp:
                            kids.append(int(p))
                except (OSError, ValueError, IndexError):
                    pass
        s = rss(wp)
        if s:
            out.write("%.1f,%d,%d,%d\n" % (time.time() - t0, s, s + sum(map(rss, kids)),
                                          len(kids)))
            out.flush()
        time.sleep(0.5)
PY
sampler=$!

t0=$(date +%s.%N)
"$serve" --model "$dir/model.bin" --requests "$requests" --prompt-batches 1 --batch-mib 0 \
	--tokens 2 --token-kib 4 --ctx-mib 8 --sleep-ms 4 > /dev/null &
server=$!
for i in $(seq 1 "$short"); do
	if [ $((i % 50)) -eq 0 ]; then
		"$serve" --model "$dir/model.bin" --requests 10 --prompt-batches 1 --batch-mib 1 \
			--tokens 2 --ctx-mib 1 --sleep-ms 300 > /dev/null &
	else
		"$serve" --model "$dir/model.bin" --requests 1 --batch-mib 0 --tokens 1 \
			--ctx-mib 1 > /dev/null
	fi
	sleep 0.05
done
wait "$server"
# the last slow ones end within ~6 s
sleep 8
t1=$(date +%s.%N)
kill -TERM "$wpid"
wait "$wpid" || true
wpid=
wait "$sampler" || true

python3 - "$dir/rss.csv" "$dir/out" "$requests" "$short" "$t0" "$t1" <<'PY'
import glob, json, sys
rows = [tuple(float(x) for x in l.split(",")) for l in open(sys.argv[1]) if l.strip()]
sup = [r[1] for r in rows]
tot = [r[2] for r in rows]
mib = lambda kb: "%.1f MiB" % (kb / 1024)
print("bench_watch: %s requests + %s short-lived processes in %.0f s, %d RSS samples"
      % (sys.argv[3], sys.argv[4], float(sys.argv[6]) - float(sys.argv[5]), len(rows)))
print("  supervisor RSS:            start %s, end %s, peak %s"
      % (mib(sup[0]), mib(sup[-1]), mib(max(sup))))
print("  supervisor + children RSS: start %s, end %s, peak %s (at most %d children at once)"
      % (mib(tot[0]), mib(tot[-1]), mib(max(tot)), max(r[3] for r in rows)))
files = glob.glob(sys.argv[2] + "/*.json")
docs = [json.load(open(f)) for f in files]
def prompts(d):
    return sum(p["calls"] for p in d["phases"] if p["name"] == "prompt")
srv = max(docs, key=prompts, default=None)
if srv:
    print("  the server's JSON: %d requests observed (one prompt batch each), exit %s"
          % (prompts(srv), srv["target"]["exit"]))
slow = int(sys.argv[4]) // 50
print("  files written: %d (the server, and %d of the %d six-second processes)"
      % (len(files), len(files) - (1 if srv else 0), slow))
PY
grep "matched" "$dir/watch.err" | sed 's/^/  /'
