# SPDX-License-Identifier: GPL-2.0
"""The house (ARCHITECTURE.md): user/ is split in layers and includes only point down.

    user/*.c (main, env, session)   the orchestrator: may include anything
    user/report/  views, exporters  lib, model, report
    user/collect/ BPF -> model      lib, model, collect (and the skeleton)
    user/model/   the data          lib, model
    user/lib/     plain libraries   lib

bpf/memphase.h (the structs shared with BPF) may be included from every layer; the BPF
skeleton only from collect/ and the orchestrator."""
import glob
import os
import re
import sys


TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ALLOWED = {
    "lib": {"lib"},
    "model": {"lib", "model"},
    "collect": {"lib", "model", "collect"},
    "report": {"lib", "model", "report"},
}
EVERYWHERE = {"memphase.h"}
SKELETON = "memphase.skel.h"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(rel):
    """'user/report/live/panels.c' -> 'report'; 'user/session.c' -> None (orchestrator)."""
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 else None


def violations(files):
    """files: {relative path: source}. Returns 'path: includes X' lines that point up,
    sideways, or to a header that is not under user/<layer>/."""
    bad = []
    for rel, src in sorted(files.items()):
        layer = layer_of(rel)
        for inc in INCLUDE.findall(src):
            if inc in EVERYWHERE:
                continue
            if inc == SKELETON:
                if layer not in (None, "collect"):
                    bad.append("%s: includes the BPF skeleton" % rel)
                continue
            if "/" not in inc:
                if layer is not None:
                    bad.append("%s: includes %s, which is in no layer" % (rel, inc))
                continue
            target = inc.split("/")[0]
            if target not in ALLOWED:
                bad.append("%s: includes %s (unknown layer)" % (rel, inc))
            elif layer is not None and target not in ALLOWED[layer]:
                bad.append("%s: includes %s (%s -> %s points up or sideways)"
                           % (rel, inc, layer, target))
    return bad


def tree():
    out = {}
    for path in glob.glob(os.path.join(TOP, "user", "**", "*.[ch]"), recursive=True):
        rel = os.path.relpath(path, TOP)
        with open(path, encoding="utf-8") as f:
            out[rel] = f.read()
    return out


def test_includes_point_down():
    files = tree()
    assert len(files) > 40, "found only %d sources under user/" % len(files)
    for layer in ALLOWED:
        assert any(layer_of(r) == layer for r in files), "no user/%s/ layer" % layer
    bad = violations(files)
    assert not bad, "includes that do not point down:\n  " + "\n  ".join(bad)


def test_checker_catches_upward_includes():
    """The checker itself: each kind of upward include is found."""
    cases = {
        "user/lib/json.c": '#include "model/model.h"\n',
        "user/model/model.c": '#include "collect/stacks.h"\n',
        "user/collect/probes.c": '#include "report/summary.h"\n',
        "user/report/summary.c": '#include "collect/stacks.h"\n',
        "user/report/live/panels.c": ' # include "env.h"\n',
        "user/report/outputs.c": '#include "memphase.skel.h"\n',
    }
    bad = violations(cases)
    assert len(bad) == len(cases), bad
    good = {
        "user/session.c": '#include "env.h"\n#include "collect/stacks.h"\n#include "memphase.skel.h"\n',
        "user/report/live/panels.c": '#include "lib/util.h"\n#include "model/model.h"\n'
                                     '#include "report/live/term.h"\n#include "memphase.h"\n',
        "user/collect/collect.c": '#include "memphase.skel.h"\n#include "model/model.h"\n',
    }
    assert not violations(good), violations(good)


def test_architecture_layout_names_every_module():
    """ARCHITECTURE.md's layout section names every module of every layer."""
    with open(os.path.join(TOP, "ARCHITECTURE.md"), encoding="utf-8") as f:
        readme = f.read()
    m = re.search(r"^## Layout\n(.*?)(^## |\Z)", readme, re.M | re.S)
    assert m, "ARCHITECTURE.md has no '## Layout' section"
    layout = m.group(1)
    missing = []
    for rel in tree():
        name = os.path.splitext(os.path.basename(rel))[0]
        if "`%s`" % name not in layout:
            missing.append(rel)
    missing = sorted(set(missing))
    assert not missing, "ARCHITECTURE.md layout does not name: " + ", ".join(missing)
    for layer in ALLOWED:
        assert "user/%s/" % layer in layout, "ARCHITECTURE.md layout does not name user/%s/" % layer
