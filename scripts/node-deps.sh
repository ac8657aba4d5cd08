#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Installs, once, the npm packages the trace and HTML tests open memphase's files with
# (speedscope, puppeteer-core) into OUTPUT/node. When they cannot be installed, says why
# on one line and writes it to OUTPUT/node/unavailable, which those tests give as their
# reason to skip; it never fails the build. Usage: scripts/node-deps.sh [OUTPUT]
set -u
out=${1:-build}/node
mods=$out/node_modules
[ -d "$mods/speedscope" ] && [ -d "$mods/puppeteer-core" ] && exit 0
mkdir -p "$out"
rm -f "$out/unavailable"
say() {
	echo "node-deps: $1" >&2
	echo "$1" >"$out/unavailable"
}
if ! command -v npm >/dev/null; then
	say "npm is not installed"
	exit 0
fi
# sudo drops the variables that name the machine's certificates (a proxy's CA among
# them): give node the system's bundle, which update-ca-certificates keeps
bundle=/etc/ssl/certs/ca-certificates.crt
if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r "$bundle" ]; then
	export NODE_EXTRA_CA_CERTS=$bundle
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "node-deps: npm install speedscope@1 puppeteer-core into $out"
timeout 300 npm install --prefix "$out" --no-audit --no-fund speedscope@1 puppeteer-core \
	>"$log" 2>&1
rc=$?
if [ $rc -eq 124 ]; then
	say "npm install did not finish in 300 s (registry $(npm config get registry) unreachable?)"
elif [ $rc -ne 0 ]; then
	# npm's own one-line reason: its "npm ERR! code X" and the message after it
	code=$(grep -m1 -E '^npm (ERR!|error) code ' "$log" | sed -E 's/^npm (ERR!|error) code //')
	msg=$(grep -E '^npm (ERR!|error) ' "$log" | sed -E 's/^npm (ERR!|error) //' |
	      grep -v -E '^(code|syscall|errno|path) |complete log|^Log files|^ *$' | head -n1)
	say "npm install failed (${code:-status $rc}): ${msg:-$(tail -n1 "$log")}"
fi
exit 0
