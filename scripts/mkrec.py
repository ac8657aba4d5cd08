#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes a synthetic memphase recording (lib/recfile.h, collect/record.h) of a long server
run: PHASES phase changes (prompt/generate alternating: PHASES / 2 requests, each starting
at a prompt), SAMPLES stack samples spread over the run (a fifth of them in frames the llama
preset's cause rules name), an RSS sample every 100 ms. For the benchmark of the views at
scale (scripts/bench-record.sh); `memphase report FILE --html F` reads it.
usage: mkrec.py OUT [PHASES] [SAMPLES] [SECONDS]"""
import struct
import sys
import zlib

REC_BEGIN, REC_STARTED, REC_EVENT, REC_STRING, REC_SAMPLE, REC_RSS, REC_TICK, REC_FINISH = \
    1, 2, 3, 4, 5, 7, 9, 21
REC_SETUP = 27
MP_EV_PHASE = 1
NAMES = ["startup", "load", "context", "prompt", "generate", "state", "checkpoint", "teardown"]


def s(x):
    b = x.encode()
    return struct.pack("<I", len(b)) + b


def main():
    out = sys.argv[1]
    nphases = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    nsamples = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    secs = float(sys.argv[4]) if len(sys.argv) > 4 else 600
    t0, pid = 10**12, 4242
    end = t0 + int(secs * 1e9)
    recs = []

    def rec(t, data):
        recs.append(struct.pack("<HHI", t, 0, len(data)) + data)
    rec(REC_BEGIN, struct.pack("<IIQI", pid, 1, t0, len(NAMES)) + b"".join(s(n) for n in NAMES)
        + struct.pack("<I", 2) + s("llama-server") + s("-m model.gguf"))
    # requests start at prompt (3), the llama preset's cause rules; no allocators, no
    # --causes files, no NVML
    rec(REC_SETUP, struct.pack("<IIIIB", 3, 0, 0, 0, 0) + s("llama") + struct.pack("<II", 0, 0)
        + b"\0" + s(""))
    rec(REC_STARTED, struct.pack("<Q", t0))
    causes = ["llama_kv_cache::llama_kv_cache", "server_prompt_cache::alloc",
              "llm_graph_input_attn_kv::set_input_kq_mask", "llama_vocab::impl::tokenize",
              "common_prompt_checkpoint::update"]
    strings = ["llama-server", "_start", "__libc_start_main", "main", "server_loop"] + \
        ["handle_%d" % i for i in range(40)] + ["ggml_op_%d" % i for i in range(60)] + causes
    for i, x in enumerate(strings):
        rec(REC_STRING, struct.pack("<I", i) + s(x))
    # events, samples and ticks in time order
    items = []
    for i in range(nphases):
        ts = t0 + int((i + 1) * (end - t0) / (nphases + 1))
        new = 3 if i % 2 == 0 else 4
        old = 4 if i % 2 == 0 else (3 if i else 0)
        ev = struct.pack("<IIIIQII", MP_EV_PHASE, pid, pid, new, ts, old, 0) + b"\0" * (184 - 32)
        items.append((ts, 0, REC_EVENT, ev))
    for i in range(nsamples):
        ts = t0 + int((i + 0.5) * (end - t0) / nsamples)
        frames = [1, 2, 3, 4, 5 + i % 40, 45 + (i * 7) % 60]
        if i % 5 == 0:
            frames.append(105 + (i // 5) % len(causes))
        ph = 4 if (i * nphases // nsamples) % 2 else 3
        data = struct.pack("<IIIQQBI", pid, pid, ph, ts, 65536, 0, 0) + \
            struct.pack("<I", len(frames)) + b"".join(struct.pack("<I", f) for f in frames) + \
            struct.pack("<I", 0)
        items.append((ts, 1, REC_SAMPLE, data))
    for k in range(int(secs * 10)):
        ts = t0 + k * 100000000
        rss = 100 * 2**20 + k * 4096
        items.append((ts, 2, REC_RSS, struct.pack("<I", pid) + struct.pack("<4q", 2**20, rss, 0, 0)
                      + struct.pack("<4q", 2**20, rss, 0, 0) + struct.pack("<q", rss + 2**20)))
        items.append((ts, 3, REC_TICK, struct.pack("<Q", ts)))
    for ts, _, t, data in sorted(items, key=lambda x: (x[0], x[1])):
        rec(t, data)
    rec(REC_FINISH, struct.pack("<Q", end))
    with open(out, "wb") as f:
        h = b"MEMPHREC" + struct.pack("<III", 1, 24, 0)
        f.write(h + struct.pack("<I", zlib.crc32(h)))
        seq, i = 0, 0
        while i < len(recs):
            raw = b""
            while i < len(recs) and len(raw) < 256 * 1024:
                raw += recs[i]
                i += 1
            z = zlib.compress(raw, 1)
            hd = b"MPCK" + struct.pack("<IIII", seq, len(z), len(raw), zlib.crc32(z))
            f.write(hd + struct.pack("<I", zlib.crc32(hd)) + z)
            seq += 1


if __name__ == "__main__":
    main()
