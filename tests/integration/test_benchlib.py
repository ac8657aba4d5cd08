# SPDX-License-Identifier: GPL-2.0
"""The benchmark's statistics and readers (scripts/benchlib.py), on hand-computed inputs.

No root, no BPF: the inputs are small dicts and documents written here, and every expected value
is worked out in the comment beside it. The readers must fail loudly, naming the key, when a
figure the benchmark needs is missing (the old regex over the human summary printed '-').
"""
import contextlib
import io
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

sys.path.insert(0, os.path.join(harness.ROOT, "scripts"))
import bench_report  # noqa: E402
import benchlib  # noqa: E402
from benchlib import MissingFigure  # noqa: E402

FAULT_PROGS = ["handle_fault", "handle_fault_kernel", "handle_rss_stat"]


def raises(fn, *words):
    """fn() raises MissingFigure whose message holds every word; returns the message."""
    try:
        fn()
    except MissingFigure as e:
        msg = str(e)
        for w in words:
            assert w in msg, f"{w!r} not in the error {msg!r}"
        return msg
    raise AssertionError(f"no MissingFigure raised (wanted one naming {words})")


def doc(**over):
    """A memphase --json document with two phases and --bpf-stats figures."""
    d = {
        "phases": [{"name": "startup", "stacks": {"samples": 3, "sampled_bytes": 1}},
                   {"name": "load", "stacks": {"samples": 4, "sampled_bytes": 1}}],
        "lost": {"events": 0, "stacks": 2, "mapping_bytes": 0},
        "bpf_stats": {"programs": [
            {"name": "handle_fault", "runs": 1000, "run_time_ns": 100000, "ns_per_run": 100.0},
            {"name": "handle_fault_kernel", "runs": 10, "run_time_ns": 5000, "ns_per_run": 500.0},
            {"name": "handle_rss_stat", "runs": 2000, "run_time_ns": 300000,
             "ns_per_run": 150.0},
            {"name": "handle_exec", "runs": 1, "run_time_ns": 95000, "ns_per_run": 95000.0}],
            "total": {"runs": 3011, "run_time_ns": 500000}},
    }
    d.update(over)
    return d


def test_median_skips_none_and_averages_the_middle_pair():
    assert benchlib.med([5, None, 1, 3]) == 3
    assert benchlib.med([4, 1, 3, 2]) == 2.5      # (2 + 3) / 2
    assert benchlib.med([None]) is None
    assert benchlib.med([]) is None


def test_measured_drops_warmup_rounds_and_failed_runs():
    runs = [{"round": 0, "rc": 0}, {"round": 1, "rc": 0}, {"round": 2, "rc": 1},
            {"round": 3, "rc": 0}]
    assert [r["round"] for r in benchlib.measured(runs)] == [1, 3]


def test_ratio_is_median_over_baseline_median():
    base = [{"t": 100.0}, {"t": 110.0}, {"t": 90.0}]          # median 100
    rows = [{"t": 130.0}, {"t": 120.0}, {"t": 500.0}]         # median 130: one outlier ignored
    assert abs(benchlib.ratio(rows, base, "t") - 1.30) < 1e-12
    assert benchlib.ratio(rows, [], "t") is None
    assert benchlib.ratio([], base, "t") is None


def test_ratio_per_page_when_sizes_differ():
    # baseline: 1000 ms for 262144 pages; the other ran at a quarter of the size: 1000 ms for
    # 65536 pages, i.e. 4x the time per page
    base = [{"t": 1000.0, "pages": 262144}]
    rows = [{"t": 1000.0, "pages": 65536}, {"t": 1000.0, "pages": 65536}]
    assert abs(benchlib.ratio(rows, base, "t", per_page=True) - 4.0) < 1e-12


