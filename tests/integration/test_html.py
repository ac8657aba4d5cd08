# SPDX-License-Identifier: GPL-2.0
"""--html: one self-contained file, checked in headless chromium (puppeteer-core): no
console errors, no request leaves the file, the chart and the table show the stand-in's
phases, selecting a phase (its row, its band in the chart) makes the flame graph's total
that phase's sampled bytes, dragging over the run brings back everything, a screenshot."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MIB  # noqa: E402
import test_oom  # noqa: E402
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
