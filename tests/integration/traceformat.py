# SPDX-License-Identifier: GPL-2.0
"""A strict checker of the Trace Event Format (the trace-event JSON that Perfetto,
chrome://tracing and speedscope open), for every trace the tests write: check(path,
duration_s) raises AssertionError with the event and the rule it breaks, and returns what
it read (Trace).

Beyond the format's required fields it holds a trace to what its importers need: times are
compared as exact decimals (as Perfetto reads them) and as the doubles the JavaScript
importers add (speedscope, chrome://tracing), and a track's slices must nest in both."""
import json
from decimal import Decimal

# the top-level keys of the JSON object form, and the event phases memphase may write
TOP_KEYS = {"traceEvents", "displayTimeUnit", "stackFrames", "samples", "otherData",
            "metadata"}
PHASES = {"X", "B", "E", "i", "I", "C", "M", "P"}
# metadata events: their names and the one arg each carries, with its type
META_ARGS = {"process_name": ("name", str), "thread_name": ("name", str),
             "process_labels": ("labels", str), "process_sort_index": ("sort_index", int),
             "thread_sort_index": ("sort_index", int)}
FRAME_KEYS = {"name", "category", "parent"}


class Trace:
    """What check() read: the events, the stackFrames dictionary, each track's slices
    ((pid, tid) -> [(ts, end, event)] by start, times as Decimal microseconds)."""

    def __init__(self, doc):
        self.doc = doc
        self.events = doc["traceEvents"]
        self.frames = doc.get("stackFrames", {})
        self.tracks = {}

    def stack(self, sf):
        """The frame names of stackFrames id sf, outermost first."""
        names, k = [], str(sf)
        while k is not None:
            names.append(self.frames[k]["name"])
            k = str(self.frames[k]["parent"]) if "parent" in self.frames[k] else None
        return names[::-1]


def load(path):
    """The file as JSON, strictly: UTF-8, no NaN or Infinity, no key twice in an object;
    numbers with a point or an exponent as Decimal (exact)."""
    def pairs(kv):
        keys = [k for k, _ in kv]
        assert len(keys) == len(set(keys)), "a key twice in one object: %r" % keys
        return dict(kv)

    def constant(c):
        raise AssertionError("%s is not JSON" % c)

    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    return json.loads(text, parse_float=Decimal, parse_constant=constant,
                      object_pairs_hook=pairs)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v):
    return is_int(v) or isinstance(v, Decimal)


def is_time(v):
    """A time or a duration: a number >= 0 with at most three decimals (nanoseconds, the
    most Perfetto reads from microseconds)."""
    if is_int(v):
        return v >= 0
    return isinstance(v, Decimal) and v.is_finite() and v >= 0 and \
        v.as_tuple().exponent >= -3


def check_frames(frames):
    """stackFrames: id -> {name, category?, parent?}; every parent an id of the dictionary,
    no cycle; no id 0 (speedscope reads an sf of 0 as no stack)."""
    assert isinstance(frames, dict), "stackFrames is a %s" % type(frames).__name__
    for k, f in frames.items():
        assert k.isdigit() and int(k) > 0, "stackFrames id %r: not a number from 1" % k
        assert isinstance(f, dict) and set(f) <= FRAME_KEYS, (k, f)
        assert isinstance(f.get("name"), str) and f["name"], ("frame without a name", k, f)
        assert isinstance(f.get("category", ""), str), (k, f)
        if "parent" in f:
            assert (is_int(f["parent"]) or isinstance(f["parent"], str)) and \
                str(f["parent"]) in frames, ("frame's parent is not a frame", k, f)
    for k in frames:
        seen = set()
        while k is not None:
            assert k not in seen, ("stackFrames cycle", sorted(seen))
            seen.add(k)
            k = str(frames[k]["parent"]) if "parent" in frames[k] else None


def check_meta(e):
    """A metadata event: a known name and its one arg."""
    assert e["name"] in META_ARGS, ("unknown metadata event", e)
    key, kind = META_ARGS[e["name"]]
    args = e.get("args")
    assert isinstance(args, dict) and key in args, ("metadata without args.%s" % key, e)
    if kind is str:
        assert isinstance(args[key], str) and args[key], ("metadata args.%s" % key, e)
    else:
        assert is_int(args[key]), ("metadata args.%s" % key, e)
    if "ts" in e:
        assert is_time(e["ts"]), ("ts", e)


