# SPDX-License-Identifier: GPL-2.0
"""--html: one self-contained file, checked in headless chromium (puppeteer-core): no
console errors, no request leaves the file, the chart and the table show the stand-in's
phases, selecting a phase (its row, its band in the chart) makes the flame graph's total
that phase's sampled bytes, dragging over the run brings back everything, a screenshot.
Requests: a slice each in the chart, the table's cells are the JSON's requests[], selecting
one (its row, its slice) makes the flame graph's and the causes' totals the bytes sampled in
its time range; the causes table is the JSON's causes[]."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MIB  # noqa: E402
import test_oom  # noqa: E402
import test_processes  # noqa: E402
import test_record  # noqa: E402
import test_trace  # noqa: E402


def check_in_browser(html, phase, shot):
    chromium = test_trace.need_browser()
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "html_check.js")
    r = subprocess.run(["node", script, chromium, html, phase, shot], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, NODE_PATH=os.path.join(
                           test_trace.NODE_DIR, "node_modules")))
    assert r.returncode == 0 and r.stdout.strip(), r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_html_report_follows_the_selected_phase():
    harness.need_root()
    with harness.workdir() as d:
        h, j = os.path.join(d, "r.html"), os.path.join(d, "r.json")
        r = harness.memphase(["run", "--no-tui", "--html", h, "--json", j] +
                             test_record.SAMPLES + ["--"] + test_record.driver(d))
        assert r.returncode == 0, r.stderr
        doc = harness.load_json(j)
        page = open(h).read()
        # self-contained: no external script, style, image or font
        for bad in ("src=", "href=", "@import", "url("):
            assert bad not in page, bad
        shot = os.path.join(harness.BUILD, "html-report.png")
        out = check_in_browser(h, "generate", shot)
        assert out["errors"] == [] and out["requests"] == [], out
        names = [p["name"] for p in doc["phases"]]
        assert out["rows"] == names and set(out["bands"]) == set(names), out
        gen = harness.phase(doc, "generate")["stacks"]["sampled_bytes"]
        total = sum(p["stacks"]["sampled_bytes"] for p in doc["phases"])
        assert gen > 0 and out["total"] == total, (out, total)
        assert out["row_total"] == gen and out["band_total"] == gen, (out, gen)
        assert out["drag_total"] == total and out["frames"] > 3, out
        assert out["matched"].startswith("matched"), out
        assert os.path.getsize(shot) > 10000


def request_row(i, r):
    """What the page's request table must hold for JSON request i (0-based), as strings."""
    num = lambda v: repr(v) if isinstance(v, float) else str(v)  # noqa: E731
    g = r["rss_growth_bytes"]
    row = [str(i + 1), num(r["start_s"]), "" if r["end_s"] is None else num(r["end_s"]),
           str(r["tokens"]["prompt"]), str(r["tokens"]["generated"])] + \
        [str(g[c]) for c in ("anon", "file", "shmem", "swap")] + \
        [",".join("%s:%d" % (p["name"], p["growth_bytes"]) for p in r["phases"])]
    if "pinned_bytes" in r:
        # what the request kept, as the summary shows it
        row += [str(r["pinned_bytes"] - r["pinned_freed_bytes"]),
                str(r["managed_bytes"] - r["managed_freed_bytes"]),
                "" if r["vram_delta_bytes"] is None else str(r["vram_delta_bytes"])]
    return row + ["oom" if r["oom_killed"] else ""]


def same_row(page, want):
    """Cells equal, numbers as numbers (JS and Python print some doubles differently)."""
    if len(page) != len(want):
        return False
    for a, b in zip(page, want):
        if a != b and not (a and b and float(a) == float(b)):
            return False
    return True


