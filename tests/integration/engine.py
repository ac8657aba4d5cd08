"""The real llama.cpp for the tests that run it (test_engine.py): a copy of LLAMA_BIN that any
user can run, its models, llama-server and llama-cli driven as their users drive them, the
engine's own log (-lv 4) parsed, and /proc read between prompts.

LLAMA_BIN is a folder with llama-server, llama-cli and their libraries (RUNPATH $ORIGIN);
the models are in LLAMA_MODELS, or in ../models beside it. Without LLAMA_BIN the tests skip.
"""
import atexit
import glob
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request

import harness

MIB = 1 << 20
# the flags of the case memphase exists for (a 100k context, fully offloaded, q8_0 cache)
CASE = ["-ngl", "999", "-c", "102400", "-fa", "on", "--cache-type-k", "q8_0",
        "--cache-type-v", "q8_0"]
# random weights emit byte tokens >= 0x80, invalid UTF-8 alone: the server would fail the
# request; the models' README says to ban them
BANNED = range(131, 259)
WORDS = ["alpha", "beta", "gamma", "delta", "river", "stone", "cloud", "light", "north",
         "table", "green", "seven", "paper", "glass", "sound", "field"]

_copy = None


def _restore(src, dst):
    """Copies the folder src to dst; a file that holds only the name of another file in src
    (a symlink stored as text) becomes that symlink again."""
    names = set(os.listdir(src))
    for n in sorted(names):
        s, d = os.path.join(src, n), os.path.join(dst, n)
        if os.path.islink(s):
            os.symlink(os.readlink(s), d)
            continue
        if os.path.getsize(s) < 256:
            with open(s, "rb") as f:
                text = f.read().strip().decode("utf-8", "replace")
            if text in names and text != n:
                os.symlink(text, d)
                continue
        shutil.copyfile(s, d)
        os.chmod(d, 0o755)


def build():
    """(bin, model): a copy of LLAMA_BIN any user can run, and the SWA model (context
    checkpoints) or the first one there is. Raises Skip without LLAMA_BIN."""
    global _copy
    harness.need_root()
    src = os.environ.get("LLAMA_BIN", "")
    if not src:
        raise harness.Skip("LLAMA_BIN is not set: no llama.cpp build to test against "
                           "(make test sets it to ../shared/llama/bin when that exists)")
    for exe in ("llama-server", "llama-cli"):
        if not os.path.isfile(os.path.join(src, exe)):
            raise harness.Skip("LLAMA_BIN=%s has no %s" % (src, exe))
    models = os.environ.get("LLAMA_MODELS") or os.path.join(src, "..", "models")
    found = sorted(glob.glob(os.path.join(models, "*.gguf")))
    if not found:
        raise harness.Skip("no *.gguf model in %s (set LLAMA_MODELS)" % models)
    pick = [m for m in found if "gemma3" in os.path.basename(m)] or found
    if _copy is None:
        d = harness.tmpdir()
        atexit.register(shutil.rmtree, d, True)
        os.mkdir(os.path.join(d, "bin"))
        os.chmod(os.path.join(d, "bin"), 0o755)
        _restore(src, os.path.join(d, "bin"))
        model = os.path.join(d, os.path.basename(pick[0]))
        shutil.copyfile(pick[0], model)
        os.chmod(model, 0o644)
        _copy = (os.path.join(d, "bin"), model)
    return _copy


def prompt(seed, words):
    """Unrelated text of about words words (a token is about 1.7 characters here)."""
    r = random.Random(seed)
    return " ".join(r.choice(WORDS) + str(r.randrange(100)) for _ in range(words))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss(pid):
    """RssAnon + RssFile + RssShmem of pid, bytes (memphase's RSS)."""
    total = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, v = line.split(":", 1)
            if k in ("RssAnon", "RssFile", "RssShmem"):
                total += int(v.split()[0]) * 1024
    return total


def find_pid(exe, timeout=30):
    """The process running exe (our copy: no one else's)."""
    end = time.time() + timeout
    while time.time() < end:
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                if os.readlink("/proc/%s/exe" % d) == exe:
                    return int(d)
            except OSError:
                pass
        time.sleep(0.05)
    raise AssertionError("%s did not start" % exe)


def help_flags(exe):
    """The flags exe --help lists: (current, deprecated) sets. An entry starts in column 0;
    its flags are before column 40, its description after (or on the next line)."""
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60).stdout
    current, deprecated = set(), set()
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("-"):
            continue
        head, desc = line[:40], line[40:]
        if len(line.rstrip()) <= 40 and i + 1 < len(lines):
            desc = lines[i + 1]
        flags = re.findall(r"(?:^|(?<=[\s,]))(--?[a-z][a-z0-9-]*)", head)
        (deprecated if "DEPRECATED" in desc else current).update(flags)
    return current - deprecated, deprecated


