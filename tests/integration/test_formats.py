# SPDX-License-Identifier: GPL-2.0
"""Every output says the same true thing, in a form its readers accept.

Checked with the programs users open the files with: a strict folded reader (and a
flamegraph.pl-style one in Perl), perf data convert, json.load.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MIB  # noqa: E402
import test_stacks  # noqa: E402

ODDNAMES = os.path.join(harness.WORKLOAD, "oddnames")
ODD_COMM = b"\x1b]0;PWNED\x07\xff"
SAMPLE_OPTS = ["--sample-bytes", "64K", "--max-samples", "0"]

# flamegraph.pl's reading of a folded line (stackcollapse output), with strict UTF-8: a line
# it would ignore, or bytes it could not decode, make it fail.
FLAMEGRAPH_PL_READER = r'''
use strict;
use Encode qw(decode FB_CROAK);
binmode STDIN;
my ($n, $total) = (0, 0);
while (my $raw = <STDIN>) {
    chomp $raw;
    my $line = eval { decode("UTF-8", $raw, FB_CROAK) };
    die "line $.: not UTF-8\n" unless defined $line;
    my ($stack, $samples) = ($line =~ /^(.*)\s+?(\d+(?:\.\d*)?)$/);
    die "line $.: ignored by flamegraph.pl\n" unless defined $samples and defined $stack;
    my @f = split /;/, $stack, -1;
    die "line $.: empty frame\n" if grep { $_ eq "" } @f;
    $n++;
    $total += $samples;
}
print "$n $total\n";
'''


def strict_folded(path):
    """[(fields, weight)], asserting every line is valid UTF-8 without C0/DEL bytes, has at
    least 3 non-empty ';' fields (phase;comm;frame...) and an integer weight."""
    rows = []
    with open(path, "rb") as f:
        data = f.read()
    assert data.endswith(b"\n"), "the last line is not terminated"
    for i, raw in enumerate(data[:-1].split(b"\n"), 1):
        bad = [b for b in raw if b < 0x20 or b == 0x7f]
        assert not bad, "line %d has control bytes %r: %r" % (i, bad, raw)
        try:
            line = raw.decode("utf-8", errors="strict")
        except UnicodeDecodeError as e:
            raise AssertionError("line %d is not UTF-8 (%s): %r" % (i, e, raw))
        stack, sep, weight = line.rpartition(" ")
        assert sep and weight.isdigit(), "line %d: no integer weight: %r" % (i, line)
        fields = stack.split(";")
        assert len(fields) >= 3, "line %d has %d fields: %r" % (i, len(fields), line)
        assert all(fields), "line %d has an empty frame: %r" % (i, line)
        rows.append((fields, int(weight)))
    return rows


def flamegraph_pl_read(path):
    """(lines, total) as the Perl flamegraph.pl-style reader counts them; None without perl."""
    if not shutil.which("perl"):
        return None
    with open(path, "rb") as f:
        r = subprocess.run(["perl", "-e", FLAMEGRAPH_PL_READER], stdin=f, capture_output=True,
                           timeout=60)
    assert r.returncode == 0, "flamegraph.pl-style reader: %s" % r.stderr.decode(errors="replace")
    n, total = r.stdout.split()
    return int(n), int(total)


def test_folded_survives_a_hostile_comm():
    """A comm with a terminal escape, BEL and a non-UTF-8 byte: every line still reads."""
    harness.need_root()
    with harness.workdir() as d:
        out = os.path.join(d, "out.folded")
        r = harness.memphase(["run", "--folded", out] + SAMPLE_OPTS +
                             ["--", ODDNAMES, "comm", "16"])
        assert r.returncode == 0, "memphase exited %d: %s" % (r.returncode, r.stderr)
        rows = strict_folded(out)
        comms = {fr[1] for fr, _ in rows}
        # the renamed thread's samples carry its comm, cleaned: U+FFFD for ESC, BEL and 0xff
        hostile = "\ufffd]0:PWNED\ufffd\ufffd"
        assert hostile in comms, comms
        touched = sum(w for fr, w in rows if fr[1] == hostile and "touch_pages" in fr)
        assert touched >= 15 * MIB, "touch_pages under the new comm: %d bytes" % touched
        # [not sampled] has its comm level: the main process's (its name at exec)
        rest = [fr for fr, _ in rows if fr[-1] == "[not sampled]"]
        assert all(len(fr) == 3 and fr[1] == "oddnames" for fr in rest), rest
        got = flamegraph_pl_read(out)
        if got is not None:
            assert got == (len(rows), sum(w for _, w in rows)), got


def _make_file(path, mib):
    with open(path, "wb") as f:
        f.write(os.urandom(mib * MIB))
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def test_mapping_paths_are_exact():
    """File names with a newline, a space and non-ASCII, a real " (deleted)" suffix, and a
    deleted file: top_mappings carries each exact name (the kernel prints "\\012" for the
    newline and appends " (deleted)" for the deleted one)."""
    harness.need_root()
    with harness.workdir() as d:
        keep = [os.path.join(d, n) for n in
                ("model\nnewline.bin", "model space \u00e9t\u00e9.bin", "ends (deleted)")]
        gone = os.path.join(d, "gone.bin")
        for p in keep + [gone]:
            _make_file(p, 4)
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--json", out, "--", ODDNAMES, "map", "4"] + keep +
                             ["--unlink", gone])
        assert r.returncode == 0, "memphase exited %d: %s" % (r.returncode, r.stderr)
        doc = harness.load_json(out)
        files = {t["path"]: t for p in doc["phases"] for t in p["top_mappings"]
                 if t["kind"] == "file"}
        for p in keep + [gone]:
            assert p in files, "%r not in top_mappings: %s" % (p, sorted(files))
            # 4 MiB read one byte per page (readahead may bring a little more)
            assert files[p]["bytes"] >= 4 * MIB - 64 * 1024, files[p]
            assert files[p]["deleted"] == (p == gone), files[p]
            # each file is mapped once, 4 MiB: that VMA
            assert files[p]["size"] == 4 * MIB and files[p]["start"] % 4096 == 0, files[p]
        starts = [files[p]["start"] for p in keep + [gone]]
        assert len(set(starts)) == 4 and all(starts), starts


def test_json_buckets_contiguous_and_mapping_ranges():
    """Histogram buckets run from the first to the last non-empty one with the empty ones
    between (as bcc and the summary print them); every top mapping has its VMA's range."""
    harness.need_root()
    with harness.workdir() as d:
        model = harness.make_model(os.path.join(d, "model.bin"), 8)
        out = os.path.join(d, "out.json")
        r = harness.memphase(["run", "--json", out, "--", harness.DRIVER, "--model", model,
                              "--ctx-mib", "4", "--prompt-batches", "1", "--batch-mib", "2",
                              "--tokens", "8", "--token-kib", "64"])
        assert r.returncode == 0, "memphase exited %d: %s" % (r.returncode, r.stderr)
        doc = harness.load_json(out)
        for p in doc["phases"]:
            for name, h in p["histograms"].items():
                b = h["buckets"]
                if not b:
                    continue
                what = "%s %s: %s" % (p["name"], name, b)
                assert b[0]["count"] and b[-1]["count"], what
                for x, y in zip(b, b[1:]):
                    assert y["low"] == x["high"] + 1, what
            for t in p["top_mappings"]:
                if t["kind"] == "unknown":  # growth without a VMA: no range
                    assert t["start"] == 0 and t["size"] == 0, t
                    continue
                assert t["size"] > 0 and t["start"] > 0, t
                assert t["start"] % 4096 == 0 and t["size"] % 4096 == 0, t
        # context creation maps the 4 MiB KV cache and a 512 KiB reserve for the 8 tokens:
        # the two empty buckets between them are listed
        ctx = harness.phase(doc, "context")["histograms"]["mmap_size"]["buckets"]
        assert [b["count"] for b in ctx] == [1, 0, 0, 1], ctx


