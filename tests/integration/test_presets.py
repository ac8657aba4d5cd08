# SPDX-License-Identifier: GPL-2.0
"""--preset NAME, --preset none (= --no-preset), --list-presets and an unknown name."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KIB, MIB  # noqa: E402

LLAMA_PHASES = ["startup", "probe:load", "probe:context", "probe:teardown", "load", "context",
                "warmup", "tokenize", "prompt", "generate", "mixed", "host", "state",
                "checkpoint", "teardown"]
# what the driver enters, in order (host: after each llama_decode returns; its checkpoints
# come before the last prompt batch, as llama-server makes them)
DRIVER_ORDER = ["startup", "load", "context", "prompt", "host", "checkpoint", "generate",
                "state", "teardown"]
DRIVER_ARGS = ["--ctx-mib", "8", "--prompt-batches", "2", "--batch-mib", "4", "--tokens", "5",
               "--token-kib", "64", "--state-mib", "4", "--checkpoints", "2",
               "--checkpoint-mib", "2"]


def test_unknown_preset_is_a_usage_error():
    """One line naming the bad preset and the good ones, memphase's usage exit status."""
    for mode in (["run", "--preset", "nosuch", "--", "/bin/true"],
                 ["attach", "-p", "1", "--preset", "nosuch"]):
        r = harness.memphase(mode, timeout=30)
        assert r.returncode == 125, (mode, r.returncode, r.stderr)
        lines = r.stderr.splitlines()
        assert len(lines) == 1, (mode, r.stderr)
        assert "nosuch" in lines[0] and "llama" in lines[0] and "none" in lines[0], lines[0]
        assert r.stdout == "", r.stdout


def test_list_presets():
    """Every way to ask prints the same list, exits 0, and starts nothing."""
    outs = []
    for args in (["run", "--list-presets"], ["attach", "--list-presets"],
                 ["run", "--preset", "help"], ["--list-presets"]):
        r = harness.memphase(args, timeout=30)
        assert r.returncode == 0, (args, r.returncode, r.stderr)
        assert r.stderr == "", (args, r.stderr)
        outs.append(r.stdout)
    assert all(o == outs[0] for o in outs), outs
    out = outs[0]
    assert out.startswith("llama: "), out
    assert "  phases: " + ", ".join(LLAMA_PHASES) + "\n" in out, out
    for line in ("    load       llama_model_load_from_file\n",
                 "    prompt     llama_decode  (int32 at sp+8 > 1 ? prompt : generate; with "
                 "bytes at *(sp+56), first n-1: all set ? generate : none ? prompt : mixed; "
                 "before any tokenize/prompt/generate/mixed, if <= 2: warmup; records tokens)"
                 "  (its return: host)\n",
                 "    teardown   llama_free  (uint64 at arg 1 == 0 ? teardown : teardown; "
                 "before any warmup/prompt/generate/mixed: probe:teardown)\n",
                 "  entering probe:teardown shows what came since it was last entered as: "
                 "load -> probe:load, context -> probe:context\n",
                 "    state      llama_state_seq_get_data_ext  (uint32 at arg 5 & 0x1 ? "
                 "checkpoint : state; records bytes of arg 3)\n",
                 "    teardown   llama_free_model  (uint64 at arg 1 == 0 ? teardown : "
                 "teardown; before any warmup/prompt/generate/mixed: probe:teardown)\n"):
        assert line in out, (line, out)
    assert "\nnone: " in out, out


def run_driver(d, opts):
    out, rep = os.path.join(d, "out.json"), os.path.join(d, "report.txt")
    r = harness.memphase(["run", "--json", out] + opts + ["--", harness.DRIVER] + DRIVER_ARGS
                         + ["--report", rep])
    assert r.returncode == 0, (opts, r.stderr)
    return harness.load_json(out), harness.read_report(rep)


def test_preset_none_has_no_markers():
    """--preset none and its alias --no-preset: no marker attached, everything is startup."""
    harness.need_root()
    with harness.workdir() as d:
        for opt in (["--preset", "none"], ["--no-preset"], ["--preset", "llama", "--no-preset"]):
            doc, rep = run_driver(d, opt)
            assert [p["name"] for p in doc["phases"]] == ["startup"], (opt, doc["phases"])
            assert doc["markers_attached"] == 0, (opt, doc["markers_attached"])
            assert doc["unmatched_markers"] == [], (opt, doc["unmatched_markers"])
            st = harness.phase(doc, "startup")
            # the context, the prompt batches, the tokens, the state and checkpoint saves
            # (start-up's own pages come on top: at least the work, at most 1 MiB more)
            want = sum(rep["expected_%s_anon_bytes" % n]
                       for n in ("context", "prompt", "generate", "state", "checkpoint"))
            assert want >= 24 * MIB, rep
            assert want <= st["rss_growth_bytes"]["anon"] <= want + MIB, \
                (opt, want, st["rss_growth_bytes"])


def test_preset_llama_by_name():
    """--preset llama is the default, and --preset none then --preset llama brings it back;
    the rules split llama_decode and the _ext saves as the tests of test_core/test_markers
    check in detail."""
    harness.need_root()
    with harness.workdir() as d:
        for opt in ([], ["--preset", "llama"], ["--preset", "none", "--preset", "llama"]):
            doc, rep = run_driver(d, opt)
            assert [p["name"] for p in doc["phases"]] == DRIVER_ORDER, (opt, doc["phases"])
            assert doc["markers_attached"] > 0, opt
            assert harness.phase(doc, "prompt")["calls"] == 2, opt
            assert harness.phase(doc, "generate")["calls"] == 5, opt
            ck = harness.phase(doc, "checkpoint")
            assert ck["calls"] == 4 and ck["entries"] == 1, (opt, ck)
            harness.assert_close(ck["rss_growth_bytes"]["anon"],
                                 rep["expected_checkpoint_anon_bytes"], 64 * KIB, "checkpoint")


def test_user_phase_on_top_of_preset():
    """--phase adds a marker on top of the preset's (both phases are there)."""
    harness.need_root()
    with harness.workdir() as d:
        doc, _ = run_driver(d, ["--preset", "llama",
                                "--phase", "ctx2=llama_context_default_params"])
        names = [p["name"] for p in doc["phases"]]
        assert sorted(names) == sorted(DRIVER_ORDER + ["ctx2"]), names
        assert harness.phase(doc, "ctx2")["calls"] >= 1, harness.phase(doc, "ctx2")
