# SPDX-License-Identifier: GPL-2.0
"""Every byte of growth charged to its mapping, compared with /proc/PID/smaps.

- Growth inside a syscall that holds the address-space lock (MAP_POPULATE, MAP_LOCKED,
  MADV_POPULATE_WRITE, mlock, mremap of locked memory): no page fault names its address,
  so it is charged to the range the syscall named (tests/workload/populate.c).
- Threads that malloc while other threads hold the lock in mmap/mprotect: the lookup of
  their faults' mappings waits until the lock is free (tests/workload/threads.c).
- The llama stand-in's model file, mapped with MAP_POPULATE like llama.cpp does: named in
  `load`, with nothing under [unknown] there.

Each workload copies /proc/self/smaps before it exits; per-mapping growth is compared with
the Rss of the mapping with the same start.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import KIB, MIB  # noqa: E402

POPULATE = os.path.join(harness.WORKLOAD, "populate")
THREADS = os.path.join(harness.WORKLOAD, "threads")


def smaps_rss(path):
    """{vma start: Rss bytes}"""
    out, start = {}, None
    with open(path) as f:
        for line in f:
            head = line.split(" ", 1)[0]
            if "-" in head and ":" not in head:
                start = int(head.split("-")[0], 16)
            elif line.startswith("Rss:") and start is not None:
                out[start] = int(line.split()[1]) * KIB
    return out


def mappings(doc):
    """All top mappings of all phases, as (phase name, mapping)."""
    return [(p["name"], t) for p in doc["phases"] for t in p["top_mappings"]]


def unknown_bytes(doc, phase=None):
    return sum(t["bytes"] for name, t in mappings(doc)
               if t["kind"] == "unknown" and phase in (None, name))


def growth(p):
    return sum(p["rss_growth_bytes"][c] for c in ("anon", "file", "shmem"))


def by_start(doc):
    """{start: bytes} over every phase and class of the mappings that have an address"""
    out = {}
    for _, t in mappings(doc):
        if t["kind"] in ("anon", "file"):
            out[t["start"]] = out.get(t["start"], 0) + t["bytes"]
    return out


def run(d, argv):
    out = os.path.join(d, "out.json")
    r = harness.memphase(["run", "--no-tui", "--stacks", "none", "--json", out, "--"] + argv)
    assert r.returncode == 0, "memphase exited %d: %s" % (r.returncode, r.stderr)
    return r, harness.load_json(out)


def test_populating_syscalls_charged_to_their_mapping():
    harness.need_root()
    with harness.workdir() as d:
        model = harness.make_model(os.path.join(d, "model.bin"), 16)
        smaps = os.path.join(d, "smaps")
        r, doc = run(d, [POPULATE, model, smaps])
        regions = {}
        for line in r.stdout.splitlines():
            w = line.split()
            if len(w) == 3 and w[0] in ("file", "madvise", "mlock", "mremap", "locked"):
                regions[w[0]] = (int(w[1]), int(w[2]))
        assert set(regions) == {"file", "madvise", "mlock", "mremap", "locked"}, r.stdout
        rss = smaps_rss(smaps)
        got = by_start(doc)
        for name, (start, length) in regions.items():
            # mremap moved its first MiB (charged where it was mlock'ed); it grew 2 MiB
            want = length - MIB if name == "mremap" else length
            assert got.get(start) == want, "%s at %#x: charged %s, expected %d" % (
                name, start, got.get(start), want)
            assert rss[start] == length, "%s: smaps Rss %d" % (name, rss[start])
        assert unknown_bytes(doc) == 0, "[unknown] %d bytes" % unknown_bytes(doc)
        assert doc["faults_vma_busy"] == 0


def test_threads_that_malloc_under_the_lock_unknown_under_1pct():
    """8 threads malloc 24 MiB each while 2 threads mmap/mprotect/munmap without a pause:
    [unknown] stays under 1% of growth and each arena's growth is its smaps Rss."""
    harness.need_root()
    with harness.workdir() as d:
        smaps = os.path.join(d, "smaps")
        r, doc = run(d, [THREADS, "8", "24", "2", smaps])
        total = sum(growth(p) for p in doc["phases"])
        unknown = unknown_bytes(doc)
        print("  growth %d MiB, [unknown] %d KiB, %d faults looked up after the lock, "
              "%d events left unknown" % (total // MIB, unknown // KIB,
                                          doc["faults_vma_deferred"], doc["faults_vma_busy"]))
        assert total >= 8 * 24 * MIB, total
        assert unknown < 0.01 * total, "[unknown] %d of %d bytes" % (unknown, total)
        rss = smaps_rss(smaps)
        arenas = [(s, b) for s, b in by_start(doc).items() if b >= 16 * MIB]
        assert len(arenas) >= 4, "the threads' arenas are not among the mappings: %s" % arenas
        # Per arena within 2%: two threads' rss_stat events that cross (each reads the
        # mm's exact counter, then they take their deltas in the other order) move a few
        # pages from one thread's growth to the other's, whatever the lookups do.
        for start, b in arenas:
            assert start in rss, "%#x not in smaps" % start
            harness.assert_close(b, rss[start], rss[start] // 50, "arena %#x vs smaps Rss" % start)
        got, want = sum(b for _, b in arenas), sum(rss[s] for s, _ in arenas)
        harness.assert_close(got, want, want // 200, "arenas vs their smaps Rss")


def test_llama_model_mapped_with_populate_named_in_load():
    harness.need_root()
    with harness.workdir() as d:
        model = harness.make_model(os.path.join(d, "model.bin"), 16)
        argv = [harness.DRIVER, "--model", model, "--ctx-mib", "4", "--prompt-batches", "1",
                "--batch-mib", "1", "--tokens", "4", "--token-kib", "64", "--state-mib", "1"]
        _, doc = run(d, argv)
        load = harness.phase(doc, "load")
        top = load["top_mappings"][0]
        assert top["path"] == model and top["class"] == "file", top
        harness.assert_close(top["bytes"], 16 * MIB, 128 * KIB, "model file in load")
        assert unknown_bytes(doc, "load") == 0, load["top_mappings"]