def test_bpf_time_per_fault():
    progs = benchlib.memphase_figures(doc(), "run", True)["progs"]
    r = benchlib.bpf_per_fault(progs, FAULT_PROGS, 1000, "run")
    # fault path: 100000 + 5000 + 300000 = 405000 ns over 1000 faults
    assert r["ns_fault"] == 405.0, r
    # every program: 500000 ns over 1000 faults
    assert r["ns_all"] == 500.0, r
    # per traced fault: 405000 ns over handle_fault's 1000 runs
    assert r["ns_traced"] == 405.0, r
    assert benchlib.ns_per_run(progs, "handle_rss_stat", "run") == 150.0


def test_bpf_time_per_sample_over_none_mode():
    progs = {"handle_rss_stat": (2000, 300000)}
    # 2000 runs priced at the none mode's 100 ns = 200000 ns; extra 100000 ns over 50 samples
    # and 1000 faults
    assert benchlib.sample_cost(progs, "handle_rss_stat", 100.0, 50, 1000, "run") == (2000.0,
                                                                                       100.0)
    assert benchlib.sample_cost(progs, "handle_rss_stat", 100.0, 0, 1000, "run")[0] is None


def test_memphase_figures_from_json():
    r = benchlib.memphase_figures(doc(), "run", True)
    assert r["samples"] == 7 and r["lost"] == 2, r          # 3 + 4 samples over the phases
    assert r["progs"]["handle_fault_kernel"] == (10, 5000), r
    # without --bpf-stats, bpf_stats is null and not asked for
    r = benchlib.memphase_figures(doc(bpf_stats=None), "run", False)
    assert r["progs"] is None and r["samples"] == 7, r


def test_reader_names_the_missing_key():
    d = doc()
    del d["lost"]["stacks"]
    raises(lambda: benchlib.memphase_figures(d, "r1/out.json", True), "r1/out.json",
           "'lost.stacks'")
    d = doc()
    del d["phases"][1]["stacks"]
    raises(lambda: benchlib.memphase_figures(d, "r1/out.json", True), "phases[1]",
           "'stacks'")
    d = doc()
    del d["bpf_stats"]
    raises(lambda: benchlib.memphase_figures(d, "r1/out.json", True), "'bpf_stats'")
    # --bpf-stats given, but the run's JSON has it null: an error, not a blank cell
    raises(lambda: benchlib.memphase_figures(doc(bpf_stats=None), "x", True), "'bpf_stats'",
           "null")
    d = doc()
    del d["bpf_stats"]["programs"][0]["run_time_ns"]
    raises(lambda: benchlib.memphase_figures(d, "x", True), "programs[0]", "'run_time_ns'")
    # a fault-path program missing from the stats
    progs = {"handle_fault": (1, 1)}
    raises(lambda: benchlib.bpf_per_fault(progs, FAULT_PROGS, 10, "x"), "handle_rss_stat")
    # runs counted but no time: BPF_STATS_RUN_TIME was off, ns/fault would be a false 0
    d = doc()
    for p in d["bpf_stats"]["programs"]:
        p["run_time_ns"] = 0
    raises(lambda: benchlib.memphase_figures(d, "x", True), "run time")


def test_json_file_missing_or_truncated():
    with tempfile.TemporaryDirectory(prefix="memphase-bench-") as d:
        raises(lambda: benchlib.read_json(os.path.join(d, "out.json")), "out.json",
               "no such file")
        p = os.path.join(d, "cut.json")
        with open(p, "w") as f:
            f.write(json.dumps(doc())[:40])
        raises(lambda: benchlib.read_json(p), "cut.json", "not JSON")
        with open(p, "w") as f:
            json.dump(doc(), f)
        assert benchlib.read_json(p)["lost"]["stacks"] == 2


def test_key_value_figures():
    d = {"touch_ms": "12.5", "pages": "x"}
    assert benchlib.need_num(d, "touch_ms", "stdout") == 12.5
    raises(lambda: benchlib.need_num(d, "minflt_total", "r1/stdout"), "r1/stdout",
           "'minflt_total'")
    raises(lambda: benchlib.need_num(d, "pages", "r1/stdout"), "'pages'", "not a number")