def test_html_requests_and_causes_follow_the_selection():
    """llama-explain with --request on its handler: 4 requests, each growing by causes the
    rules name. The request slices and lines, the request table against requests[], each
    request selected by its row and by its slice: the flame graph's total and the causes'
    total are what the page's samples hold in its range, and what `memphase report --from
    --to` of the recording samples in that range; the causes table against causes[]."""
    harness.need_root()
    with harness.workdir() as d:
        model = harness.make_model(os.path.join(d, "model.bin"), 32)
        h, j, rec = (os.path.join(d, n) for n in ("r.html", "r.json", "r.mprec"))
        r = harness.memphase(["run", "--no-tui", "--html", h, "--json", j, "--record", rec,
                              "--request", "server_context::handle_request",
                              "--ringbuf-kib", "131072"] + test_record.SAMPLES +
                             ["--", os.path.join(harness.WORKLOAD, "llama-explain"), "--model",
                              model, "--requests", "4", "--report",
                              os.path.join(d, "report.txt")])
        assert r.returncode == 0, r.stderr
        doc = harness.load_json(j)
        reqs = doc["requests"]
        assert len(reqs) == 4 and doc["causes"], (reqs, doc["causes"])
        shot = os.path.join(harness.BUILD, "html-requests.png")
        out = check_in_browser(h, "state", shot)
        assert out["errors"] == [] and out["requests"] == [], out
        assert out["req_slices"] == 4 and out["req_lines"] == 4, out
        want = [request_row(i, q) for i, q in enumerate(reqs)]
        assert len(out["req_rows"]) == 4 and all(same_row(a, b) for a, b in
                                                 zip(out["req_rows"], want)), \
            (out["req_rows"], want)
        # each request: its row and its slice select its range, the causes follow
        assert out["req_expected"][:3] == [out["req_totals"][i] for i in range(3)], out
        assert out["req_totals"] == out["req_expected"] == out["slice_totals"] == \
            out["req_causes"], out
        assert all(t > 0 for t in out["req_totals"][:3]), out
        assert sum(out["req_totals"]) <= out["total"], out
        # the same range cut from the recording by memphase report (C, not the page)
        for i in (1, 2):
            w = os.path.join(d, "w%d.json" % i)
            p = harness.memphase(["report", rec, "--from", repr(reqs[i]["start_s"]), "--to",
                                  repr(reqs[i]["end_s"]), "--json", w])
            assert p.returncode == 0, p.stderr
            cut = sum(x["stacks"]["sampled_bytes"] for x in harness.load_json(w)["phases"])
            assert cut == out["req_totals"][i], (i, cut, out["req_totals"])
        # the whole run's causes: causes[] of the JSON, the rest unmatched
        page = sorted((c[0], int(c[1]), float(c[3]), c[4], c[5]) for c in out["causes"])
        js = sorted((c["name"], c["bytes"], c["share_of_peak"], c["rule"], c["remedy"])
                    for c in doc["causes"])
        assert page == js, (page, js)
        assert out["causes_unmatched"] == ([doc["causes_unmatched_bytes"]]
                                           if doc["causes_unmatched_bytes"] else []), out
        assert os.path.getsize(shot) > 10000


def test_html_at_420_requests():
    """A synthetic recording (scripts/mkrec.py) of 420 requests and 20,000 samples: a slice
    each (2.2 px) and no lines, the table 200 rows at first and 200 more when it scrolls to
    their end, the last request selected in the chart: its row (not laid out yet) selected,
    the flame graph's total what the page's samples hold in its range."""
    with harness.workdir() as d:
        rec, h = os.path.join(d, "s.mprec"), os.path.join(d, "s.html")
        subprocess.run([sys.executable, os.path.join(harness.ROOT, "scripts", "mkrec.py"), rec,
                        "840", "20000", "60"], check=True)
        p = harness.memphase(["report", rec, "--html", h])
        assert p.returncode == 0, p.stderr
        out = check_in_browser(h, "generate", os.path.join(d, "s.png"))
        assert out["errors"] == [] and out["req_slices"] == 420, out["errors"]
        assert out["req_lines"] == 0 and len(out["req_rows"]) == 200, len(out["req_rows"])
        assert out["rows_scrolled"] == 400, out["rows_scrolled"]
        assert out["req_totals"] == out["req_expected"][:8] == out["slice_totals"], out
        last = out["last"]
        assert last["rows"] == 420 and last["selected"] == [420], last
        assert last["total"] == last["expected"] > 0, last


