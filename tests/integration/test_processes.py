# SPDX-License-Identifier: GPL-2.0
"""How memphase treats the processes it observes: programs reached by exec, attached
processes that already hold memory, forked children, what the command inherits, and
--duration."""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KIB, MIB  # noqa: E402

# mib MiB of anonymous memory, one fault per 4 KiB page (the test programs' own growth)
TOUCH = r"""
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void touch(size_t mib)
{
	size_t n = mib << 20;
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	madvise(p, n, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i += 4096)
		((volatile char *)p)[i] = 1;
}
"""

FORKER = TOUCH + r"""
int main(void)
{
	touch(64);			/* the parent holds 64 MiB */
	for (int i = 0; i < 3; i++) {
		pid_t c = fork();

		if (!c) {
			touch(8);	/* each child grows 8 MiB of its own */
			_exit(0);
		}
		waitpid(c, NULL, 0);
	}
	return 0;
}
"""


def build(d, name, src, extra=()):
    path = os.path.join(d, name)
    with open(path + ".c", "w") as f:
        f.write(src)
    r = harness.run(["cc", "-O2", "-o", path, path + ".c"] + list(extra))
    assert r.returncode == 0, r.stderr
    return path


def test_program_reached_by_exec_is_probed():
    """The llama code is in an executable started through env: no mmap brings it in."""
    harness.need_root()
    with harness.workdir() as d:
        src = os.path.join(harness.ROOT, "tests", "workload")
        exe = os.path.join(d, "llama-static")
        r = harness.run(["cc", "-O2", "-D_GNU_SOURCE", "-I", src, "-o", exe,
                         os.path.join(src, "driver.c"), os.path.join(src, "fake_llama.c")])
        assert r.returncode == 0, r.stderr
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--json", out, "--", "env", "X=1", exe, "--ctx-mib",
                              "16", "--prompt-batches", "2", "--batch-mib", "4"])
        assert r.returncode == 0, r.stderr
        doc = harness.load_json(out)
        harness.assert_close(harness.phase(doc, "context")["rss_growth_bytes"]["anon"],
                             16 * MIB, 64 * KIB, "context anon")
        assert harness.phase(doc, "prompt")["calls"] == 2
        # the wrapper never entered a phase: the report is about the llama process
        assert doc["rss_peak_pid"] == doc["target"]["pid"]  # env execs: same pid


def test_attach_sees_memory_already_held():
    harness.need_root()
    with harness.workdir() as d:
        prog = build(d, "hold", r"""
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void)
{
	size_t n = 96UL << 20;
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	printf("ready\n");
	fflush(stdout);
	sleep(3);
	return 0;
}
""")
        p = subprocess.Popen([prog], stdout=subprocess.PIPE, text=True)
        try:
            assert p.stdout.readline().strip() == "ready"
            with open("/proc/%d/status" % p.pid) as f:
                anon = int(re.search(r"RssAnon:\s+(\d+)", f.read()).group(1)) * KIB
            out = os.path.join(d, "out.json")
            r = harness.memphase(["attach", "-p", str(p.pid), "--json", out])
            assert r.returncode == 0, r.stderr
        finally:
            p.kill()
            p.wait()
        doc = harness.load_json(out)
        peak = doc["rss_peak_bytes"]["anon"]
        # held before memphase came: a peak, not growth (approximate counters, 2%)
        assert abs(peak - anon) <= 0.02 * anon, (peak, anon)
        assert harness.phase(doc, "attached")["rss_growth_bytes"]["anon"] < 4 * MIB


def test_forked_children_balance():
    """A child's inherited pages are neither growth nor, when it exits, shrink."""
    harness.need_root()
    with harness.workdir() as d:
        prog = build(d, "forker", FORKER)
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--stacks", "none", "--json", out, "--", prog])
        assert r.returncode == 0, r.stderr
        st = harness.phase(harness.load_json(out), "startup")
        grown, shrunk = st["rss_growth_bytes"]["anon"], st["rss_shrink_bytes"]["anon"]
        harness.assert_close(grown, (64 + 3 * 8) * MIB, 512 * KIB, "anon growth")
        harness.assert_close(shrunk, grown, 512 * KIB, "anon shrink")


def test_command_inherits_nothing_from_memphase():
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--json", out, "--", "sh", "-c",
                              "grep SigIgn /proc/self/status; ls -l /proc/$$/fd"])
        assert r.returncode == 0, r.stderr
        ign = int(re.search(r"SigIgn:\s+([0-9a-f]+)", r.stdout).group(1), 16)
        assert not ign & (1 << 12), "SIGPIPE is ignored in the command: %x" % ign
        assert "out.json" not in r.stdout, "the command holds memphase's output file"