def test_perf_figures():
    err = ("[ perf record: Woken up 3 times to write data ]\n"
           "Processed 1000 samples and lost 20.00%!\n"
           "[ perf record: Captured and wrote 15.9 MB /tmp/perf.data (800 samples) ]\n")
    assert benchlib.perf_figures(err, "x") == {"samples": 800, "lost": 200, "lost_pct": 20.0}
    ok = "[ perf record: Captured and wrote 1.0 MB f (5 samples) ]\n"
    assert benchlib.perf_figures(ok, "x") == {"samples": 5, "lost": 0, "lost_pct": 0.0}
    raises(lambda: benchlib.perf_figures("perf: killed\n", "r2/stderr"), "r2/stderr",
           "Captured and wrote")


def test_steady_window():
    # t(ms) stat sched threads hwm _ child state: memphase starts the workload stopped (T) and
    # resumes it at 300 ms; it runs until 3000 ms and is gone at 3100 ms
    rows = []
    for t in range(0, 3200, 100):
        state = "T" if t < 300 else ("R" if t <= 3000 else "-")
        child = 0 if t > 3000 else 42
        rows.append({"t": float(t), "stat": t / 100.0, "sched": t / 50.0, "threads": 1,
                     "hwm": 1, "child": child, "state": state})
    r = benchlib.steady_window(rows, 3400.0, "s")
    assert r["startup_ms"] == 300.0 and not r["startup_first"], r
    assert r["target_ms"] == 2700.0 and r["exit_ms"] == 400.0, r   # 3000 - 300; 3400 - 3000
    # window 1000..3000 ms: sched grows 2 ms per 100 ms -> 40 ms over 2000 ms = 2% of a core
    assert r["win_from_s"] == 1.0 and r["win_s"] == 2.0 and r["steady_src"] == "sched", r
    assert abs(r["steady_cpu_ms"] - 40.0) < 1e-9 and abs(r["steady_pct"] - 2.0) < 1e-9, r
    raises(lambda: benchlib.steady_window(rows[:12], 3400.0, "live-r1/samples.tsv"),
           "live-r1/samples.tsv", "under 1 s")


# --- the floor (scripts/floor) and issue 12's comparisons ----------------------------------------

# a floor run's output file, as scripts/floor/floor.c writes it
FLOOR_FILE = """mode=classic
progs=floor_fault floor_rss_classic
prog_floor_fault_runs=1200
prog_floor_fault_run_time_ns=60000
prog_floor_rss_classic_runs=1500
prog_floor_rss_classic_run_time_ns=45000
prog_floor_fork_runs=2
prog_floor_fork_run_time_ns=1000
counted_faults=1010
counted_rss=1020
exit_code=0
"""


def floor_kv(text_):
    with tempfile.TemporaryDirectory(prefix="memphase-bench-") as d:
        p = os.path.join(d, "floor")
        with open(p, "w") as f:
            f.write(text_)
        return benchlib.kv(p)


def test_floor_figures_and_its_time_per_fault():
    fl = benchlib.floor_figures(floor_kv(FLOOR_FILE), "r1/floor", 1000)
    assert fl["fault_progs"] == ["floor_fault", "floor_rss_classic"], fl
    assert fl["progs"]["floor_fork"] == (2, 1000) and fl["counted"] == 1010, fl
    r = benchlib.bpf_per_fault(fl["progs"], fl["fault_progs"], 1000, "r1/floor")
    # fault path: 60000 + 45000 ns over the workload's 1000 faults; all: + the fork's 1000 ns;
    # per traced fault: over floor_fault's 1200 runs (other processes' faults filtered out)
    assert r["ns_fault"] == 105.0 and r["ns_all"] == 106.0, r
    assert r["ns_traced"] == 87.5 and r["fault_progs"] == fl["fault_progs"], r
    assert r["traced"] == 1.2, r                    # 1200 runs of floor_fault, 1000 faults