def test_html_marks_the_oom_kill_and_the_limit():
    harness.need_root()
    with harness.workdir() as d, test_oom.Cgroup(96 * MIB) as cg:
        h = os.path.join(d, "o.html")
        rec = os.path.join(d, "o.mprec")
        r = harness.memphase(["run", "--no-tui", "--record", rec, "--"] +
                             cg.wrap(test_oom.growing_driver(d, 100)))
        assert r.returncode == 128 + 9, r.stderr
        p = harness.memphase(["report", rec, "--html", h])
        assert p.returncode == 0, p.stderr
        out = check_in_browser(h, "generate", os.path.join(d, "o.png"))
        assert out["errors"] == [] and out["ooms"] == 1, out
        assert '"limit":%d' % (96 * MIB) in open(h).read()


SPIKES = test_processes.TOUCH + r"""
#include <time.h>

/* 16 MiB held; three times 64 MiB more that come and go within a few ms, between two of
 * memphase's readings (every 100 ms) as often as not */
int main(void)
{
	struct timespec pause = { 0, 250 * 1000 * 1000 };

	touch(16);
	nanosleep(&pause, NULL);
	for (int i = 0; i < 3; i++) {
		size_t n = 64UL << 20;
		char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		for (size_t o = 0; o < n; o += 4096)
			((volatile char *)p)[o] = 1;
		munmap(p, n);
		nanosleep(&pause, NULL);
	}
	return 0;
}
"""


def resident(s):
    return s["anon"] + s["file"] + s["shmem"]


def test_peaks_between_readings_reach_every_view():
    """RSS is read every 100 ms, and a spike of 64 MiB that comes and goes between two
    readings is a point of the timeline all the same (at the time BPF saw it end): the
    JSON's timeline, the trace's RSS counter and the HTML chart reach rss_peak_bytes, and
    the page prints the peak, with round ticks that carry their units."""
    harness.need_root()
    with harness.workdir() as d:
        prog = test_processes.build(d, "spikes", SPIKES)
        h, j, t = (os.path.join(d, n) for n in ("r.html", "r.json", "r.trace"))
        r = harness.memphase(["run", "--no-tui", "--html", h, "--json", j,
                              "--trace", t, "--", prog])
        assert r.returncode == 0, r.stderr
        doc = harness.load_json(j)
        peak = doc["rss_peak_bytes"]["total"]
        assert peak >= 80 * MIB, peak
        top = max(resident(s) for s in doc["timeline"]["samples"])
        assert peak - 256 * 1024 <= top <= peak, (top, peak)
        with open(t) as f:
            events = json.load(f)
        events = events["traceEvents"] if isinstance(events, dict) else events
        rss = [e["args"] for e in events if e.get("ph") == "C" and e.get("name") == "RSS bytes"]
        ctop = max(resident(a) for a in rss)
        assert peak - 256 * 1024 <= ctop <= peak, (ctop, peak)
        out = check_in_browser(h, "startup", os.path.join(harness.BUILD, "html-peaks.png"))
        assert out["errors"] == [] and out["requests"] == [], out
        assert len(out["peak_label"]) == 1 and out["peak_label"][0].startswith("RSS peak "), out
        # ticks: round numbers, each with its unit
        assert out["yticks"][0] == "0 B" and all(v.endswith(("B", "KiB", "MiB", "GiB"))
                                                 for v in out["yticks"]), out["yticks"]
        assert all(v.endswith(" s") for v in out["xticks"]), out["xticks"]
        for v in out["yticks"][1:]:
            num = float(v.split()[0])
            assert num == int(num) or num * 2 == int(num * 2), out["yticks"]