def ctf_fields(block):
    """A CTF struct's integer fields: [(name, bytes, signed, length or its field, or None)]."""
    out = []
    for m in re.finditer(r"integer \{([^}]*)\} (\w+)(?:\[(\w+)\])?;", block):
        attrs = dict(re.findall(r"(\w+) = ([^;]+);", m.group(1)))
        assert int(attrs["size"]) % 8 == 0 and int(attrs["align"]) <= 8, m.group(0)
        out.append((m.group(2), int(attrs["size"]) // 8, attrs["signed"] == "true",
                    m.group(3)))
    return out


def ctf_struct(meta, opener):
    """The fields of the struct that follows opener in the CTF metadata."""
    start = meta.index(opener)
    return ctf_fields(meta[start:meta.index("} align(", start)])


def ctf_read(buf, off, spec, vals):
    """Reads spec's fields at off into vals; returns the offset after them."""
    for name, size, signed, count in spec:
        fmt = "<" + {1: "b", 2: "h", 4: "i", 8: "q"}[size]
        fmt = fmt if signed else fmt.upper()
        n = (int(count) if count.isdigit() else vals[count]) if count else 1
        got = [struct.unpack_from(fmt, buf, off + k * size)[0] for k in range(n)]
        off += size * len(got)
        vals[name] = got if count else got[0]
    return off


def ctf_events(path):
    """The events of perf data convert --to-ctf's directory, each a {field: value} dict.
    perf writes CTF 1.8 byte-aligned (align <= 8 bits) and little-endian: per stream file,
    packets of a header, a context (content_size and packet_size in bits), the events."""
    with open(os.path.join(path, "metadata")) as f:
        meta = f.read()
    assert "byte_order = le" in meta and meta.count("fields := struct {") == 1, meta[:400]
    header = ctf_struct(meta, "packet.header := struct {")
    context = ctf_struct(meta, "packet.context := struct {")
    ev_header = ctf_struct(meta, "event.header := struct {")
    fields = ctf_struct(meta, "fields := struct {")
    events = []
    for name in sorted(os.listdir(path)):
        if not name.startswith("perf_stream_"):
            continue
        with open(os.path.join(path, name), "rb") as f:
            buf = f.read()
        pos = 0
        while pos < len(buf):
            pkt = {}
            off = ctf_read(buf, ctf_read(buf, pos, header, pkt), context, pkt)
            end = pos + pkt["content_size"] // 8
            while off < end:
                ev = {}
                off = ctf_read(buf, ctf_read(buf, off, ev_header, ev), fields, ev)
                events.append(ev)
            assert pkt["packet_size"] > 0, pkt
            pos += pkt["packet_size"] // 8
    return events


