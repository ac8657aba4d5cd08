#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One run of the real llama-server for bench.sh's engine configurations, as a user runs it.

    llamarun.py OUT PORT REQUESTS WORDS PREDICT [--capture LOG] -- CMD [ARGS...]

CMD starts llama-server on 127.0.0.1:PORT (alone, or under memphase). Timed on CLOCK_MONOTONIC
from the moment CMD is started: the first /health answer 200 (the server is ready), then
REQUESTS /completion requests one after the other, each with its own prompt of WORDS words
(the same prompts in every run: request i's text comes from seed i) and n_predict PREDICT
(ignore_eos: every request generates PREDICT tokens); then SIGINT to CMD (Ctrl-C: memphase
passes it on to the server and writes its outputs) and its exit. --capture LOG: CMD's stdout
and stderr go to LOG (the server alone; memphase writes the server's to its --target-log).

OUT gets key=value lines (read by scripts/benchlib.py's llama_figures()):
  ready_ms          CMD started to the first /health 200
  requests          the requests sent
  reqN_prompt_n, reqN_prompt_ms, reqN_prompt_per_second, reqN_predicted_n, reqN_predicted_ms,
  reqN_predicted_per_second   request N's (1..REQUESTS) own 'timings' from the server's reply
  reqN_http_ms      request N's time seen by the client
  stop_ms           SIGINT to CMD's exit
  wall_ms           CMD started to its exit
  exit_code         CMD's exit status (or exit_signal)
  cmd_cpu_ms        CPU time of CMD and the descendants it reaped (memphase: the server too)
  server_cpu_ms     the server's own, read from /proc just before the SIGINT
  others_cpu_ms     the CPU time the machine spent on anything else from CMD's start to its
                    exit (/proc/stat's busy time less CMD's and this script's): another
                    program's work disturbs the run (2 CPUs, and the server uses both)
Exits 1 when the server did not come up, a request failed, or CMD did not exit by itself or
exited with another status than 0 or 130 (the figures it has are written all the same).
"""
import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

# random weights emit byte tokens >= 0x80, invalid UTF-8 alone: the server would fail the
# request (HTTP 500); ban them (../shared/llama/README.md)
BANNED = range(131, 259)
WORDS = ["alpha", "beta", "gamma", "delta", "river", "stone", "cloud", "light", "north",
         "table", "green", "seven", "paper", "glass", "sound", "field"]
READY_S = 60  # the server must answer /health 200 within this
POLL_S = 0.005  # /health polling period (the ready time's resolution)
STOP_S = 60  # CMD must exit within this after the SIGINT


def prompt(seed, words):
    """Unrelated text of words words (about 5 tokens a word with these models' tokenizer)."""
    r = random.Random(seed)
    return " ".join(r.choice(WORDS) + str(r.randrange(100)) for _ in range(words))


def busy_ms():
    """CPU time the machine has spent busy (every CPU; /proc/stat: user, nice, system, irq,
    softirq)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:7]) - v[3] - v[4]) * 1e3 / os.sysconf("SC_CLK_TCK")


def self_ms():
    t = os.times()
    return (t.user + t.system) * 1e3


def server_cpu_ms(pid):
    """The CPU time of the llama-server that CMD (pid) is or started; None if not found."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            pids = [pid] + [int(c) for c in f.read().split()]
        for q in pids:
            with open(f"/proc/{q}/stat") as f:
                st = f.read()
            if st[st.index("(") + 1:st.rindex(")")] == "llama-server":
                v = st[st.rindex(")") + 2:].split()
                return (int(v[11]) + int(v[12])) * 1e3 / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        pass
    return None


def reap(pid, timeout):
    """waitpid with a timeout: (status as subprocess gives it, its rusage), None on timeout."""
    end = time.monotonic() + timeout
    while True:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got:
            return os.waitstatus_to_exitcode(status), ru
        if time.monotonic() > end:
            return None
        time.sleep(0.002)


def healthy(url):
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as r:
            return r.status == 200
    except (OSError, ValueError):
        return False


def completion(url, text, predict):
    body = json.dumps({"prompt": text, "n_predict": predict, "ignore_eos": True,
                       "cache_prompt": False, "seed": 42,
                       "logit_bias": [[t, False] for t in BANNED]}).encode()
    req = urllib.request.Request(url + "/completion", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


def main(argv):
    if "--" not in argv or argv.index("--") < 6:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sep = argv.index("--")
    out, port, nreq, words, predict = argv[1], int(argv[2]), int(argv[3]), int(argv[4]), \
        int(argv[5])
    opts, cmd = argv[6:sep], argv[sep + 1:]
    log = None
    if opts[:1] == ["--capture"] and len(opts) == 2:
        log = open(opts[1], "w")
    elif opts:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    url = f"http://127.0.0.1:{port}"
    fig, ok = {}, True
    prompts = [prompt(i, words) for i in range(1, nreq + 1)]
    busy0, self0 = busy_ms(), self_ms()
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    done = None
    try:
        while not healthy(url):
            done = done or reap(p.pid, 0)
            if done or time.monotonic() - t0 > READY_S:
                raise RuntimeError(f"llama-server did not come up (CMD exit "
                                   f"{done[0] if done else 'none yet'})")
            time.sleep(POLL_S)
        fig["ready_ms"] = (time.monotonic() - t0) * 1e3
        fig["requests"] = nreq
        for i, text in enumerate(prompts, 1):
            t = time.monotonic()
            tm = completion(url, text, predict)["timings"]
            fig[f"req{i}_http_ms"] = (time.monotonic() - t) * 1e3
            for k in ("prompt_n", "prompt_ms", "prompt_per_second", "predicted_n",
                      "predicted_ms", "predicted_per_second"):
                fig[f"req{i}_{k}"] = tm[k]
    except urllib.error.HTTPError as e:
        print(f"llamarun.py: {e}: {e.read()[:500]!r}", file=sys.stderr)
        ok = False
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        print(f"llamarun.py: {e}", file=sys.stderr)
        ok = False
    srv = None if done else server_cpu_ms(p.pid)
    t = time.monotonic()
    if not done:
        os.kill(p.pid, signal.SIGINT)
        done = reap(p.pid, STOP_S)
    if not done:
        print(f"llamarun.py: CMD did not exit {STOP_S} s after SIGINT: killed", file=sys.stderr)
        os.kill(p.pid, signal.SIGKILL)
        done = reap(p.pid, STOP_S)
        ok = False
    fig["stop_ms"] = (time.monotonic() - t) * 1e3
    fig["wall_ms"] = (time.monotonic() - t0) * 1e3
    busy1, self1 = busy_ms(), self_ms()
    rc, ru = done
    p.returncode = rc  # reaped here (for its rusage), not by subprocess
    if log:
        log.close()
    fig["exit_code" if rc >= 0 else "exit_signal"] = abs(rc)
    fig["cmd_cpu_ms"] = (ru.ru_utime + ru.ru_stime) * 1e3
    if srv is not None:
        fig["server_cpu_ms"] = srv
    fig["others_cpu_ms"] = busy1 - busy0 - fig["cmd_cpu_ms"] - (self1 - self0)
    if rc not in (0, 130):
        print(f"llamarun.py: CMD exited with status {rc}", file=sys.stderr)
        ok = False
    with open(out, "w") as f:
        for k, v in fig.items():
            f.write(f"{k}={v:.3f}\n" if isinstance(v, float) else f"{k}={v}\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
