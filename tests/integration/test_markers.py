# SPDX-License-Identifier: GPL-2.0
"""User phase markers written as people write C++ names ("ns::f", demangled)."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KIB, MIB  # noqa: E402

CPP = r"""
#include <cstddef>
#include <sys/mman.h>
namespace app {
struct Engine {
	__attribute__((noinline)) void warm_up(int mib);
};
void Engine::warm_up(int mib)
{
	size_t n = (size_t)mib << 20;
	char *p = (char *)mmap(nullptr, n, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(p, n, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i += 4096)
		((volatile char *)p)[i] = 1;
}
}
int main()
{
	app::Engine e;
	e.warm_up(8);
	return 0;
}
"""


def test_cxx_marker_by_demangled_name():
    harness.need_root()
    if not shutil.which("g++"):
        raise harness.Skip("g++ is not installed")
    with harness.workdir() as d:
        src, exe, out = (os.path.join(d, f) for f in ("app.cpp", "app", "out.json"))
        with open(src, "w") as f:
            f.write(CPP)
        r = harness.run(["g++", "-O2", "-o", exe, src])
        assert r.returncode == 0, r.stderr
        r = harness.memphase(["run", "--no-preset", "--json", out,
                              "--phase", "warm=app::Engine::warm_up", "--", exe])
        assert r.returncode == 0, r.stderr
        p = harness.phase(harness.load_json(out), "warm")
        assert p["calls"] == 1, p
        harness.assert_close(p["rss_growth_bytes"]["anon"], 8 * MIB, 64 * KIB, "warm anon")


DLOPEN = r"""
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "llama.h"

/* Loads libllama.so at run time, like ggml backends are loaded, and uses it at once. */
int main(int argc, char **argv)
{
	struct fakellama_work w;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	int (*configure)(const struct fakellama_work *);
	struct llama_model *(*load)(const char *, struct llama_model_params);
	struct llama_model_params (*mparams)(void);
	struct llama_context *(*init)(struct llama_model *, struct llama_context_params);
	struct llama_context_params (*cparams)(void);

	if (!h)
		return 1;
	configure = dlsym(h, "fakellama_configure");
	load = dlsym(h, "llama_model_load_from_file");
	mparams = dlsym(h, "llama_model_default_params");
	init = dlsym(h, "llama_init_from_model");
	cparams = dlsym(h, "llama_context_default_params");
	memset(&w, 0, sizeof(w));
	w.ctx_bytes = 24ULL << 20;
	configure(&w);
	return init(load(NULL, mparams()), cparams()) ? 0 : 2;
}
"""


def test_dlopened_library_probed_in_time():
    """A library mapped by dlopen() is probed before the target may call into it (run
    mode holds the target at the mapping), so the first call's phase is not missed."""
    harness.need_root()
    with harness.workdir() as d:
        src, exe, out = (os.path.join(d, f) for f in ("dl.c", "dl", "out.json"))
        with open(src, "w") as f:
            f.write(DLOPEN)
        inc = os.path.join(harness.ROOT, "tests", "workload")
        r = harness.run(["cc", "-O2", "-I", inc, "-o", exe, src, "-ldl"])
        assert r.returncode == 0, r.stderr
        lib = os.path.join(harness.WORKLOAD, "libllama.so")
        for _ in range(3):
            r = harness.memphase(["run", "--json", out, "--", exe, lib])
            assert r.returncode == 0, r.stderr
            doc = harness.load_json(out)
            assert doc["target"]["exit"]["code"] == 0, doc["target"]
            ctx = harness.phase(doc, "context")
            assert ctx["calls"] == 1, ctx
            harness.assert_close(ctx["rss_growth_bytes"]["anon"], 24 * MIB, 64 * KIB,
                                 "context anon")


def test_checkpoints_apart_from_state():
    """llama_state_seq_*_ext with LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY (context checkpoints)
    count in 'checkpoint', whole-sequence saves (the prompt cache) in 'state'."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--json", out, "--", harness.DRIVER, "--ctx-mib", "8",
                              "--prompt-batches", "1", "--batch-mib", "4", "--tokens", "4",
                              "--token-kib", "64", "--state-mib", "16", "--checkpoints", "3",
                              "--checkpoint-mib", "4"])
        assert r.returncode == 0, r.stderr
        doc = harness.load_json(out)
        st, ck = harness.phase(doc, "state"), harness.phase(doc, "checkpoint")
        harness.assert_close(st["rss_growth_bytes"]["anon"], 16 * MIB, 64 * KIB, "state anon")
        harness.assert_close(ck["rss_growth_bytes"]["anon"], 12 * MIB, 64 * KIB,
                             "checkpoint anon")
        assert ck["calls"] == 6 and ck["entries"] == 1, ck


def _links_of(pid):
    """{link type: [prog id, ...]} of the BPF links process pid holds (from fdinfo)."""
    out = {}
    fddir = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(fddir):
        try:
            with open(os.path.join(fddir, fd)) as f:
                info = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
        except OSError:
            continue
        if "link_type" in info:
            out.setdefault(info["link_type"], []).append(int(info["prog_id"]))
    return out


def test_markers_of_a_file_are_one_multi_uprobe_link():
    """Where the kernel has multi-uprobe links, the markers of one file are one link (one RCU
    wait to detach instead of one per marker), and their return probes one more: while the
    stand-in runs, memphase holds exactly two uprobe_multi links for libllama.so (entries,
    returns, of two programs) and no single uprobe."""
    harness.need_root()
    with open("/proc/kallsyms") as f:
        if "bpf_uprobe_multi_link_attach" not in f.read():
            raise harness.Skip("this kernel has no multi-uprobe links (6.6+)")
    import subprocess
    import time
    with harness.workdir() as d:
        out = os.path.join(d, "out.json")
        p = subprocess.Popen(harness.mp_argv(["run", "--no-tui", "--json", out, "--",
                                              harness.DRIVER, "--start-delay-ms", "2500"]),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            links = {}
            deadline = time.time() + 10
            while time.time() < deadline and "uprobe_multi" not in links:
                time.sleep(0.2)
                links = _links_of(p.pid)
        finally:
            _, err = p.communicate(timeout=60)
        # entries and returns: one link each (the kernel's fdinfo names the return kind)
        assert len(links.get("uprobe_multi", [])) == 1, links
        assert len(links.get("uretprobe_multi", [])) == 1, links
        # no single uprobe: the only perf link is the kmem:rss_stat tracepoint's
        assert len(links.get("perf", [])) <= 1, links
        assert p.returncode == 0, err
        attached = harness.load_json(out)["markers_attached"]
        assert attached >= 9, attached