def test_floor_figures_missing_or_target_missed():
    raises(lambda: benchlib.floor_figures(
        floor_kv(FLOOR_FILE.replace("prog_floor_rss_classic_run_time_ns", "x")), "r2/floor",
        1000), "r2/floor", "'prog_floor_rss_classic_run_time_ns'")
    raises(lambda: benchlib.floor_figures(
        floor_kv(FLOOR_FILE.replace("prog_floor_fault_runs", "x")), "r2/floor", 1000),
        "'prog_floor_fault_runs'")
    raises(lambda: benchlib.floor_figures(
        floor_kv(FLOOR_FILE.replace("progs=", "x=")), "r2/floor", 1000), "'progs'")
    raises(lambda: benchlib.floor_figures(
        floor_kv(FLOOR_FILE.replace("counted_faults", "x")), "r2/floor", 1000),
        "'counted_faults'")
    # it counted fewer of its target's faults than pages were touched: its filter failed, and
    # its time would be that of a filter, not of the floor
    raises(lambda: benchlib.floor_figures(floor_kv(FLOOR_FILE), "r3/floor", 1011), "r3/floor",
           "missed its target")


# a run of the one-tracepoint design's programs, as scripts/onetp/onetp.c writes it (time mode)
ONETP_FILE = """mode=onetp-cpu
progs=onetp_fault onetp_fault_kernel
prog_onetp_fault_runs=1100
prog_onetp_fault_run_time_ns=88000
prog_onetp_fault_kernel_runs=3
prog_onetp_fault_kernel_run_time_ns=300
prog_onetp_fork_runs=1
prog_onetp_fork_run_time_ns=500
counted_faults=1004
counted_rss=0
charged_anon_bytes=4505600
diag_fast=990
diag_slow=14
exit_code=0
"""


def test_onetp_figures_and_its_time_per_fault():
    o = benchlib.onetp_figures(floor_kv(ONETP_FILE), "r1/onetp", 1000)
    assert o["fault_progs"] == ["onetp_fault", "onetp_fault_kernel"], o
    assert o["mode"] == "onetp-cpu" and o["counted"] == 1004, o
    # 4505600 B = 1100 pages of 4 KiB, for 1000 pages touched
    assert o["charged"] == 4505600 and abs(o["charged_ratio"] - 1.1) < 1e-12, o
    r = benchlib.bpf_per_fault(o["progs"], o["fault_progs"], 1000, "r1/onetp")
    # fault path: 88000 + 300 ns over 1000 faults; all: + the fork's 500 ns; per traced
    # fault: over onetp_fault's 1100 runs
    assert r["ns_fault"] == 88.3 and r["ns_all"] == 88.8 and r["ns_traced"] == 88300 / 1100, r


def test_onetp_figures_missing():
    raises(lambda: benchlib.onetp_figures(
        floor_kv(ONETP_FILE.replace("charged_anon_bytes", "x")), "r2/onetp", 1000),
        "r2/onetp", "'charged_anon_bytes'")
    raises(lambda: benchlib.onetp_figures(
        floor_kv(ONETP_FILE.replace("prog_onetp_fault_kernel_runs", "x")), "r2/onetp", 1000),
        "'prog_onetp_fault_kernel_runs'")
    # a floor's file is not the design's
    raises(lambda: benchlib.onetp_figures(floor_kv(FLOOR_FILE), "r3/onetp", 1000), "r3/onetp",
           "'mode'", "classic")
    # it read at fewer target faults than pages were touched: it missed its target
    raises(lambda: benchlib.onetp_figures(floor_kv(ONETP_FILE), "r4/onetp", 1005), "r4/onetp",
           "missed its target")


