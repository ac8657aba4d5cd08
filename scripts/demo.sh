#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo: memphase observes the bundled llama.cpp stand-in (build/workload) doing
# known work per phase: read a 64 MiB "model", a 128 MiB context, 4 prompt batches of
# 32 MiB, 200 generated tokens of 256 KiB each, a 64 MiB state save.
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
	"$out/workload/llama-driver" --model "$demo/model.gguf" --ctx-mib 128 \
	--prompt-batches 4 --batch-mib 32 --tokens 200 --token-kib 256 --state-mib 64 \
	--sleep-ms 10
set +x
echo "demo: JSON summary in $demo/run.json"