def test_duration_detaches():
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        t0 = time.time()
        # files, not pipes: the command keeps memphase's stdout open after it detaches
        with open(os.path.join(d, "log"), "w") as log:
            rc = subprocess.call(harness.mp_argv(["run", "--duration", "1", "--json", out,
                                  "--", "sleep", "4"]), stdout=log, stderr=log)
        assert rc == 0, open(os.path.join(d, "log")).read()
        assert time.time() - t0 < 3.5
        doc = harness.load_json(out)
        assert doc["target"]["exit"] is None, doc["target"]
        pid = doc["target"]["pid"]
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        assert state in "SR", "the command is not running on its own: %s" % state
        os.kill(pid, 9)


def test_wrapper_reports_its_largest_child():
    """sh -c running two llama processes: the headline is about the larger one."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        drv = harness.DRIVER
        r = harness.memphase(["run", "--json", out, "--", "sh", "-c",
                              "%s --ctx-mib 64 --tokens 2; %s --ctx-mib 4 --tokens 2; "
                              "sleep 0.3" % (drv, drv)])
        assert r.returncode == 0, r.stderr
        doc = harness.load_json(out)
        assert doc["rss_peak_pid"] != doc["target"]["pid"], doc["rss_peak_pid"]
        assert doc["rss_peak_bytes"]["anon"] >= 64 * MIB, doc["rss_peak_bytes"]
        assert "largest process: llama-driver" in r.stdout
        # the time after the last llama process ended is the wrapper's (startup)
        assert harness.phase(doc, "teardown")["time_s"] < 0.2, harness.phase(doc, "teardown")


def test_sigkill_of_memphase_leaves_no_stopped_target():
    """The BPF side holds a target at each new library until memphase probes it; if
    memphase is killed meanwhile, its watchdog lets the target go."""
    harness.need_root()
    with harness.workdir() as d:
        libs = []
        for i in range(40):
            src = os.path.join(d, "l%d.c" % i)
            with open(src, "w") as f:
                f.write("int f%d(void) { return %d; }\n" % (i, i))
            lib = os.path.join(d, "l%d.so" % i)
            r = harness.run(["cc", "-shared", "-fPIC", "-o", lib, src])
            assert r.returncode == 0, r.stderr
            libs.append(lib)
        prog = build(d, "dl", r"""
