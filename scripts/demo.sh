#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo: memphase observes the bundled llama-server stand-in (build/workload/llama-explain:
# llama.cpp's names, known amounts) serving 12 requests, half a second apart: a 64 MiB
# model mapped, a 24 MiB KV cache, and per request the tokenizer's buffers, a prompt cache
# entry, a context checkpoint, the compute buffer filling and a new thread's malloc arena.
# The summary names each cause with its remedy, the requests and where the growth stops.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${OUTPUT:-$top/build}
demo=$out/demo
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root for BPF (sudo make demo)" >&2
	exit 1
fi
mkdir -p "$demo"
# the demo files belong to whoever ran sudo
[ -n "${SUDO_UID:-}" ] && chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$demo"
if [ ! -f "$demo/model.gguf" ]; then
	head -c $((64 << 20)) /dev/urandom > "$demo/model.gguf"
	chmod 644 "$demo/model.gguf"
fi
# root itself (no sudo, or sudo from a root shell): say that the workload may run as root
as_root=()
if [ -z "${SUDO_UID:-}" ] || [ "${SUDO_UID}" = 0 ]; then
	echo "demo: started by root itself, not through sudo from a user: the workload runs as root (--allow-root)"
	as_root=(--allow-root)
fi
set -x
"$out/memphase" run "${as_root[@]}" --json "$demo/run.json" ${MEMPHASE_DEMO_OPTS:-} -- \
	"$out/workload/llama-explain" --model "$demo/model.gguf" --requests 12 --pause-ms 500
set +x
echo "demo: JSON summary in $demo/run.json"