def remedy_flags(text):
    """The flags a remedy names ("-x", "--xx-yy" after a space, bracket or quote)."""
    return re.findall(r"(?:^|(?<=[\s(`,;/]))(--?[a-z][a-z0-9-]*)", text)


class Log:
    """The engine's -lv 4 log (with memphase's status lines, which no pattern matches)."""

    def __init__(self, path):
        self.path = path

    def text(self):
        with open(self.path, errors="replace") as f:
            return f.read()

    def count(self, s):
        return self.text().count(s)

    def all(self, pattern):
        return re.findall(pattern, self.text())

    def last(self, pattern):
        found = self.all(pattern)
        assert found, "the engine's log has no %r" % pattern
        return found[-1]


class Run:
    """memphase run --json (and more options) -- the engine (wrapped by wrap), its log in
    d/engine.log, the summary (stdout) in .stdout once stop()ped."""

    def __init__(self, d, argv, mp_opts=(), env=None, wrap=None, stdin=None):
        self.json = os.path.join(d, "out.json")
        self.log = Log(os.path.join(d, "engine.log"))
        self.exe = argv[0]
        target = wrap(argv) if wrap else argv
        e = dict(os.environ)
        e.update(env or {})
        cmd = harness.mp_argv(["run", "--no-tui", "--interval", "60", "--json", self.json] +
                              list(mp_opts) + ["--"] + target, e)
        self.err = open(self.log.path, "w")
        self.out = open(os.path.join(d, "summary.txt"), "w+")
        self.p = subprocess.Popen(cmd, stdin=stdin, stdout=self.out, stderr=self.err, env=e,
                                  text=True)
        self.pid = find_pid(self.exe)
        self.stdout = ""

    def alive(self):
        return self.p.poll() is None

    def stop(self, timeout=60):
        """Ctrl-C to memphase (it stops the engine and writes its outputs); the JSON."""
        if self.alive():
            self.p.send_signal(signal.SIGINT)
        rc = self.p.wait(timeout=timeout)
        self.err.close()
        self.out.seek(0)
        self.stdout = self.out.read()
        self.out.close()
        assert rc in (0, 130), "memphase exited %d: %s" % (rc, self.log.text()[-2000:])
        return harness.load_json(self.json)

    def kill(self):
        if self.alive():
            self.p.kill()
            self.p.wait()


class Server(Run):
    """llama-server under memphase; prompt() sends one /completion and returns the growth of
    its RSS in /proc from the end of the last one (what memphase counts as the request)."""

    def __init__(self, d, flags, **kw):
        b, model = build()
        self.port = free_port()
        super().__init__(d, [os.path.join(b, "llama-server"), "-m", model, "--port",
                             str(self.port), "-lv", "4"] + list(flags), **kw)
        self.url = "http://127.0.0.1:%d" % self.port
        end = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert self.alive() and time.time() < end, \
                "llama-server did not come up: %s" % self.log.text()[-2000:]
            time.sleep(0.2)
        self.last = rss(self.pid)

    def prompt(self, text, n_predict=8, timeout=120):
        body = json.dumps({"prompt": text, "n_predict": n_predict, "cache_prompt": True,
                           "logit_bias": [[t, False] for t in BANNED]}).encode()
        req = urllib.request.Request(self.url + "/completion", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            doc = json.loads(r.read())
        # the slot is released before the reply: nothing of this request is still to come
        now = rss(self.pid)
        grew, self.last = now - self.last, now
        return grew, doc


class Cli(Run):
    """llama-cli under memphase, a conversation on its stdin; turn() sends one and returns
    the growth of its RSS in /proc since the end of the last one."""

    def __init__(self, d, flags, **kw):
        b, model = build()
        bans = []
        for t in BANNED:
            bans += ["-l", "%d-inf" % t]
        super().__init__(d, [os.path.join(b, "llama-cli"), "-m", model, "--simple-io",
                             "-lv", "4"] + list(flags) + bans, stdin=subprocess.PIPE, **kw)
        end = time.time() + 60
        while "all slots are idle" not in self.log.text():
            assert self.alive() and time.time() < end, \
                "llama-cli did not come up: %s" % self.log.text()[-2000:]
            time.sleep(0.2)
        self.last = rss(self.pid)

    def turn(self, text, timeout=120):
        done = self.log.count("stop processing")
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()
        end = time.time() + timeout
        while self.log.count("stop processing") == done:
            assert self.alive() and time.time() < end, "llama-cli's turn did not end"
            time.sleep(0.05)
        # the reply is printed, and the slot idle, after the release
        while not self.log.text().rstrip().endswith("all slots are idle") and \
                time.time() < end:
            time.sleep(0.05)
        now = rss(self.pid)
        grew, self.last = now - self.last, now
        return grew

    def exit(self, timeout=60):
        self.p.stdin.write("/exit\n")
        self.p.stdin.close()
        self.p.wait(timeout=timeout)
        return self.stop()
