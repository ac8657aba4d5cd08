# SPDX-License-Identifier: GPL-2.0
"""The documents: a short README beside docs/, a man page that names every option and
renders without a warning, links that lead somewhere, and `make install` putting the man
page where man finds it and what the systemd unit points to where it points."""
import os
import re
import shutil
import subprocess

import harness

TOP = harness.ROOT
MAN = os.path.join(TOP, "docs", "memphase.1")
# `make install` runs make in the tree the other modules run from: alone (run.py)
SERIAL = True


def docs():
    out = [os.path.join(TOP, "README.md"), os.path.join(TOP, "ARCHITECTURE.md")]
    d = os.path.join(TOP, "docs")
    out += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".md"))
    return out


def anchor(title):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes."""
    t = re.sub(r"[`*_]", "", title.strip().lower())
    t = re.sub(r"[^\w\- ]", "", t)
    return t.replace(" ", "-")


def headings(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"(?ms)^```.*?^```", "", text)
    return {anchor(m.group(1)) for m in re.finditer(r"(?m)^#+ (.*)$", text)}


def test_readme_is_short_and_points_to_the_docs():
    lines = open(os.path.join(TOP, "README.md"), encoding="utf-8").read().splitlines()
    assert len(lines) < 300, "README.md has %d lines" % len(lines)
    text = "\n".join(lines)
    for f in os.listdir(os.path.join(TOP, "docs")):
        if f.endswith(".md"):
            assert "docs/%s" % f in text, "README does not point to docs/%s" % f
    assert "sudo make demo" in text and "sudo make test" in text


def test_links_lead_somewhere():
    """Every relative link [..](path#anchor) in README, ARCHITECTURE and docs/ names a file
    that exists, and a heading of it when it names an anchor."""
    bad = []
    for doc in docs():
        text = open(doc, encoding="utf-8").read()
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+://", target):
                continue
            path, _, frag = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            if not os.path.exists(full):
                bad.append("%s: %s (no such file)" % (os.path.relpath(doc, TOP), target))
            elif frag and full.endswith(".md") and frag not in headings(full):
                bad.append("%s: %s (no such heading)" % (os.path.relpath(doc, TOP), target))
    assert not bad, "\n".join(bad)


def test_man_page_names_every_option_and_renders_cleanly():
    if not shutil.which("groff"):
        raise harness.Skip("no groff to render the man page")
    # each subcommand's --help lists its own options: the page names all of them
    opts = set()
    for cmd in ("run", "attach", "record", "report", "watch"):
        help_text = subprocess.run([harness.MEMPHASE, cmd, "--help"], capture_output=True,
                                   text=True, timeout=30).stdout
        opts |= set(re.findall(r"(?m)^\s+(?:-\w, )?(--[a-z0-9-]+)", help_text))
    assert len(opts) > 40, opts
    page = open(MAN, encoding="utf-8").read().replace("\\-", "-")
    missing = sorted(o for o in opts if o not in page)
    assert not missing, "docs/memphase.1 lacks " + ", ".join(missing)
    r = subprocess.run(["groff", "-man", "-ww", "-z", MAN], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    r = subprocess.run(["groff", "-man", "-Tutf8", "-P-bcou", MAN], capture_output=True,
                       text=True, timeout=30)
    assert "EXIT STATUS" in r.stdout and "--max-rss" in r.stdout.replace("\u2010", "-"), \
        r.stdout[:2000]


def test_make_install_puts_the_man_page_where_man_finds_it():
    if not shutil.which("man"):
        raise harness.Skip("no man(1)")
    with harness.workdir() as d:
        r = subprocess.run(["make", "-s", "-C", TOP, "install", "DESTDIR=" + d, "PREFIX=/usr"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        man1 = os.path.join(d, "usr", "share", "man", "man1", "memphase.1")
        assert os.path.isfile(man1) and os.path.isfile(os.path.join(d, "usr", "bin", "memphase"))
        assert os.path.isfile(os.path.join(d, "usr", "share", "doc", "memphase", "docs",
                                           "watch.md"))
        r = subprocess.run(["man", "-M", os.path.join(d, "usr", "share", "man"), "memphase"],
                           capture_output=True, text=True, timeout=30,
                           env=dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="80"))
        assert r.returncode == 0 and "memphase attach" in r.stdout, r.stdout[:500] + r.stderr


def unit_values(path, key):
    """The values of each key= line of a systemd unit file, split on white space."""
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith(key + "="):
                out += line[len(key) + 1:].split()
    return out


def test_make_install_puts_what_the_unit_points_to_where_it_points():
    """make install DESTDIR=D PREFIX=/usr: the unit it installs names /usr's files, and each
    is in D: every Documentation= (man:memphase(1), the file:// pages, and the relative links
    of those pages), the ExecStart= binary, the schema json.md links to; systemd-analyze
    verify (when there is one) accepts the unit, with D's binary and man pages for /usr's."""
    with harness.workdir() as d:
        r = subprocess.run(["make", "-s", "-C", TOP, "install", "DESTDIR=" + d, "PREFIX=/usr"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        doc = os.path.join(d, "usr", "share", "doc", "memphase")
        unit = os.path.join(doc, "memphase-watch.service")
        assert os.path.isfile(unit), os.listdir(doc)
        assert "/usr/local" not in open(unit).read(), "the unit names /usr/local, not PREFIX"
        urls = unit_values(unit, "Documentation")
        assert any(u.startswith("man:") for u in urls) and \
            any(u.startswith("file://") for u in urls), urls
        missing, pages = [], []
        for u in urls:
            m = re.fullmatch(r"man:([\w.-]+)\((\w+)\)", u)
            if m:
                page = os.path.join(d, "usr", "share", "man", "man" + m.group(2)[0],
                                    "%s.%s" % m.groups())
            elif u.startswith("file:///"):
                page = d + u[len("file://"):]
                pages.append(page)
            else:
                raise AssertionError("Documentation=%s: neither man: nor file://" % u)
            if not os.path.isfile(page):
                missing.append("%s (%s)" % (u, page))
        for page in pages:
            if not os.path.isfile(page):
                continue
            for target in re.findall(r"\]\(([^)\s#]+)[^)]*\)", open(page).read()):
                full = os.path.join(os.path.dirname(page), target)
                if not re.match(r"[a-z]+://", target) and not os.path.exists(full):
                    missing.append("%s, linked from %s" % (target, os.path.basename(page)))
        assert not missing, "installed unit points to what make install did not install: " \
            + "; ".join(missing)
        exe = unit_values(unit, "ExecStart")[0].lstrip("-@:+!")
        assert exe == "/usr/bin/memphase" and os.access(d + exe, os.X_OK), \
            "ExecStart=%s: %s is not an installed program" % (exe, d + exe)
        assert os.path.isfile(os.path.join(doc, "docs", "memphase.schema.json")), \
            "no schema beside json.md: %s" % os.listdir(os.path.join(doc, "docs"))
        if not shutil.which("systemd-analyze"):
            raise harness.Skip("no systemd-analyze to verify the installed unit")
        check = os.path.join(d, "check", "memphase-watch.service")
        os.mkdir(os.path.dirname(check))
        with open(check, "w") as f:
            f.write(open(unit).read().replace(exe + " ", d + exe + " "))
        r = subprocess.run(["systemd-analyze", "verify", check], capture_output=True, text=True,
                           timeout=60, env=dict(os.environ, MANPATH=os.path.join(
                               d, "usr", "share", "man")))
        # a directive it cannot parse is only a warning ("ignoring"): none about the unit
        said = [line for line in (r.stdout + r.stderr).splitlines()
                if "memphase-watch.service" in line]
        assert r.returncode == 0 and not said, "systemd-analyze verify exited %d: %s" % (
            r.returncode, r.stdout + r.stderr)
