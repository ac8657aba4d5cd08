# SPDX-License-Identifier: GPL-2.0
"""--metrics ADDR:PORT and --metrics-textfile PATH, checked with the real thing: promtool
(Debian's prometheus package) lints the text exposition from the server and the textfile,
and a Prometheus started here scrapes memphase every second during a llama-serve run; a
PromQL query through its HTTP API gives the per-phase growth of --json. promtool 2.42 parses
only the text format 0.0.4: the OpenMetrics exposition is checked by Prometheus itself,
which asks for it and keeps the types only OpenMetrics has (info). The Grafana dashboard
refers only to metric names memphase exports."""
import glob
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MIB  # noqa: E402

SERVE = os.path.join(harness.WORKLOAD, "llama-serve")
DASHBOARD = os.path.join(harness.ROOT, "scripts", "grafana-memphase.json")
OM_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
             "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
CT_TEXT = "text/plain; version=0.0.4; charset=utf-8"
CT_OM = "application/openmetrics-text; version=1.0.0; charset=utf-8"
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def need_prometheus():
    harness.need_root()
    if not shutil.which("promtool") or not shutil.which("prometheus"):
        raise harness.Skip("the prometheus package is not installed "
                           "(scripts/install-deps.sh could not install it)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_args(requests=4, hold_ms=2000, sleep_ms=150):
    return [SERVE, "--requests", str(requests), "--prompt-batches", "2", "--batch-mib", "2",
            "--tokens", "4", "--token-kib", "64", "--ctx-mib", "4", "--sleep-ms", str(sleep_ms),
            "--hold-ms", str(hold_ms)]


def start(args):
    return subprocess.Popen(harness.mp_argv(args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def get(port, path="/metrics", method="GET", headers=None, timeout=5):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read().decode()
    finally:
        c.close()


def wait_metrics(proc, port, want=None, timeout=30):
    """The exposition once the server answers (and holds want), while memphase runs."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError("memphase ended before serving: %s" % proc.stderr.read())
        try:
            st, _, body = get(port)
            if st == 200 and (not want or want in body):
                return body
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError("no /metrics on port %d within %d s" % (port, timeout))


def finish(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, (proc.returncode, err)
    return out, err


def samples(text):
    """[(name, {labels}, value)] of an exposition."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, "not a sample line: %r" % line
        labels = {k: v for k, v in LABEL.findall(m.group(3) or "")}
        out.append((m.group(1), labels, float(m.group(4))))
    return out


def promtool_clean(text, what):
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), \
        "%s: promtool check metrics: rc %d: %s%s" % (what, r.returncode, r.stdout, r.stderr)


def growth_by_phase(samp):
    return {(lb["phase"], lb["class"]): int(v) for n, lb, v in samp
            if n == "memphase_phase_growth_bytes_total"}


def json_growth(doc):
    return {(p["name"], c): v for p in doc["phases"] for c, v in p["rss_growth_bytes"].items()}


class NodeExporter:
    """node_exporter with only its textfile collector, reading d, as nobody, on a free
    port."""

    def __init__(self, d):
        exe = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
        if not exe:
            raise harness.Skip("the prometheus-node-exporter package is not installed "
                               "(scripts/install-deps.sh could not install it)")
        self.port = free_port()

        def as_nobody():
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
        self.proc = subprocess.Popen(
            [exe, "--collector.disable-defaults", "--collector.textfile",
             "--collector.textfile.directory=" + d,
             "--web.listen-address=127.0.0.1:%d" % self.port],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=as_nobody)
        deadline = time.time() + 30
        while time.time() < deadline:
            assert self.proc.poll() is None, "node_exporter exited: %s" % self.proc.stderr.read()
            try:
                if self.get()[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.close()
        raise AssertionError("node_exporter did not answer")

    def get(self):
        return get(self.port)

    def close(self):
        self.proc.terminate()
        self.proc.communicate(timeout=30)


def test_metrics_server_and_textfile():
    """During a run: GET /metrics is text 0.0.4 (promtool: no error, no lint message) unless
    the client asks for OpenMetrics (then its content type, # EOF, counters' families without
    _total); HEAD, 404, 405. The textfile is written while the run goes on, lint-clean.
    (Its final figures: test_textfile_lives_as_long_as_the_run.)"""
    need_prometheus()
    with harness.workdir() as d:
        port, tf = free_port(), os.path.join(d, "memphase.prom")
        p = start(["run", "--no-tui", "--metrics", str(port), "--metrics-textfile", tf,
                   "--"] + serve_args(requests=6))
        try:
            body = wait_metrics(p, port, want="memphase_requests_total{")
            st, hdr, body = get(port)
            assert st == 200 and hdr["Content-Type"] == CT_TEXT, (st, hdr)
            assert not body.rstrip().endswith("# EOF"), body[-200:]
            promtool_clean(body, "the server's text exposition")
            st, hdr, om = get(port, headers={"Accept": OM_ACCEPT})
            assert st == 200 and hdr["Content-Type"] == CT_OM, (st, hdr)
            assert om.endswith("\n# EOF\n"), om[-200:]
            assert "# TYPE memphase_phase_growth_bytes counter\n" in om, om[:2000]
            assert "# TYPE memphase_phase_growth_bytes_total counter\n" in body
            assert "# TYPE memphase_run info\n" in om
            st, hdr, head = get(port, method="HEAD")
            assert st == 200 and head == "" and int(hdr["Content-Length"]) > 1000, (st, hdr)
            assert get(port, "/")[0] == 404 and get(port, "/metricsx")[0] == 404
            st, hdr, _ = get(port, method="POST")
            assert st == 405 and hdr.get("Allow") == "GET, HEAD", (st, hdr)
            # the textfile: written while the command runs
            deadline = time.time() + 20
            while not os.path.exists(tf) and p.poll() is None and time.time() < deadline:
                time.sleep(0.1)
            with open(tf) as f:
                text = f.read()
            assert p.poll() is None, "no textfile during the run"
            promtool_clean(text, "the textfile")
        finally:
            finish(p)


def memphase_of(body):
    return [x for x in samples(body) if x[0].startswith("memphase_")]


def test_textfile_lives_as_long_as_the_run():
    """--metrics-textfile in node_exporter's directory, node_exporter scraped every 0.3 s
    (as by Prometheus) during a llama-serve run, every scrape without a textfile error.
    Once the command is killed, the final figures reach node_exporter's scrapes
    (target_ended 1, source textfile; the growth per phase and class, the requests and the
    histogram's count --json's), then the file is gone and so are memphase's series from
    node_exporter, nothing left in the directory; the last file read is lint-clean. Read by
    nobody, the file goes at the end too; a run that fails before it starts leaves the file
    already there as it was; a SIGKILLed memphase's file is removed by its file helper."""
    need_prometheus()
    with harness.workdir() as d:
        if os.statvfs(d).f_flag & os.ST_NOATIME:
            raise harness.Skip("%s is mounted noatime: memphase cannot tell a textfile "
                               "was read" % d)
        tf, out = os.path.join(d, "memphase.prom"), os.path.join(d, "o.json")
        ne = NodeExporter(d)
        try:
            p = start(["run", "--no-tui", "--metrics-textfile", tf, "--json", out, "--"] +
                      serve_args(requests=0))
            files, final, pid, text, errs = set(), [], None, "", set()

            def scrape():
                ns = samples(ne.get()[2])
                errs.update(v for n, _, v in ns if n == "node_textfile_scrape_error")
                return [x for x in ns if x[0].startswith("memphase_")]
            try:
                # three files read: memphase has seen two of them read (the reader's gap)
                deadline = time.time() + 60
                while len(files) < 3:
                    mine = scrape()
                    secs = tuple(v for n, _, v in mine if n == "memphase_phase_seconds_total")
                    if secs:
                        files.add(secs)
                    pid = pid or next((lb["pid"] for n, lb, _ in mine
                                       if n == "memphase_run_info"), None)
                    assert p.poll() is None and time.time() < deadline, (files, p.poll())
                    time.sleep(0.3)
                os.kill(int(pid), signal.SIGTERM)
                while p.poll() is None:
                    final = scrape() or final
                    try:
                        with open(tf) as f:
                            text = f.read() or text
                    except OSError:
                        pass
                    time.sleep(0.3)
                    assert time.time() < deadline + 120, "memphase did not end"
            finally:
                if p.poll() is None:
                    p.kill()
                _, err = p.communicate(timeout=60)
            assert ("memphase_target_ended", {"source": "textfile", "comm": "llama-serve",
                                              "pid": pid}, 1.0) in final, \
                ("node_exporter never served the final figures", err)
            assert errs == {0.0}, errs
            assert not os.path.exists(tf), "the textfile outlived the run"
            assert not memphase_of(ne.get()[2]), "node_exporter still serves the run"
            assert not [f for f in os.listdir(d) if "memphase" in f], os.listdir(d)
        finally:
            ne.close()
        promtool_clean(text, "the textfile")
        doc = harness.load_json(out)
        assert growth_by_phase(final) == json_growth(doc), (growth_by_phase(final),
                                                             json_growth(doc))
        nreq = [v for n, _, v in final if n == "memphase_requests_total"]
        assert nreq == [len(doc["requests"])] and nreq[0] >= 6, (nreq, len(doc["requests"]))
        ids = {(lb["comm"], lb["pid"]) for _, lb, _ in final}
        assert ids == {("llama-serve", str(doc["target"]["pid"]))}, ids
        # the histogram holds every finished request
        closed = [r for r in doc["requests"] if r["end_s"] is not None]
        cnt = [v for n, _, v in final if n == "memphase_request_growth_bytes_count"]
        assert cnt == [len(closed)], (cnt, len(closed))
        # nobody reads it: gone at the end all the same
        r = harness.memphase(["run", "--no-tui", "--metrics-textfile", tf, "--"] +
                             serve_args(requests=2, hold_ms=0))
        assert r.returncode == 0, r.stderr
        assert not os.path.exists(tf) and not [f for f in os.listdir(d) if "memphase" in f]
        # a run that fails before it starts: the file there is not its own
        with open(tf, "w") as f:
            f.write("someone_elses 1\n")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            r = harness.memphase(["run", "--no-tui", "--metrics", str(s.getsockname()[1]),
                                  "--metrics-textfile", tf, "--", "true"])
        assert r.returncode != 0, r.stderr
        with open(tf) as f:
            assert f.read() == "someone_elses 1\n"
        # memphase SIGKILLed: its file helper removes what it wrote
        p = start(["run", "--no-tui", "--metrics-textfile", tf, "--", "sleep", "60"])
        pid = None
        try:
            deadline = time.time() + 30
            while not pid:
                assert p.poll() is None and time.time() < deadline, "no textfile"
                time.sleep(0.1)
                with open(tf) as f:
                    pid = next((lb["pid"] for n, lb, _ in samples(f.read())
                                if n == "memphase_run_info"), None)
            p.kill()
            # not communicate(): the command holds memphase's stdout and stderr
            p.wait(timeout=30)
            while os.path.exists(tf):
                assert time.time() < deadline + 30, "the textfile outlived memphase"
                time.sleep(0.1)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            if pid:
                os.kill(int(pid), signal.SIGKILL)
            p.stdout.close()
            p.stderr.close()


def test_report_textfile_says_when_the_run_started():
    """memphase report REC --metrics-textfile F: promtool-clean, with the run's
    memphase_start_time_seconds, the very value the live run served (the recording keeps
    the wall clock at the start), and its growth per phase and class the live JSON's."""
    need_prometheus()
    with harness.workdir() as d:
        port, rec, out = free_port(), os.path.join(d, "r.rec"), os.path.join(d, "o.json")
        tf = os.path.join(d, "report.prom")
        p = start(["run", "--no-tui", "--metrics", str(port), "--record", rec, "--json", out,
                   "--"] + serve_args(requests=3))
        try:
            live = samples(wait_metrics(p, port, want="memphase_requests_total{"))
        finally:
            finish(p)
        r = harness.memphase(["report", rec, "--metrics-textfile", tf])
        assert r.returncode == 0, r.stderr
        with open(tf) as f:
            text = f.read()
        promtool_clean(text, "report's textfile")
        samp = samples(text)
        start_live = [v for n, _, v in live if n == "memphase_start_time_seconds"]
        start_rep = [v for n, _, v in samp if n == "memphase_start_time_seconds"]
        assert len(start_live) == 1 and start_rep == start_live, (start_rep, start_live)
        assert abs(start_rep[0] - time.time()) < 3600, start_rep
        assert growth_by_phase(samp) == json_growth(harness.load_json(out))


def test_metrics_bad_address_fails_before_the_command():
    """A bad address or port, or a port in use: one line on stderr, a non-zero exit, and
    the command never started (its marker file is not created)."""
    harness.need_root()
    with harness.workdir() as d:
        mark = os.path.join(d, "started")
        cmd = ["--", "sh", "-c", "touch " + mark]
        for spec in ("abc", ":0", "70000", "1.2.3.4.5:80", "[::1", "host.example:80", "",
                     "::1:80"):
            r = harness.memphase(["run", "--no-tui", "--metrics", spec] + cmd)
            lines = r.stderr.strip().splitlines()
            assert r.returncode != 0 and len(lines) == 1 and "--metrics" in lines[0], \
                (spec, r.returncode, r.stderr)
            assert not os.path.exists(mark), spec
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            port = s.getsockname()[1]
            r = harness.memphase(["run", "--no-tui", "--metrics", ":%d" % port] + cmd)
            lines = r.stderr.strip().splitlines()
            assert r.returncode != 0 and len(lines) == 1, (r.returncode, r.stderr)
            assert "in use" in lines[0] and "127.0.0.1:%d" % port in lines[0], lines
            assert not os.path.exists(mark), "the command ran although the port was taken"
            # attach: the same, before attaching
            sl = subprocess.Popen(["sleep", "30"])
            try:
                r = harness.memphase(["attach", "-p", str(sl.pid), "--no-tui", "--metrics",
                                      str(port)])
                assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1, r.stderr
            finally:
                sl.kill()
                sl.wait()
        r = harness.memphase(["report", os.path.join(d, "x.rec"), "--metrics", "9"])
        assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1, r.stderr


def listening(port, v6=False):
    """Local addresses (hex, as /proc/net/tcp{,6} writes them) listening on port."""
    out = set()
    with open("/proc/net/tcp6" if v6 else "/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, p = local.split(":")
            if int(p, 16) == port and state == "0A":
                out.add(addr)
    return out


def test_metrics_loopback_unless_a_wildcard_is_written():
    """PORT and :PORT listen on 127.0.0.1 only; 0.0.0.0 and [::1] when written."""
    harness.need_root()
    for spec, v6, want in (("%d", False, "0100007F"), (":%d", False, "0100007F"),
                           ("0.0.0.0:%d", False, "00000000"),
                           ("[::1]:%d", True, "00000000000000000000000001000000")):
        port = free_port()
        p = start(["run", "--no-tui", "--metrics", spec % port, "--", "sleep", "30"])
        try:
            deadline = time.time() + 20
            while not listening(port, v6) and time.time() < deadline and p.poll() is None:
                time.sleep(0.1)
            assert listening(port, v6) == {want}, (spec, listening(port, v6))
            if not v6:
                assert listening(port, True) == set(), "also on IPv6"
        finally:
            p.terminate()
            p.communicate(timeout=30)


OTHER_GET = r"""
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
print(s.recv(12).decode())
"""


def test_metrics_server_bounded_and_never_blocking():
    """Clients that stall hold at most their share, HTTPD_PEER_MAX (2) slots of
    HTTPD_MAX_CONNS (8), a local user being one peer: a head too large gets 431; half
    requests of one client replace each other (its new connection takes the place of its
    own oldest), and the last is dropped after its read timeout; with two connections
    piling up answers it never reads, its third is still answered, and so is another user
    (the unit test httpd_gives_each_peer_a_fair_share has the 503 of a share all answers
    under way); meanwhile the run goes on: the command ends and memphase with it, every
    phase in the JSON."""
    harness.need_root()
    with harness.workdir() as d:
        port, out = free_port(), os.path.join(d, "o.json")
        p = start(["run", "--no-tui", "--metrics", str(port), "--json", out, "--"] +
                  serve_args(requests=20, hold_ms=1000))
        socks = []
        try:
            wait_metrics(p, port)
            big = socket.create_connection(("127.0.0.1", port), timeout=10)
            big.sendall(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 8192 + b"\r\n\r\n")
            assert big.recv(100).startswith(b"HTTP/1.1 431 ")
            big.close()
            half = []
            for _ in range(3):
                s = socket.create_connection(("127.0.0.1", port), timeout=20)
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                half.append(s)
                time.sleep(0.3)
            socks += half
            # the first took the place of nothing, the third took the first's
            assert half[0].recv(100) == b"", "the oldest half request was kept"
            # the last one left is dropped after HTTPD_READ_NS (5 s)
            assert half[2].recv(100) == b"", "a stalled request was never dropped"
            # clients that ask again and again and never read: their answers pile up
            for _ in range(2):
                hog = socket.socket()
                hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                hog.connect(("127.0.0.1", port))
                hog.setblocking(False)
                try:
                    for _ in range(2000):
                        hog.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                except BlockingIOError:
                    pass
                socks.append(hog)
            time.sleep(0.5)
            extra = socket.create_connection(("127.0.0.1", port), timeout=5)
            extra.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
            ans = extra.recv(100)
            assert ans.startswith(b"HTTP/1.1 200 ") or ans.startswith(b"HTTP/1.1 503 "), ans
            extra.close()
            script = os.path.join(d, "get.py")
            with open(script, "w") as f:
                f.write(OTHER_GET)
            os.chmod(script, 0o644)
            r = harness.run(["setpriv", "--reuid=1234", "--regid=1234", "--clear-groups",
                             "python3", script, str(port)])
            assert r.stdout.startswith("HTTP/1.1 200"), (r.stdout, r.stderr)
        finally:
            finish(p, timeout=120)
            for s in socks:
                s.close()
        doc = harness.load_json(out)
        names = [x["name"] for x in doc["phases"]]
        assert "generate" in names and "teardown" in names, names
        assert len(doc["requests"]) == 20, len(doc["requests"])


PROM_CONFIG = """global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
"""
PROM_JOB = """  - job_name: %s
    static_configs:
      - targets: ['127.0.0.1:%d']
"""


class Prometheus:
    """A prometheus of our own: a free port, its own config and storage in d, as nobody;
    job memphase scrapes target_port, and each of jobs {name: port} its port."""

    def __init__(self, d, target_port, jobs=None):
        self.port = free_port()
        cfg, data = os.path.join(d, "prometheus.yml"), os.path.join(d, "data")
        os.mkdir(data)
        os.chmod(data, 0o777)
        with open(cfg, "w") as f:
            f.write(PROM_CONFIG + "".join(PROM_JOB % j for j in
                                          [("memphase", target_port)] +
                                          sorted((jobs or {}).items())))
        os.chmod(cfg, 0o644)
        self.log = open(os.path.join(d, "prometheus.log"), "w")

        def as_nobody():
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
        self.proc = subprocess.Popen(
            ["prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + data,
             "--web.listen-address=127.0.0.1:%d" % self.port], stdout=self.log,
            stderr=subprocess.STDOUT, preexec_fn=as_nobody, cwd=d)
        deadline = time.time() + 60
        while time.time() < deadline:
            assert self.proc.poll() is None, "prometheus exited: %s" % self.logtext()
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/-/ready" % self.port,
                                            timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError("prometheus not ready: %s" % self.logtext())

    def logtext(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()[-2000:]

    def api(self, path, **params):
        url = "http://127.0.0.1:%d/api/v1/%s?%s" % (self.port, path,
                                                     urllib.parse.urlencode(params))
        with urllib.request.urlopen(url, timeout=10) as r:
            doc = json.load(r)
        assert doc["status"] == "success", doc
        return doc["data"]

    def query(self, q):
        return self.api("query", query=q)["result"]

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def request_bucket(doc):
    """The bucket (low, high] that holds the growth of every request of the run (the
    stand-in's requests all grow alike), bounds 2^k and 1.5 x 2^k from 64 KiB."""
    bounds = sorted([2 ** k for k in range(16, 35)] + [3 * 2 ** k for k in range(15, 33)])
    assert len(bounds) == 37
    grew = {sum(v for c, v in r["rss_growth_bytes"].items() if c != "swap")
            for r in doc["requests"] if r["end_s"] is not None}
    inb = {[b for b in bounds if b >= g][0] for g in grew}
    assert len(inb) == 1, ("requests in several buckets", grew)
    hi = inb.pop()
    return bounds[bounds.index(hi) - 1], hi


def test_prometheus_scrapes_growth_per_phase_equal_to_json():
    """A real Prometheus (scrape every 1 s, OpenMetrics negotiated) scrapes memphase during a
    llama-serve run that holds 3 s after its teardown; afterwards PromQL through the HTTP API
    gives, per phase and class, exactly --json's rss_growth_bytes (and per phase, summed
    over the classes); the scrapes were OpenMetrics (info type and units kept), up was 1.
    Every request grows 4.25 MiB: histogram_quantile's p50 and p95 lie in its bucket
    (4, 6 MiB] (with x4 buckets they read 10 and 15.4 MiB)."""
    need_prometheus()
    with harness.workdir() as d:
        port, out = free_port(), os.path.join(d, "o.json")
        prom = Prometheus(d, port)
        try:
            p = start(["run", "--no-tui", "--metrics", str(port), "--json", out, "--"] +
                      serve_args(requests=10, hold_ms=3000))
            try:
                wait_metrics(p, port)
                # scraped while it runs
                deadline = time.time() + 30
                up = []
                while time.time() < deadline and p.poll() is None:
                    up = prom.query('up{job="memphase"}')
                    if up and up[0]["value"][1] == "1":
                        break
                    time.sleep(0.5)
                assert up and up[0]["value"][1] == "1", (up, prom.api("targets"))
                # a second scrape while memphase serves (however slow the machine): the
                # run's end may come before it (memphase then waits for it) or after
                while time.time() < deadline and p.poll() is None:
                    n = prom.query("count_over_time(memphase_run_info[10m])")
                    if n and int(n[0]["value"][1]) >= 2:
                        break
                    time.sleep(0.5)
                during = time.time()
            finally:
                finish(p)
            doc = harness.load_json(out)
            pid = str(doc["target"]["pid"])
            sel = '{job="memphase",pid="%s"}' % pid
            res = prom.query("last_over_time(memphase_phase_growth_bytes_total%s[10m])" % sel)
            got = {(r["metric"]["phase"], r["metric"]["class"]): int(float(r["value"][1]))
                   for r in res}
            want = json_growth(doc)
            assert got == want, ("PromQL", got, "JSON", want)
            assert sum(want.values()) > 20 * MIB, want
            res = prom.query('sum by (phase) (last_over_time('
                             'memphase_phase_growth_bytes_total%s[10m]))' % sel)
            by_phase = {r["metric"]["phase"]: int(float(r["value"][1])) for r in res}
            assert by_phase == {x["name"]: sum(x["rss_growth_bytes"].values())
                                for x in doc["phases"]}, by_phase
            # several scrapes, each parsed as OpenMetrics (the info type exists only there)
            n = prom.query("count_over_time(memphase_run_info%s[10m])" % sel)
            assert n and int(n[0]["value"][1]) >= 2, n
            meta = prom.api("metadata", metric="memphase_run")
            assert meta["memphase_run"][0]["type"] == "info", meta
            # the units, which only OpenMetrics carries (Prometheus refuses a scrape whose
            # UNIT is not the name's last words: up was 1)
            for name, unit in (("memphase_rss_bytes", "bytes"),
                               ("memphase_phase_growth_bytes", "bytes"),
                               ("memphase_phase_seconds", "seconds"),
                               ("memphase_start_time_seconds", "seconds"),
                               ("memphase_request_growth_bytes", "bytes"),
                               ("memphase_requests", "")):
                meta = prom.api("metadata", metric=name)
                assert meta and meta[name][0]["unit"] == unit, (name, meta)
            res = prom.query("last_over_time(memphase_requests_total%s[10m])" % sel)
            assert int(float(res[0]["value"][1])) == len(doc["requests"]) == 10, res
            # the requests' quantiles, as Prometheus reads them, in the bucket of their growth
            lo, hi = request_bucket(doc)
            for q in ("0.5", "0.95"):
                res = prom.query("histogram_quantile(%s, last_over_time("
                                 "memphase_request_growth_bytes_bucket%s[10m]))" % (q, sel))
                got = float(res[0]["value"][1])
                assert lo < got <= hi, ("p" + q, got, "not in", (lo, hi))
            # the dashboard's PromQL, as Grafana would send it, at a time of the run
            _, exprs, _ = dashboard_names()
            for e in exprs:
                if e.startswith("label_values("):
                    continue
                res = dashboard_query(prom, e, during, "http")
                if "memphase_rss_bytes" in e:
                    assert len(res) == 4, (e, res)
        finally:
            prom.close()


def dashboard_names():
    """Metric names in the dashboard's PromQL (panels' targets and annotations)."""
    with open(DASHBOARD) as f:
        dash = json.load(f)
    exprs = []

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                # PromQL of panels and annotations; label_values() of the variables
                if k in ("expr", "query") and isinstance(v, str):
                    exprs.append(v)
                else:
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(dash)
    names = set()
    for e in exprs:
        # label values and matchers are strings: drop them before looking for names
        names |= set(re.findall(r"\bmemphase_[a-z0-9_]+", re.sub(r'"[^"]*"', '""', e)))
    return dash, exprs, names


def dashboard_source_var(dash):
    """The dashboard's source variable: one value at a time, chosen among the sources."""
    var = {v["name"]: v for v in dash["templating"]["list"]}
    src = var.get("source")
    assert src and src["query"] == "label_values(memphase_run_info, source)", src
    assert not src.get("multi") and not src.get("includeAll"), src
    return src


def test_grafana_dashboard_uses_exported_names():
    """Every metric name in the dashboard's PromQL is one memphase exports: the union of the
    names in the expositions of a run with pinned memory and VRAM (the stand-in CUDA and
    NVML libraries) that keeps growing (so time to OOM is projected), scraped throughout.
    Every selector of a memphase metric (panels, annotations, the other variables) takes
    one source, the variable's, which lists single values (no All); the server's samples
    are all source="http", the textfile's all source="textfile"."""
    harness.need_root()
    dash, exprs, names = dashboard_names()
    assert len(exprs) >= 6 and names, exprs
    src = dashboard_source_var(dash)
    for e in exprs:
        if e == src["query"]:
            continue
        sels = re.findall(r"\b(memphase_[a-z0-9_]+)(\{[^}]*\})?", e)
        assert sels, e
        for name, sel in sels:
            assert 'source="$source"' in sel, ("a selector of every source", name, e)
    titles = " ".join(p.get("title", "") for p in dash["panels"]).lower()
    for t in ("rss", "request", "oom", "pinned", "vram"):
        assert t in titles, (t, titles)
    assert dash["annotations"]["list"], "no phase annotations"
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import test_gpu
    exported, sources = set(), {}
    with harness.workdir() as d:
        state, tf = os.path.join(d, "gpu.state"), os.path.join(d, "m.prom")
        test_gpu.write_state(state)
        port = free_port()
        env = dict(os.environ, MEMPHASE_STANDIN_GPU=state, MEMPHASE_NVML_LIB=test_gpu.NVML)
        p = subprocess.Popen(harness.mp_argv(
            ["run", "--no-tui", "--metrics", str(port), "--metrics-textfile", tf, "--",
             harness.DRIVER, "--cudart", test_gpu.CUDART, "--pin-mib", "4", "--vram-mib", "32",
             "--ctx-mib", "2", "--prompt-batches", "2", "--batch-mib", "1", "--tokens", "3",
             "--grow-mib-per-s", "16", "--grow-limit-mib", "96"]), env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            while p.poll() is None:
                try:
                    st, _, body = get(port, timeout=2)
                    if st == 200:
                        exported |= {n for n, _, _ in samples(body)}
                        sources.setdefault("http", set()).update(
                            lb.get("source") for _, lb, _ in samples(body))
                    # the textfile as it is written (renamed into place: whole)
                    with open(tf) as f:
                        text = f.read()
                    exported |= {n for n, _, _ in samples(text)}
                    sources.setdefault("textfile", set()).update(
                        lb.get("source") for _, lb, _ in samples(text))
                except OSError:
                    pass
                time.sleep(0.2)
        finally:
            finish(p)
    assert sources == {"http": {"http"}, "textfile": {"textfile"}}, sources
    for want in ("memphase_time_to_oom_seconds", "memphase_gpu_host_bytes",
                 "memphase_vram_bytes"):
        assert want in exported, (want, sorted(exported))
    missing = names - exported
    assert not missing, "the dashboard refers to names memphase does not export: %s" % \
        sorted(missing)


def dashboard_query(prom, expr, at, source):
    """The dashboard's expr as Grafana sends it with every job, instance and comm."""
    q = expr.replace("$__rate_interval", "4s").replace("$__range", "10m")
    q = q.replace("$source", source) if source else q.replace('source="$source",', "")
    q = re.sub(r"\$[a-z]+", ".*", q)
    return prom.api("query", query=q, time="%.3f" % at)["result"]


def test_dashboard_counts_a_run_once_scraped_both_ways():
    """One Prometheus scrapes memphase's --metrics (job memphase) and node_exporter serving
    its --metrics-textfile (job node) during a llama-serve run. The dashboard's queries, at
    a time both sources were scraped, with every job and instance: RSS by class has the
    run's 4 series per source, each source's values its own job's; without the source
    matcher (the dashboard before) the same query sums both, twice the run."""
    need_prometheus()
    with harness.workdir() as d:
        port, tf = free_port(), os.path.join(d, "memphase.prom")
        ne = NodeExporter(d)
        prom = None
        try:
            prom = Prometheus(d, port, jobs={"node": ne.port})
            # requests until killed: the run lasts as long as the scrapes take
            pid = None
            p = start(["run", "--no-tui", "--metrics", str(port), "--metrics-textfile", tf,
                       "--"] + serve_args(requests=0))
            try:
                pid = [lb["pid"] for n, lb, _ in samples(wait_metrics(p, port))
                       if n == "memphase_run_info"][0]
                deadline = time.time() + 60
                while True:
                    n = {r["metric"]["source"]: int(float(r["value"][1])) for r in
                         prom.query("count_over_time(memphase_run_info[1m])")}
                    if min(n.get("http", 0), n.get("textfile", 0)) >= 2:
                        break
                    assert p.poll() is None and time.time() < deadline, \
                        ("not both sources scraped", n, prom.api("targets"))
                    time.sleep(0.5)
                at = time.time()
            finally:
                if p.poll() is None and pid:
                    os.kill(int(pid), signal.SIGTERM)
                elif p.poll() is None:
                    p.terminate()
                p.communicate(timeout=120)
            rss = [e for e in dashboard_names()[1] if e.startswith(
                "sum by (comm, pid, class) (memphase_rss_bytes")]
            assert len(rss) == 1, rss
            own = {}
            for source, job in (("http", "memphase"), ("textfile", "node")):
                res = dashboard_query(prom, rss[0], at, source)
                assert len(res) == 4, (source, res)
                got = {r["metric"]["class"]: float(r["value"][1]) for r in res}
                want = {r["metric"]["class"]: float(r["value"][1]) for r in prom.api(
                    "query", query='memphase_rss_bytes{job="%s"}' % job,
                    time="%.3f" % at)["result"]}
                assert got == want, (source, got, want)
                own[source] = got
            both = dashboard_query(prom, rss[0], at, None)
            assert len(both) == 4, both
            for r in both:
                c = r["metric"]["class"]
                assert float(r["value"][1]) == own["http"][c] + own["textfile"][c], (c, both)
            assert sum(own["http"].values()) > 0, own
        finally:
            if prom:
                prom.close()
            ne.close()


def _pid_series(body, pid):
    return [s for s in samples(body) if s[1].get("pid") == str(pid)]


def test_watch_metrics_merged_per_process():
    """memphase watch --metrics and --metrics-textfile, as the invoking user nobody, with
    two stand-ins of a comm of their own (a small and a larger context). While both run, one
    exposition holds both processes' series (their pids), each family's HELP and TYPE once,
    promtool-clean, and so does the textfile (nobody's); OpenMetrics, when asked, ends in
    # EOF; watch's own series count the two. A real Prometheus scrapes watch every second:
    afterwards PromQL gives, per process, exactly that process's JSON growth per phase and
    class. The process that ends first leaves the exposition, after Prometheus has scraped
    its final figures (target_ended 1), while the other, still running, stays. Every line a
    child wrote on stderr reaches watch's stderr with its [comm pid]. When watch ends, its
    textfile goes."""
    need_prometheus()
    import test_watch as tw
    with harness.workdir() as d:
        out, tf = os.path.join(d, "out"), os.path.join(d, "watch.prom")
        os.mkdir(out)
        os.chmod(out, 0o777)
        port = free_port()
        comm = tw.unique("wq")
        drv = tw.named(d, comm)
        prom = Prometheus(d, port)
        procs, w = [], None
        try:
            # -v: each observation prints its markers; nobody may observe its own processes
            w = tw.Watch(d, ["--comm", comm, "--out-dir", out, "--metrics", str(port),
                             "--metrics-textfile", tf, "-v"], env=tw.NOBODY)
            a = tw.start(tw.drv_args(d, "a", exe=drv, ctx_mib=8, tokens=10, sleep_ms=50),
                         tw.AS_NOBODY)
            b = tw.start(tw.drv_args(d, "b", exe=drv, ctx_mib=32, tokens=60, sleep_ms=200),
                         tw.AS_NOBODY)
            procs = [a, b]
            # both observed: one exposition, both pids
            deadline = time.time() + 60
            while True:
                st, hdr, body = get(port)
                have = {lb.get("pid") for n, lb, _ in samples(body) if n == "memphase_run_info"}
                if {str(a.pid), str(b.pid)} <= have and a.poll() is None:
                    break
                assert a.poll() is None, "the first process ended before both were observed"
                assert time.time() < deadline, ("not both observed", have, w.stderr())
                time.sleep(0.2)
            assert st == 200 and hdr["Content-Type"] == CT_TEXT, (st, hdr)
            promtool_clean(body, "watch's merged exposition")
            for kind in ("HELP", "TYPE"):
                names = [x.split()[2] for x in body.splitlines()
                         if x.startswith("# %s " % kind)]
                assert len(names) == len(set(names)) >= 30, \
                    [n for n in names if names.count(n) > 1]
            for p in (a, b):
                ids = {lb["comm"] for _, lb, _ in _pid_series(body, p.pid)}
                assert ids == {comm}, ids
                rss = [s for s in _pid_series(body, p.pid) if s[0] == "memphase_rss_bytes"]
                assert len(rss) == 4, rss
            assert {lb.get("source") for _, lb, _ in samples(body)} == {"http"}
            own = {(n, lb.get("outcome")): v for n, lb, v in samples(body)
                   if n.startswith("memphase_watch_")}
            assert own[("memphase_watch_processes_total", "matched")] == 2, own
            assert own[("memphase_watch_observed_processes", None)] == 2, own
            assert own[("memphase_watch_self_resident_memory_bytes", None)] > 0, own
            st, hdr, om = get(port, headers={"Accept": OM_ACCEPT})
            assert st == 200 and hdr["Content-Type"] == CT_OM and om.endswith("\n# EOF\n")
            assert om.count("# TYPE memphase_run info\n") == 1, om[:3000]
            assert om.count("# UNIT memphase_rss_bytes bytes\n") == 1, om[:3000]
            assert "# UNIT memphase_watch_self_cpu_seconds seconds\n" in om, om[:3000]
            assert "# UNIT" not in body, "a UNIT in the text format"
            assert om.count("\n# EOF\n") == 1
            # the textfile: written while they run, nobody's, lint-clean, both processes
            deadline = time.time() + 30
            while True:
                text = open(tf).read() if os.path.exists(tf) else ""
                ids = {lb.get("pid") for n, lb, _ in samples(text) if n == "memphase_run_info"}
                if {str(a.pid), str(b.pid)} <= ids:
                    break
                assert time.time() < deadline, ("textfile", ids)
                time.sleep(0.2)
            promtool_clean(text, "watch's merged textfile")
            assert {lb.get("source") for _, lb, _ in samples(text)} == {"textfile"}
            assert (os.stat(tf).st_uid, os.stat(tf).st_gid) == (65534, 65534)
            # a ends: its final figures are served, then its series go; b stays while alive
            assert a.wait(timeout=120) == 0
            ended_at = time.time()
            saw_end = False
            while True:
                b_alive = b.poll() is None
                body = get(port)[2]
                mine = _pid_series(body, a.pid)
                saw_end |= ("memphase_target_ended", {"source": "http", "comm": comm,
                                                      "pid": str(a.pid)}, 1.0) in mine
                if not mine:
                    break
                assert time.time() < ended_at + 90, "pid %d never left" % a.pid
                time.sleep(0.2)
            assert saw_end, "the final figures of pid %d were never served" % a.pid
            if b_alive:
                assert _pid_series(body, b.pid), "pid %d left while running" % b.pid
            assert b.wait(timeout=120) == 0
            while _pid_series(get(port)[2], b.pid):
                time.sleep(0.2)
            # the textfile: watch's count once both observations wrote their files
            deadline = time.time() + 30
            while True:
                samp = samples(open(tf).read())
                if ("memphase_watch_processes_total",
                        {"source": "textfile", "outcome": "written"}, 2.0) in samp:
                    break
                assert time.time() < deadline, samp
                time.sleep(0.2)
            # Prometheus: each process's growth is its JSON's; both final figures scraped
            for p in (a, b):
                files = glob.glob(os.path.join(out, "%s.%d.*.json" % (comm, p.pid)))
                assert len(files) == 1, os.listdir(out)
                doc = harness.load_json(files[0])
                sel = '{job="memphase",pid="%d"}' % p.pid
                res = prom.query("last_over_time(memphase_phase_growth_bytes_total%s[10m])"
                                 % sel)
                got = {(r["metric"]["phase"], r["metric"]["class"]): int(float(r["value"][1]))
                       for r in res}
                assert got == json_growth(doc), (p.pid, "PromQL", got, "JSON",
                                                 json_growth(doc))
                res = prom.query("max_over_time(memphase_target_ended%s[10m])" % sel)
                assert res and res[0]["value"][1] == "1", res
            ctx = {p.pid: harness.phase(harness.load_json(glob.glob(os.path.join(
                out, "%s.%d.*.json" % (comm, p.pid)))[0]), "context")["rss_growth_bytes"]["anon"]
                for p in (a, b)}
            assert ctx[b.pid] - ctx[a.pid] >= 20 * MIB, ctx
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            if w:
                rc, n = w.stop()
            prom.close()
        assert rc == 0 and n == {"matched": 2, "written": 2, "gone": 0, "skipped": 0,
                                 "failed": 0}, (rc, n, w.stderr())
        # the children's lines, each with its process's [comm pid]
        lines = w.stderr().splitlines()
        tagged = {}
        for line in lines:
            if line.startswith("memphase: watch:"):
                continue
            m = re.match(r"\[(\S+) (\d+)\] memphase: ", line)
            assert m and m.group(1) == comm, "a line without [comm pid]: %r" % line
            tagged[int(m.group(2))] = tagged.get(int(m.group(2)), 0) + 1
        assert set(tagged) == {a.pid, b.pid} and min(tagged.values()) >= 5, tagged
        # watch ended: its textfile with it (node_exporter would serve it for good)
        assert not os.path.exists(tf), os.listdir(d)
        assert not [f for f in os.listdir(d) if "memphase-" in f], os.listdir(d)
