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