def test_floor_difference_and_ratio_are_per_round_medians():
    # listed out of round order: pairing must go by round, not by position
    floor = [{"round": 3, "ns": 150.0}, {"round": 1, "ns": 100.0}, {"round": 2, "ns": 200.0},
             {"round": 5, "ns": 90.0}]
    rows = [{"round": 1, "ns": 170.0}, {"round": 2, "ns": 260.0}, {"round": 3, "ns": 400.0},
            {"round": 4, "ns": 999.0},      # no floor run in round 4: not paired
            {"round": 5, "ns": None}]        # no figure: not paired
    a = benchlib.above_floor(rows, floor, "ns")
    # per round: 170-100 = 70, 260-200 = 60, 400-150 = 250: median 70 (the difference of the
    # medians, 260 - 150 = 110, would be wrong; so would 150 - 260 = -110)
    assert a["diff"] == 70.0, a
    # per round: 1.7, 1.3, 2.666...: median 1.7 (the ratio of the medians is 1.733...)
    assert abs(a["ratio"] - 1.7) < 1e-12, a
    # nothing pairs up
    assert benchlib.above_floor(rows, [{"round": 9, "ns": 1.0}], "ns") == {"diff": None,
                                                                          "ratio": None}
    # the default key is the BPF time per fault
    assert benchlib.above_floor([{"round": 1, "ns_fault": 130.0}],
                                [{"round": 1, "ns_fault": 100.0}])["diff"] == 30.0


def test_fault_path_patterns_follow_renamed_rss_programs():
    progs = {"handle_fault": (1000, 50000), "handle_fault_kernel": (4, 400),
             "handle_rss_stat_btf": (1100, 33000), "handle_rss_stat": (1100, 66000),
             "handle_exec": (1, 9000)}
    pats = ["handle_fault", "handle_fault_kernel", "handle_rss_stat*"]
    assert benchlib.fault_path(progs, pats, "x") == ["handle_fault", "handle_fault_kernel",
                                                     "handle_rss_stat", "handle_rss_stat_btf"]
    # 50000 + 400 + 66000 + 33000 ns over 1000 faults; a program two patterns match counts once
    r = benchlib.bpf_per_fault(progs, pats + ["handle_fault*"], 1000, "x")
    assert r["ns_fault"] == 149.4 and r["ns_traced"] == 149.4, r
    # after a rename to a single tp_btf program the pattern still finds it
    del progs["handle_rss_stat"]
    assert benchlib.bpf_per_fault(progs, pats, 1000, "x")["ns_fault"] == 83.4
    # a pattern that matches nothing is an error naming it, never a silent 0
    del progs["handle_rss_stat_btf"]
    raises(lambda: benchlib.bpf_per_fault(progs, pats, 1000, "r4/out.json"), "r4/out.json",
           "handle_rss_stat*")


def test_budget_check():
    assert benchlib.budget_check(110, 110) == "within"
    assert benchlib.budget_check(110.5, 110) == "OVER"
    assert benchlib.budget_check(-3, 13) == "within"
    assert benchlib.budget_check(None, 13) == "n/a" and benchlib.budget_check(5, None) == "n/a"


def test_budget_at_least():
    # tokens/s ratios: the budget is a floor (within 1%: at least 0.99x)
    assert benchlib.budget_at_least(0.99, 0.99) == "within"
    assert benchlib.budget_at_least(1.02, 0.99) == "within"
    assert benchlib.budget_at_least(0.9899, 0.99) == "OVER"
    assert benchlib.budget_at_least(None, 0.99) == "n/a"


# --- the engine section (scripts/llamarun.py, llama-server's log) --------------------------------

# llama-server's log with --log-timestamps --log-prefix (minutes.ss.mmm.uuu since the log began)
LLAMA_LOG = """0.00.002.568 W srv  llama_server: CORS is set to allow all origins ('*')
0.00.004.016 I srv    load_model: loading model 'tiny-gemma3.gguf'
0.00.051.569 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 16384
0.00.053.907 I srv  llama_server: model loaded
0.00.053.939 I srv  llama_server: listening on http://127.0.0.1:18124
0.00.838.224 I slot print_timing: id  3 | task 0 | prompt eval time =     714.29 ms
"""