def check_event(e, frames):
    """One event: the fields its phase requires, of the right types."""
    assert isinstance(e, dict), "an event that is a %s: %r" % (type(e).__name__, e)
    assert e.get("ph") in PHASES, ("unknown ph", e)
    assert isinstance(e.get("name"), str) and e["name"], ("name", e)
    assert is_int(e.get("pid")) and is_int(e.get("tid")), ("pid and tid", e)
    # Perfetto's tokenizer fails the whole file at an array-valued field of an event
    # ("unsupported JSON dictionary with array"): stacks go through sf, never "stack"
    assert not any(isinstance(v, list) for v in e.values()), ("an array-valued field", e)
    assert isinstance(e.get("cat", ""), str), ("cat", e)
    assert isinstance(e.get("args", {}), dict), ("args", e)
    if e["ph"] == "M":
        check_meta(e)
        return
    assert is_time(e.get("ts")), ("ts", e)
    if e["ph"] == "X":
        # a zero-length slice is legal, but speedscope then ends the wrong frame
        assert is_time(e.get("dur")) and e["dur"] > 0, ("dur", e)
    if e["ph"] in ("i", "I"):
        assert e.get("s", "t") in ("g", "p", "t"), ("instant scope", e)
    if e["ph"] == "C":
        assert e.get("args") and all(is_number(v) for v in e["args"].values()), \
            ("counter args", e)
    if e["ph"] == "P":
        assert "sf" in e, ("sample without sf", e)
    if "sf" in e:
        assert (is_int(e["sf"]) or isinstance(e["sf"], str)) and str(e["sf"]) in frames, \
            ("sf is not a stackFrames id", e)


def track_slices(events):
    """(pid, tid) -> [(ts, end, event)]: X slices, and B/E pairs (E matching its B)."""
    tracks, open_ = {}, {}
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        if e["ph"] == "X":
            tracks.setdefault(key, []).append((e["ts"], e["ts"] + e["dur"], e))
        elif e["ph"] == "B":
            open_.setdefault(key, []).append(e)
        elif e["ph"] == "E":
            st = open_.get(key)
            assert st, ("E without a B", e)
            b = st.pop()
            assert e.get("name", b["name"]) == b["name"], ("E ends another slice", b, e)
            assert e["ts"] >= b["ts"], ("E before its B", b, e)
            tracks.setdefault(key, []).append((b["ts"], e["ts"], b))
    left = [b for st in open_.values() for b in st]
    assert not left, ("B without an E", left[:3])
    for sl in tracks.values():
        sl.sort(key=lambda s: (s[0], -s[1]))
    return tracks


def check_nesting(key, slices, exact):
    """A track's slices nest: a child within its parent, siblings not overlapping; compared
    as exact decimals, or (exact False) as doubles with an X slice's end its ts + dur, the
    sum a JavaScript importer makes."""
    def span(ts, end, e):
        if exact:
            return ts, end
        return float(ts), float(ts) + float(e["dur"]) if e["ph"] == "X" else float(end)

    stack = []
    for ts, end, e in sorted((span(*s) + (s[2],) for s in slices),
                             key=lambda s: (s[0], -s[1])):
        while stack and stack[-1][1] <= ts:
            stack.pop()
        if stack:
            assert end <= stack[-1][1], ("slices overlap (%s)" % ("exactly" if exact else
                                         "in doubles"), key, stack[-1][2], e)
        stack.append((ts, end, e))


def check(path, duration_s=None):
    """Checks the trace at path; with duration_s (the run's, from the JSON summary), that
    nothing lies after it. Returns the Trace."""
    doc = load(path)
    assert isinstance(doc, dict), "the trace is a %s, not an object" % type(doc).__name__
    assert set(doc) <= TOP_KEYS, ("unknown top-level keys", sorted(set(doc) - TOP_KEYS))
    assert isinstance(doc.get("traceEvents"), list), "no traceEvents array"
    assert doc.get("displayTimeUnit", "ms") in ("ms", "ns"), doc["displayTimeUnit"]
    t = Trace(doc)
    check_frames(t.frames)
    for e in t.events:
        check_event(e, t.frames)
    for s in doc.get("samples", []):
        assert is_time(s.get("ts")) and is_int(s.get("tid")), ("sample", s)
        assert str(s.get("sf")) in t.frames, ("sample's sf is not a stackFrames id", s)
    t.tracks = track_slices(t.events)
    for key, sl in t.tracks.items():
        check_nesting(key, sl, True)
        check_nesting(key, sl, False)
    if duration_s is not None:
        # repr: the shortest decimal of the double, the digits the summary has
        end = Decimal(repr(duration_s) if isinstance(duration_s, float) else duration_s)
        end *= 1000000
        late = [e for e in t.events if "ts" in e and e["ts"] + e.get("dur", 0) > end]
        assert not late, ("after the end of the run (%s us)" % end, len(late), late[:3])
    return t