#include <dlfcn.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		dlopen(argv[i], RTLD_NOW);
		usleep(3000);
	}
	sleep(3);
	return 0;
}
""", ["-ldl"])
        for delay in (0.15, 0.3, 0.45):
            # same process group as the tests: were it orphaned, the kernel would
            # SIGHUP+SIGCONT a stopped member and the check would prove nothing
            p = subprocess.Popen(harness.mp_argv(["run", "--no-tui", "--", prog] + libs),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(delay)
            kids = harness.run(["pgrep", "-P", str(p.pid)]).stdout.split()
            p.kill()
            p.wait()
            time.sleep(0.5)
            for k in kids:
                try:
                    with open("/proc/%s/status" % k) as f:
                        state = re.search(r"State:\s+(\S)", f.read()).group(1)
                except OSError:
                    continue
                try:
                    assert state != "T", "pid %s left stopped after memphase was killed" % k
                finally:
                    os.kill(int(k), 9)


def test_swarm_of_address_spaces_each_its_own_peak():
    """300 processes alive at once (tests/workload/swarm.c), child i touching (i % 8 + 1) MiB:
    memphase keeps 301 address spaces side by side in its table (array slots near each other's
    ids), and each child's peak is what it inherited plus what it touched, the same for all
    (another's events charged to it would move its peak by MiBs)."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--no-tui", "--stacks", "none", "--json", out, "--",
                              os.path.join(harness.WORKLOAD, "swarm"), "300"])
        assert r.returncode == 0, r.stderr
        kids = {int(pid): int(mib) for pid, mib in re.findall(r"^(\d+) (\d+)$", r.stdout, re.M)}
        assert len(kids) == 300, r.stdout[-500:]
        procs = {p["pid"]: p for p in harness.load_json(out)["processes"]}
        missing = [pid for pid in kids if pid not in procs]
        assert not missing, "children not reported: %s" % missing[:10]
        # peak minus what the child touched: what it inherited, one value for all
        base = {pid: procs[pid]["rss_peak_total_bytes"] - (mib << 20) for pid, mib in kids.items()}
        lo, hi = min(base.values()), max(base.values())
        assert hi - lo <= 128 * KIB, "inherited part of the peaks from %d to %d KiB: %s" % (
            lo // KIB, hi // KIB, sorted(base.values())[:3] + sorted(base.values())[-3:])


SLOTMATES = TOUCH + r"""
#include <fcntl.h>
#include <stdio.h>

/* "pid VmRSS-in-KiB" on fd 1, from the kernel's own count */
static void say_rss(void)
{
	char buf[4096], line[64], *v;
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (n <= 0)
		_exit(2);
	buf[n] = 0;
	v = strstr(buf, "VmRSS:");
	n = snprintf(line, sizeof(line), "%d %ld\n", getpid(), v ? atol(v + 6) : -1L);
	if (write(1, line, n) != n)
		_exit(2);
	close(fd);
}

/* Forks short-lived children until one's pid is the parent's modulo 4096 (memphase's slot
 * of it): that one touches mib MiB, says its RSS and waits for the parent's word. */
int main(void)
{
	static const size_t mib[2] = { 24, 40 };
	int go[2], ready[2], k, n = 0;
	pid_t me = getpid(), kept[2];
	char c;

	if (pipe(go) || pipe(ready))
		return 1;
	touch(16);
	for (k = 0; k < 2; k++) {
		for (;; n++) {
			pid_t ch = fork();

			if (ch < 0 || n > 1000000)
				return 1;
			if (!ch) {
				if ((getpid() & 4095) != (me & 4095))
					_exit(0);
				close(go[1]);	/* the parent's close is the word */
				touch(mib[k]);
				say_rss();
				if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) < 0)
					_exit(1);
				_exit(0);
			}
			if ((ch & 4095) == (me & 4095)) {
				kept[k] = ch;
				break;
			}
			waitpid(ch, NULL, 0);
		}
		if (read(ready[0], &c, 1) != 1)
			return 1;
	}
	say_rss();
	dprintf(1, "forks %d\n", n);
	close(go[1]);
	for (k = 0; k < 2; k++)
		waitpid(kept[k], NULL, 0);
	return 0;
}
"""


def test_processes_that_share_a_slot_are_each_counted():
    """memphase keeps a process in a slot of a 4096-slot table chosen by its pid: the program
    forks thousands of short children until two have its pid modulo 4096, and each of the
    three then holds its own memory (16, +24, +40 MiB). Each one's peak is its own, none
    is lost, and the short children's exits in between leave the table usable."""
    harness.need_root()
    with harness.workdir() as d:
        prog = build(d, "slotmates", SLOTMATES)
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--no-tui", "--stacks", "none", "--json", out, "--", prog],
                             timeout=180)
        assert r.returncode == 0, r.stderr
        held = {int(pid): int(kib) for pid, kib in re.findall(r"^(\d+) (\d+)$", r.stdout, re.M)}
        assert len(held) == 3 and len({p % 4096 for p in held}) == 1, r.stdout
        doc = harness.load_json(out)
        procs = {p["pid"]: p for p in doc["processes"]}
        for pid, kib in held.items():
            assert pid in procs, "pid %d (one of slot %d) not reported (lost %s, %d processes)" \
                % (pid, pid % 4096, doc["lost"], doc["processes_total"])
            # each one's peak is what the kernel counted for it (VmRSS at its peak); memphase
            # reads up to ~750 KiB more here, on every process alike (see docs/internals.md)
            peak = procs[pid]["rss_peak_total_bytes"]
            assert kib * KIB - 128 * KIB <= peak <= kib * KIB + MIB, \
                "pid %d's peak: %d KiB, the kernel's %d KiB" % (pid, peak // KIB, kib)
        # the two children differ by what they touched: none had another's events
        kids = sorted((p for p in held if p != min(held, key=held.get)), key=held.get)
        harness.assert_close(procs[kids[1]]["rss_peak_total_bytes"] -
                             procs[kids[0]]["rss_peak_total_bytes"], 16 * MIB, 128 * KIB,
                             "the 40 MiB child's peak less the 24 MiB one's")
        assert doc["lost"]["events"] == 0, doc["lost"]


def test_one_peak_for_the_processes_together():
    """A parent holding 64 MiB whose three children grow 8 MiB each: the summary's RSS peak
    is the JSON's rss_peak_bytes, the processes' together: never below one process's own
    peak nor above their peaks' sum; the largest process's is beside it; no cause's share
    of the peak is above 100%."""
    harness.need_root()
    with harness.workdir() as d:
        prog = build(d, "forker", FORKER)
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--no-tui", "--json", out, "--", prog])
        assert r.returncode == 0, r.stderr
        doc = harness.load_json(out)
        tree, own = doc["rss_peak_bytes"]["total"], doc["rss_peak_process_bytes"]["total"]
        peaks = [p["rss_peak_total_bytes"] for p in doc["processes"]]
        assert len(peaks) == 4, doc["processes"]
        assert max(peaks) <= tree <= sum(peaks), (tree, peaks)
        assert own == max(p["rss_peak_total_bytes"] for p in doc["processes"]
                          if p["pid"] == doc["rss_peak_pid"]), (own, doc["rss_peak_pid"])
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("RSS peak ")]
        assert line and "the processes together" in line[0], r.stdout[:600]
        # the summary's 3 significant digits: half of the last one printed
        shown = line[0].split()[2]
        digits = len(shown.split(".")[1]) if "." in shown else 0
        assert line[0].split()[3] == "MiB" and \
            abs(float(shown) * MIB - tree) <= 0.5 * 10 ** -digits * MIB, (line, tree)
        assert any(ln.startswith(("largest process: ", "the command alone "))
                   for ln in r.stdout.splitlines()), r.stdout[:600]
        assert all(c["share_of_peak"] is None or c["share_of_peak"] <= 1.0
                   for c in doc["causes"]), doc["causes"]