def test_perf_data_converts_to_json_and_ctf():
    """perf data convert reads a memphase perf.data (--to-json crashed on a missing CPUID
    header). --to-json: one sample per stack sample, and per phase whose growth no sample
    carried ("[not sampled]"), under its phase (the comm; its JSON has no event name), each
    with the CPU it was taken on (memphase and so the workload run pinned by taskset to the
    last CPU: never CPU 0 where there are two; the [not sampled] ones, which no CPU took,
    say 0). It
    leaves the bytes out (perf 6.1's JSON has no period or weight); --to-ctf keeps them,
    perf_period and perf_weight: per phase the JSON's growth. perf script prints the same
    bytes per phase as periods."""
    harness.need_root()
    if not shutil.which("perf") or not shutil.which("taskset"):
        raise harness.Skip("perf or taskset is not installed (Debian: linux-perf)")
    cpu = max(os.sched_getaffinity(0))
    with harness.workdir() as d:
        model = harness.make_model(os.path.join(d, "model.bin"), 16)
        data, out = os.path.join(d, "out.data"), os.path.join(d, "out.json")
        # memphase pinned, so the command is from its first instruction on
        r = harness.run(["taskset", "-c", str(cpu)] + harness.mp_argv(
            ["run", "--json", out, "--perf-data", data] + SAMPLE_OPTS +
            ["--", harness.DRIVER, "--model", model, "--ctx-mib", "8", "--prompt-batches",
             "2", "--batch-mib", "4", "--tokens", "16", "--token-kib", "128"]))
        assert r.returncode == 0, "memphase exited %d: %s" % (r.returncode, r.stderr)
        doc = harness.load_json(out)
        want = test_stacks.perf_want(doc)
        assert {"load", "context", "prompt", "generate"} <= set(want), want
        conv = os.path.join(d, "perf.json")
        c = harness.run(["perf", "data", "convert", "-f", "--to-json", conv, "-i", data])
        assert c.returncode == 0, "perf data convert exited %d: %s" % (c.returncode, c.stderr)
        with open(conv) as f:
            pj = json.load(f)
        assert pj["headers"]["cpuid"], pj["headers"]
        got, comm_of, cpus = {}, {}, {}
        for s in pj["samples"]:
            got[s["comm"]] = got.get(s["comm"], 0) + 1
            comm_of[s["tid"]] = s["comm"]
            assert s["callchain"], s
            # where memphase maps "[not sampled]" (perf's JSON names no dso there)
            unsampled = s["callchain"] == [{"ip": "0x1000"}]
            cpus.setdefault(unsampled, set()).add(s["cpu"])
        assert got == {k: n for k, (_, n) in want.items()}, (got, want)
        assert cpus[False] == {cpu}, "samples' CPUs %s, the workload's %d" % (cpus[False], cpu)
        assert cpus.get(True, {0}) == {0}, cpus
        # the bytes per phase as perf script reads them
        s = harness.run(["perf", "script", "-f", "-F", "comm,period", "-i", data])
        assert s.returncode == 0, s.stderr
        sums = {}
        lines = s.stdout.splitlines()
        for line in lines:
            m = re.match(r"^\s*(\S+)\s+(\d+)\s*$", line)
            assert m, "perf script line %r" % line
            sums[m.group(1)] = sums.get(m.group(1), 0) + int(m.group(2))
        assert len(lines) == len(pj["samples"]), (len(lines), len(pj["samples"]))
        assert sums == {k: b for k, (b, _) in want.items()}, (sums, want)
        # and as the CTF converter keeps them: period and weight, by thread (its phase)
        ctf = os.path.join(d, "ctf")
        c = harness.run(["perf", "data", "convert", "-f", "--to-ctf", ctf, "-i", data])
        if c.returncode != 0 and "ctf" in c.stderr.lower():
            raise harness.Skip("perf was built without CTF support: %s" % c.stderr[-200:])
        assert c.returncode == 0, "perf data convert --to-ctf: %s" % c.stderr
        events = ctf_events(ctf)
        period, weight = {}, {}
        for e in events:
            ph = comm_of[e["perf_tid"]]
            period[ph] = period.get(ph, 0) + e["perf_period"]
            weight[ph] = weight.get(ph, 0) + e["perf_weight"]
        assert len(events) == len(pj["samples"]), (len(events), len(pj["samples"]))
        assert period == weight == {k: b for k, (b, _) in want.items()}, (period, weight, want)