# llamarun.py's figures of a run of two requests
LLAMA_KV = {"ready_ms": "63.480", "requests": "2", "stop_ms": "10.2",
            "req1_prompt_n": "1000", "req1_prompt_ms": "200.0", "req1_prompt_per_second": "5000",
            "req1_predicted_n": "64", "req1_predicted_ms": "80.0",
            "req2_prompt_n": "3000", "req2_prompt_ms": "1000.0",
            "req2_prompt_per_second": "3000", "req2_predicted_n": "64",
            "req2_predicted_ms": "50.0", "wall_ms": "2000.0", "exit_code": "0",
            "cmd_cpu_ms": "4100.0", "server_cpu_ms": "3850.0", "others_cpu_ms": "100.0"}


def test_llama_load_time_from_the_servers_log():
    assert benchlib.llama_load_ms(LLAMA_LOG, "x") == 53.907
    # minutes and seconds count: 1 min 2 s 3 ms 500 us
    assert benchlib.llama_load_ms("1.02.003.500 I srv  llama_server: model loaded\n",
                                  "x") == 62003.5
    # the first such line counts (a second server in the same file would not)
    assert benchlib.llama_load_ms(LLAMA_LOG + "0.09.000.000 I srv  llama_server: model loaded\n",
                                  "x") == 53.907
    raises(lambda: benchlib.llama_load_ms(LLAMA_LOG.replace("model loaded", "x"),
                                          "r1/server.log"), "r1/server.log", "model loaded")
    # without --log-timestamps the line is there but the figure is not
    raises(lambda: benchlib.llama_load_ms("I srv  llama_server: model loaded\n", "r1/server.log"),
           "r1/server.log", "time stamp")


def test_llama_figures_pool_the_requests():
    r = benchlib.llama_figures(dict(LLAMA_KV), "r1/llama")
    assert r["ready_ms"] == 63.48 and r["requests"] == 2 and r["stop_ms"] == 10.2, r
    # prompt: 4000 tokens over 1200 ms = 3333.3 tok/s (the mean of the two rates, 4000, would
    # weigh the short request as much as the long one)
    assert r["prompt_n"] == 4000 and abs(r["prompt_tps"] - 4000 / 1.2) < 1e-9, r
    # generation: 128 tokens over 130 ms
    assert r["gen_n"] == 128 and abs(r["gen_tps"] - 128 / 0.13) < 1e-9, r
    # the tool's CPU: the command's 4100 ms less the server's 3850; the others' 100 ms over
    # the run's 2000 ms: 5% of one core
    assert r["tool_cpu_ms"] == 250.0 and r["others_pct"] == 5.0 and r["wall_ms"] == 2000.0, r


def test_llama_figures_missing():
    for k in ("ready_ms", "requests", "stop_ms", "req2_predicted_ms", "req1_prompt_n",
              "wall_ms", "cmd_cpu_ms", "server_cpu_ms", "others_cpu_ms"):
        d = dict(LLAMA_KV)
        del d[k]
        raises(lambda: benchlib.llama_figures(d, "r3/llama"), "r3/llama", f"'{k}'")
    d = dict(LLAMA_KV, requests="0")
    raises(lambda: benchlib.llama_figures(d, "r3/llama"), "'requests'")
    # no time: a rate would be a division by zero or a false infinity
    d = dict(LLAMA_KV, req1_predicted_ms="0", req2_predicted_ms="0")
    raises(lambda: benchlib.llama_figures(d, "r3/llama"), "'predicted_ms'")


