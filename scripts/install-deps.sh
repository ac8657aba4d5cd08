#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages that building, running and testing memphase need.
# Does nothing when everything is present; otherwise runs apt-get update first.
set -eu
# sudo: the README's commands use it (a root shell without it can run `make demo` and
# `make test` directly); procps, passwd: the safety tests; g++: the C++ stand-ins;
# chromium, nodejs, npm: the trace and HTML tests open the files in a headless browser;
# golang-go: the pprof test reads the profile with `go tool pprof`
pkgs=(clang-14 llvm-14 bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev pkg-config
      libncurses-dev make gcc g++ python3 linux-perf tmux binutils sudo procps passwd
      chromium golang-go)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
# node and npm may come from elsewhere (NodeSource ships npm inside nodejs): by command
command -v npm >/dev/null || missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]} (run as root, e.g. sudo make ...)" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
