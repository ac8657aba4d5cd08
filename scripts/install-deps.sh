#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages that building, running and testing memphase need (with the
# argument "bench", also what the benchmark compares memphase with: bpftrace).
# Does nothing when everything is present; otherwise runs apt-get update first.
set -eu
# sudo: the README's commands use it (a root shell without it can run `make demo` and
# `make test` directly); procps, passwd: the safety tests; g++: the C++ stand-ins;
# chromium, nodejs, npm: the trace and HTML tests open the files in a headless browser;
# golang-go: the pprof test reads the profile with `go tool pprof`;
# prometheus, prometheus-node-exporter: the metrics tests run promtool, their own prometheus
# and node_exporter's textfile collector (never the packaged services)
pkgs=(clang-14 llvm-14 bpftool libbpf-dev libelf-dev libdw-dev libbz2-dev zlib1g-dev pkg-config
      libncurses-dev make gcc g++ python3 linux-perf tmux binutils sudo procps passwd
      chromium golang-go prometheus prometheus-node-exporter)
[ "${1:-}" = bench ] && pkgs+=(bpftrace)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
# node and npm may come from elsewhere (NodeSource ships npm inside nodejs): by command
command -v npm >/dev/null || missing+=(nodejs npm)
# the tests check every JSON summary against docs/memphase.schema.json with the python3 that
# runs them: by import (a pip-installed jsonschema counts; without one those checks skip)
python3 -c 'import jsonschema' 2>/dev/null || missing+=(python3-jsonschema)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]} (run as root, e.g. sudo make ...)" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# the prometheus packages' postinsts would start their services (listening on :9090 and
# :9100 for good):
# a policy-rc.d that refuses every start while we install, unless the system has its own
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && own_policy=1
fi
rc=0
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || rc=$?
[ $own_policy -eq 1 ] && rm -f "$policy"
# a systemd machine would still start them at the next boot: keep them off (we installed them)
for svc in prometheus prometheus-node-exporter; do
	if [[ " ${missing[*]} " == *" $svc "* ]] && [ -d /run/systemd/system ]; then
		systemctl disable --now "$svc.service" >/dev/null 2>&1 || true
	fi
done
exit $rc