def test_llama_cost_pairs_the_rounds():
    alone = [{"round": 2, "prompt_tps": 5000.0, "gen_tps": 1000.0, "load_ms": 50.0,
              "ready_ms": 60.0},
             {"round": 1, "prompt_tps": 4000.0, "gen_tps": 800.0, "load_ms": 40.0,
              "ready_ms": 50.0},
             {"round": 3, "prompt_tps": 4500.0, "gen_tps": 900.0, "load_ms": 45.0,
              "ready_ms": 70.0}]
    mp = [{"round": 1, "prompt_tps": 3960.0, "gen_tps": 800.0, "load_ms": 42.0, "ready_ms": 200.0},
          {"round": 2, "prompt_tps": 5000.0, "gen_tps": 980.0, "load_ms": 51.0, "ready_ms": 180.0},
          {"round": 3, "prompt_tps": 4410.0, "gen_tps": 918.0, "load_ms": 45.0, "ready_ms": 240.0},
          {"round": 4, "prompt_tps": 1.0, "gen_tps": 1.0, "load_ms": 1.0, "ready_ms": 9999.0}]
    c = benchlib.llama_cost(mp, alone)
    # prompt per round: 0.99, 1.0, 0.98: median 0.99 (round 4 has no alone run: not paired)
    assert abs(c["prompt"] - 0.99) < 1e-12, c
    # gen: 1.0, 0.98, 1.02: median 1.0
    assert abs(c["gen"] - 1.0) < 1e-12, c
    # load: 1.05, 1.02, 1.0: median 1.02
    assert abs(c["load"] - 1.02) < 1e-12, c
    # ready: +150, +120, +170 ms: median +150 (the medians' difference, 200 - 60, would be 140)
    assert c["ready"] == 150.0, c
    # the best runs, whatever their rounds: prompt 5000 / 5000, gen 980 / 1000
    assert c["best_prompt"] == 1.0 and abs(c["best_gen"] - 0.98) < 1e-12, c
    assert benchlib.llama_cost(mp, []) == {"prompt": None, "gen": None, "load": None,
                                           "ready": None, "best_prompt": None,
                                           "best_gen": None}


def test_llama_report_reads_the_runs_and_names_a_missing_figure():
    with tempfile.TemporaryDirectory(prefix="memphase-bench-") as out:
        def put(path, body):
            with open(os.path.join(out, path), "w") as f:
                f.write(body)
        put("env", "cpus=2\nllama_rounds=1\n")
        put("llama-configs.tsv", "llama_alone\talone\nllama_memphase\tunder memphase\n")
        runs = ""
        for cfg, ready, loaded, tool in (("llama_alone", "50", "0.00.040.000", "none"),
                                         ("llama_memphase", "200", "0.00.041.000", "memphase")):
            d = f"llama-r1-{cfg}"
            os.mkdir(os.path.join(out, d))
            runs += f"1\t{cfg}\t/elsewhere/{d}\t0\n"   # found in out, wherever it ran
            put(f"{d}/extra", f"tool={tool}\nbpf_stats=1\n")
            put(f"{d}/llama", "".join(f"{k}={v}\n" for k, v in
                                      dict(LLAMA_KV, ready_ms=ready).items()))
            put(f"{d}/server.log", f"{loaded} I srv  llama_server: model loaded\n")
            if tool == "memphase":
                put(f"{d}/out.json", json.dumps(doc()))
        put("llama-runs.tsv", runs)
        so, se = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
            rc = bench_report.main(["bench_report.py", "llama", out])
        assert rc == 0, se.getvalue()
        # the same tokens/s on both sides; load 41 / 40 ms; ready 200 - 50 ms
        assert "prompt tokens/s: 1.000x of alone" in so.getvalue(), so.getvalue()
        assert "model load: 1.025x of alone" in so.getvalue(), so.getvalue()
        assert "time to ready: +150 ms (budget +100 ms: OVER)" in so.getvalue(), so.getvalue()
        # 4100 - 3850 ms of CPU over a wall of 2000 ms; the others' 5% is not a busy machine
        assert "memphase's own CPU: 250 ms a run, 12.5% of one core" in so.getvalue(), \
            so.getvalue()
        assert "WARNING" not in so.getvalue(), so.getvalue()
        os.remove(os.path.join(out, "llama-r1-llama_memphase", "server.log"))
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(se):
            rc = bench_report.main(["bench_report.py", "llama", out])
        assert rc == 2 and "llama-r1-llama_memphase/server.log: no such file" in se.getvalue(), \
            se.getvalue()
