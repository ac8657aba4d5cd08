#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the rss_percpu probe into build/rss-percpu and runs it on the benchmark's touch
# (1, 2 and 8 threads). Root. Measured on the 6.18 2-vCPU VM (touch 256 MiB):
#   1 thread:  65562 of 65562 anon events equal (the classic size, reconstructed exactly)
#   2 threads: 63923 equal, 1641 within 5 pages; 8 threads: 61304 equal, 4275 within 19 pages
#              (two sums at two instants while the other CPU faults: both are exact sums)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build/rss-percpu
S=$ROOT/scripts/rss-percpu
mkdir -p "$B"
[[ -f $B/vmlinux.h ]] || bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$B/vmlinux.h"
clang-14 -g -O2 -target bpf -D__TARGET_ARCH_x86 -I"$B" -c "$S/rss_percpu.bpf.c" \
	-o "$B/rss_percpu.bpf.o"
bpftool gen skeleton "$B/rss_percpu.bpf.o" >"$B/rss_percpu.skel.h"
cc -O2 -Wall -I"$B" "$S/rss_percpu.c" -o "$B/rss_percpu" -lbpf -lelf -lz
cc -O2 -pthread -o "$B/touch" "$ROOT/scripts/touch.c"
for a in "" "threads 2" "threads 8"; do
	"$B/rss_percpu" "$B/touch" 256 $a | tail -n 1
done
