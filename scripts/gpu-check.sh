#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# memphase against a real NVIDIA GPU: a small C program (built here, the CUDA runtime found by
# dlopen, no toolkit needed) pins a known amount of host memory through the real runtime
# (cudaMallocHost, cudaHostAlloc, cudaHostRegister) and allocates device memory (cudaMalloc)
# in phases marked by its own functions, reads its own VRAM use from NVML while it holds it,
# and frees everything. memphase runs it; this script checks memphase's pinned bytes per phase
# (exact) and its VRAM figures (the device's total, the program's use) against what the
# program asked for and read. Prints each check; exits 1 on a mismatch, 0 when every check
# passes or when there is no GPU to check (with the reason: SKIP).
# Usage: sudo scripts/gpu-check.sh [MEMPHASE]     (default build/memphase)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
memphase=${1:-$top/build/memphase}
pin_mib=16 vram_mib=256

skip() { echo "gpu-check: SKIP: $*"; exit 0; }
fail() { echo "gpu-check: FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "needs root (memphase loads BPF programs)"
[ -x "$memphase" ] || fail "$memphase is not built (make)"
[ -e /dev/nvidiactl ] || skip "no NVIDIA driver here (/dev/nvidiactl does not exist)"
cudart=${CUDART:-$(ldconfig -p 2>/dev/null | awk '/libcudart\.so/ { print $NF; exit }')}
[ -n "$cudart" ] || skip "no CUDA runtime (libcudart.so) found by ldconfig; set CUDART=/path"
ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1' || \
	skip "no NVML (libnvidia-ml.so.1) found by ldconfig"
command -v python3 >/dev/null || fail "python3 is needed to read memphase's JSON"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# under sudo the program runs, and memphase writes its JSON, as the invoking user
if [ -n "${SUDO_UID:-}" ]; then
	chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$work" || fail "cannot chown $work"
fi
cat >"$work/gpucheck.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1UL << 20)
#define HOLD_US 700000		/* memphase reads NVML every 100 ms */

typedef int (*pp_fn)(void **, size_t);
typedef int (*ppf_fn)(void **, size_t, unsigned int);
typedef int (*reg_fn)(void *, size_t, unsigned int);
typedef int (*p_fn)(void *);
struct nvml_mem { unsigned long long total, free, used; };
struct nvml_proc { unsigned int pid; unsigned long long used; unsigned int gi, ci; };

static pp_fn malloc_host, malloc_dev;
static ppf_fn host_alloc;
static reg_fn host_register;
static p_fn free_host, host_unregister, free_dev;
static void *pinned[2], *reg, *dev;
static size_t pin, vram;

static void die(const char *what, int r)
{
	fprintf(stderr, "gpucheck: %s failed (%d)\n", what, r);
	exit(2);
}

/* What NVML says this process holds on device 0, and the device's total. */
static void nvml_self(unsigned long long *mine, unsigned long long *total)
{
	/* the library memphase reads (MEMPHASE_NVML_LIB, as memphase) */
	const char *lib = getenv("MEMPHASE_NVML_LIB");
	void *l = dlopen(lib && lib[0] ? lib : "libnvidia-ml.so.1", RTLD_NOW);
	int (*init)(void), (*handle)(unsigned int, void **), (*mem)(void *, struct nvml_mem *);
	int (*procs)(void *, unsigned int *, struct nvml_proc *);
	struct nvml_proc p[256];
	struct nvml_mem m;
	unsigned int n = 256, i;
	void *d;

	*mine = *total = 0;
	if (!l)
		die("dlopen libnvidia-ml.so.1", 0);
	init = (int (*)(void))dlsym(l, "nvmlInit_v2");
	handle = (int (*)(unsigned int, void **))dlsym(l, "nvmlDeviceGetHandleByIndex_v2");
	mem = (int (*)(void *, struct nvml_mem *))dlsym(l, "nvmlDeviceGetMemoryInfo");
	procs = (int (*)(void *, unsigned int *, struct nvml_proc *))
		dlsym(l, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!procs)
		procs = (int (*)(void *, unsigned int *, struct nvml_proc *))
			dlsym(l, "nvmlDeviceGetComputeRunningProcesses_v2");
	if (!init || !handle || !mem || !procs || init() || handle(0, &d) || mem(d, &m))
		die("NVML", 0);
	*total = m.total;
	if (procs(d, &n, p))
		die("nvmlDeviceGetComputeRunningProcesses", 0);
	for (i = 0; i < n; i++)
		if (p[i].pid == (unsigned int)getpid())
			*mine += p[i].used;
}

__attribute__((noinline)) void gpucheck_pin(void)
{
	int r;

	if ((r = malloc_host(&pinned[0], pin)))
		die("cudaMallocHost", r);
	if ((r = host_alloc(&pinned[1], 2 * pin, 0)))
		die("cudaHostAlloc", r);
	reg = mmap(NULL, pin, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (reg == MAP_FAILED || (r = host_register(reg, pin, 0)))
		die("cudaHostRegister", r);
	usleep(HOLD_US);
}

__attribute__((noinline)) void gpucheck_vram(void)
{
	unsigned long long mine, total;
	int r;

	if ((r = malloc_dev(&dev, vram)))
		die("cudaMalloc", r);
	usleep(HOLD_US);
	nvml_self(&mine, &total);
	printf("vram_self=%llu device_total=%llu\n", mine, total);
	usleep(HOLD_US);
}

__attribute__((noinline)) void gpucheck_free(void)
{
	free_dev(dev);
	host_unregister(reg);
	free_host(pinned[1]);
	free_host(pinned[0]);
	usleep(HOLD_US);
}

int main(int argc, char **argv)
{
	void *l = argc > 3 ? dlopen(argv[1], RTLD_NOW) : NULL;

	if (!l) {
		fprintf(stderr, "usage: gpucheck LIBCUDART PIN_MIB VRAM_MIB (%s)\n", dlerror());
		return 2;
	}
	pin = strtoul(argv[2], NULL, 0) * MIB;
	vram = strtoul(argv[3], NULL, 0) * MIB;
	malloc_host = (pp_fn)dlsym(l, "cudaMallocHost");
	malloc_dev = (pp_fn)dlsym(l, "cudaMalloc");
	host_alloc = (ppf_fn)dlsym(l, "cudaHostAlloc");
	host_register = (reg_fn)dlsym(l, "cudaHostRegister");
	free_host = (p_fn)dlsym(l, "cudaFreeHost");
	host_unregister = (p_fn)dlsym(l, "cudaHostUnregister");
	free_dev = (p_fn)dlsym(l, "cudaFree");
	if (!malloc_host || !malloc_dev || !host_alloc || !host_register || !free_host ||
	    !host_unregister || !free_dev)
		die("dlsym of the CUDA runtime", 0);
	gpucheck_pin();
	gpucheck_vram();
	gpucheck_free();
	return 0;
}
C
cc -O1 -g -o "$work/gpucheck" "$work/gpucheck.c" -ldl || fail "cannot build the check program"
echo "gpu-check: runtime $cudart; pins $((4 * pin_mib)) MiB in phase pin," \
	"$vram_mib MiB VRAM in phase vram"
"$memphase" run --allow-root --no-tui --preset none --json "$work/out.json" \
	--phase pin=gpucheck_pin --phase vram=gpucheck_vram --phase free=gpucheck_free \
	-- "$work/gpucheck" "$cudart" "$pin_mib" "$vram_mib" >"$work/stdout" 2>"$work/stderr"
rc=$?
[ "$rc" = 0 ] || { cat "$work/stderr"; fail "memphase or the program failed (exit $rc)"; }
self=$(sed -n 's/^vram_self=\([0-9]*\) device_total=\([0-9]*\)$/\1 \2/p' "$work/stdout")
[ -n "$self" ] || { cat "$work/stdout" "$work/stderr"; fail "the program printed no NVML reading"; }
python3 - "$work/out.json" "$pin_mib" "$vram_mib" $self <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
pin, vram = int(sys.argv[2]) << 20, int(sys.argv[3]) << 20
self_vram, total = int(sys.argv[4]), int(sys.argv[5])
phases = {p["name"]: p for p in doc["phases"]}
bad = 0
def check(what, got, want, ok=None):
    global bad
    good = (got == want) if ok is None else ok
    print("gpu-check: %-4s %s: memphase %s, expected %s"
          % ("ok" if good else "FAIL", what, got, want))
    bad += not good
check("pinned bytes in phase pin", phases["pin"]["pinned_bytes"], 4 * pin)
check("pinned bytes freed in phase free", phases["free"]["pinned_freed_bytes"], 4 * pin)
check("pinned peak", doc["gpu"]["pinned"]["peak_bytes"], 4 * pin)
check("pinned held at the end", doc["gpu"]["pinned"]["held_bytes"], 0)
v = doc["gpu"]["vram"]
if v is None:
    check("NVML loaded", doc["gpu"]["nvml_unavailable"], None)
else:
    check("device 0 total", v["devices"][0]["total_bytes"], total)
    check("VRAM in phase vram (NVML, while held)", phases["vram"]["vram_bytes"], self_vram)
    check("VRAM in phase vram >= cudaMalloc's", phases["vram"]["vram_bytes"], ">= %d" % vram,
          ok=(phases["vram"]["vram_bytes"] or 0) >= vram)
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] || fail "memphase's figures do not match (above)"
echo "gpu-check: PASS"
