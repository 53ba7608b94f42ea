#!/usr/bin/env python3
"""Benchmark gab beside ab, wrk, h2load and hey against a local nginx, and
gab --http3 beside a plain quic-go HTTP/3 client against a local Caddy.

nginx runs one worker pinned to CPU 0 (access log off) on 127.0.0.1 and serves
files of 100 B, 10 KiB and 1 MiB over plain HTTP/1.1, h2c, HTTPS (HTTP/1.1 over
TLS) and h2 over TLS; the TLS servers use a self-signed certificate made at
start-up in the harness's temporary directory (ECDSA P-256 by default, TLS 1.3
only by default). Each client is pinned to CPU 1 and run under /usr/bin/time,
so the client's own CPU per completed request is (user + sys) / requests.
gab-uring (gab --engine uring, the io_uring engine of the HTTP/1 event loops)
runs beside gab in the plain HTTP/1 cells. Tools run interleaved, several repetitions; the tables show medians with
min-max, and a last table each gab cell against the peers its target names.
Everything is bounded and stopped by PID.

The HTTP/3 cells run against Debian's Caddy (it serves HTTP/3; one process
pinned to CPU 0, GOMAXPROCS=1, or with --caddy-unpinned on every CPU;
nginx's certificate, the same files): gab --http3,
and beside it bench/h3peer (what a Go tool writes with quic-go's own http3
client: an http.Client per connection, a goroutine per stream) and, in the
"Caddy h2" cells, gab --http2 and h2load over TLS against the same Caddy.

In the plain HTTP/1.1 keep-alive cells the tool "floor" is bench/floor.c (built
with gcc into the temporary directory): a C client that does nothing but
read, write and epoll_wait, the least CPU per request an epoll client spends.

  bench/bench.py --tier quick    # the cells BENCHMARKS.md's targets name, 5 reps (~15 min)
  bench/bench.py --tier full     # the whole matrix
  bench/bench.py --tier smoke    # a short check that the harness works
  bench/bench.py --gab /tmp/gab-new --gab-base /tmp/gab-old   # before/after one change
  bench/bench.py --tier quick --list   # the cells and commands, nothing run

A client that is not installed (or cannot open c connections under the file
limit) is left out with a note; nginx, openssl, taskset and /usr/bin/time are
required.
"""
import argparse
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZES = {"100": 100, "10k": 10240, "1m": 1048576}

# proto: "http" (HTTP/1.1), "https" (HTTP/1.1 over TLS), "h2c" (HTTP/2 with prior
# knowledge), "h2" (HTTP/2 over TLS, ALPN), "h3" (HTTP/3 against Caddy), "h2caddy"
# (HTTP/2 over TLS against the same Caddy). streams: streams per connection.
Cell = namedtuple("Cell", "proto size c ka streams n")

PROTO_TITLE = {
    "http": "HTTP/1.1",
    "https": "HTTPS (HTTP/1.1 over TLS)",
    "h2c": "HTTP/2 cleartext (h2c)",
    "h2": "HTTP/2 over TLS (h2)",
    "h3": "HTTP/3 (QUIC), Caddy",
    "h2caddy": "HTTP/2 over TLS (h2), Caddy",
    "pipe": "HTTP/1.1 pipelined (gab --pipeline; streams = its depth)",
}
STREAMED = ("h2c", "h2", "h3", "h2caddy", "pipe")  # cells with streams per connection
CADDY = ("h3", "h2caddy")  # cells against Caddy

# The server has one port per protocol: base, base+1, ... in this order; Caddy
# serves HTTP/3 (UDP) and h2 (TCP) on base+4.
PORT_OFFSET = {"pipe": 0, "http": 0, "h2c": 1, "https": 2, "h2": 3, "h3": 4, "h2caddy": 4}

NGINX_CONF = """
worker_processes 1;
worker_cpu_affinity 01;
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log error;
events {{ worker_connections 12000; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000000;
    keepalive_timeout 65;
    # TLS: nginx's defaults for everything but the protocol (ssl_session_cache
    # none, ssl_session_tickets on, ssl_session_timeout 5m, no early data).
    ssl_certificate {work}/cert.pem;
    ssl_certificate_key {work}/key.pem;
    ssl_protocols {protocols};
    server {{
        listen 127.0.0.1:{port} backlog=4096 reuseport;
        root {work}/www;
    }}
    server {{
        # nginx 1.22's h2c stalls with sendfile on.
        listen 127.0.0.1:{h2cport} backlog=4096 http2;
        sendfile off;
        root {work}/www;
    }}
    server {{
        listen 127.0.0.1:{tlsport} backlog=4096 ssl;
        root {work}/www;
    }}
    server {{
        listen 127.0.0.1:{h2port} backlog=4096 ssl http2;
        root {work}/www;
    }}
}}
"""

# Caddy: HTTP/1.1, HTTP/2 and HTTP/3 on localhost (its QUIC certificate is
# picked by SNI, which clients send for names only), nginx's certificate, no log.
CADDYFILE = """
{{
    admin off
    auto_https disable_redirects
    skip_install_trust
    servers {{
        protocols h1 h2 h3
    }}
}}
localhost:{port} {{
    tls {work}/cert.pem {work}/key.pem
    root * {work}/www
    file_server
}}
"""

KEYS = {
    # certbot's default key since 2.0, and what most HTTPS sites now present
    "ec": ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"],
    "rsa": ["-newkey", "rsa:2048"],
}
PROTOCOLS = {"1.3": "TLSv1.3", "1.2": "TLSv1.2"}

INSTALL = "apt-get install -y apache2-utils wrk nghttp2-client hey nginx-light openssl time caddy"


def need(tool):
    path = shutil.which(tool)
    if not path:
        sys.exit(f"bench: {tool} is not installed ({INSTALL})")
    return path


def nginx_http2_listen():
    """nginx 1.25.1 replaced `listen ... http2` with the `http2 on;` directive."""
    out = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr
    m = re.search(r"nginx/(\d+)\.(\d+)\.(\d+)", out)
    return not m or tuple(map(int, m.groups())) < (1, 25, 1)


class Nginx:
    def __init__(self, port, key, tls):
        self.work = tempfile.mkdtemp(prefix="gab-bench-")
        os.chmod(self.work, 0o755)  # nginx's workers run as nobody: they must be able to read www/
        os.makedirs(f"{self.work}/www", mode=0o755)
        for name, size in SIZES.items():
            with open(f"{self.work}/www/f{name}.txt", "wb") as f:
                f.write(b"a" * size)
        subprocess.run(["openssl", "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                        "-keyout", f"{self.work}/key.pem", "-out", f"{self.work}/cert.pem"] + KEYS[key],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        conf = NGINX_CONF.format(work=self.work, protocols=PROTOCOLS[tls],
                                 **{k + "port": port + off for k, off in
                                    (("", 0), ("h2c", 1), ("tls", 2), ("h2", 3))})
        if not nginx_http2_listen():
            conf = conf.replace(" http2;", ";\n        http2 on;")
        with open(f"{self.work}/nginx.conf", "w") as f:
            f.write(conf)
        self.proc = subprocess.Popen(
            ["nginx", "-c", f"{self.work}/nginx.conf", "-p", self.work],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(f"{self.work}/nginx.pid"):
                break
            if self.proc.poll() is not None:
                with open(f"{self.work}/error.log") as f:
                    sys.exit(f"bench: nginx did not start:\n{f.read()}")
            time.sleep(0.05)
        time.sleep(0.2)

    def stop(self):
        stop_process(self.proc, signal.SIGQUIT)
        with open(f"{self.work}/error.log", errors="replace") as f:
            errors = f.read().splitlines()
        if errors:  # e.g. too few worker_connections: the figures above may be wrong
            print(f"bench: nginx logged {len(errors)} error(s), the last:\n" + "\n".join(errors[-5:]), file=sys.stderr)
        shutil.rmtree(self.work, ignore_errors=True)


class Caddy:
    """Caddy serving the files of work (www/) on port: pinned to CPU 0 with
    GOMAXPROCS=1 as nginx is, or on every CPU (pinned=False)."""

    def __init__(self, work, port, pinned=True):
        self.work = work
        with open(f"{work}/Caddyfile", "w") as f:
            f.write(CADDYFILE.format(port=port, work=work))
        env = dict(os.environ, HOME=work, XDG_DATA_HOME=f"{work}/caddy-data",
                   XDG_CONFIG_HOME=f"{work}/caddy-config")
        cmd = ["caddy", "run", "--config", f"{work}/Caddyfile", "--adapter", "caddyfile"]
        if pinned:
            env["GOMAXPROCS"] = "1"
            cmd = ["taskset", "-c", "0"] + cmd
        self.log = open(f"{work}/caddy.log", "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        for _ in range(200):  # until it answers over TLS
            if self.proc.poll() is not None:
                sys.exit(f"bench: caddy did not start:\n{open(f'{work}/caddy.log', errors='replace').read()[-2000:]}")
            r = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-servername", "localhost"],
                               input=b"", capture_output=True, timeout=5)
            if b"BEGIN CERTIFICATE" in r.stdout:
                break
            time.sleep(0.1)
        time.sleep(0.3)  # the UDP listener starts beside the TCP one

    def stop(self):
        stop_process(self.proc, signal.SIGTERM)
        self.log.close()


def stop_process(proc, sig):
    """Stops proc by its PID with sig (a graceful stop), killing it after 10 s."""
    proc.send_signal(sig)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def timed(cmd, cpu, timeout):
    """Runs cmd pinned to cpu (None: unpinned) under /usr/bin/time; returns (stdout+stderr, user+sys s, maxrss KB)."""
    tf = tempfile.NamedTemporaryFile(delete=False)
    tf.close()
    full = ["/usr/bin/time", "-o", tf.name, "-f", "%U %S %M"]
    if cpu is not None:
        full += ["taskset", "-c", str(cpu)]
    full += cmd
    # Its own process group, so that a timeout or an interrupt stops the
    # client too, not only /usr/bin/time.
    p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        os.unlink(tf.name)
        raise
    with open(tf.name) as f:
        lines = f.read().strip().splitlines()
    os.unlink(tf.name)
    u, s, m = lines[-1].split()
    return out.decode("latin1"), float(u) + float(s), int(m)


def parse_count(tool, out):
    """Completed requests and req/s as the tool reports them."""
    if tool in ("h3peer", "floor"):
        m = re.search(r"requests (\d+) failed (\d+) seconds [\d.]+ rps ([\d.]+)", out)
        return int(m.group(1)) - int(m.group(2)), float(m.group(3))
    if tool in ("gab", "gab-base", "gab-resume", "gab-uring", "ab"):
        n = int(re.search(r"Complete requests:\s+(\d+)", out).group(1))
        failed = int(re.search(r"Failed requests:\s+(\d+)", out).group(1))
        non2xx = re.search(r"Non-2xx responses:\s+(\d+)", out)
        if non2xx:  # an error page is not the document being benchmarked
            failed += int(non2xx.group(1))
        rps = float(re.search(r"Requests per second:\s+([\d.]+)", out).group(1))
        return n - failed, rps
    if tool == "wrk":
        n = int(re.search(r"(\d+) requests in", out).group(1))
        errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        if errors:
            n -= int(errors.group(1))
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
        return n, rps
    if tool == "h2load":
        m = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded", out)
        rps = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out).group(1))
        return int(m.group(1)), rps
    if tool == "hey":
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
        m = re.search(r"\[200\]\s+(\d+) responses", out)
        return int(m.group(1)) if m else 0, rps
    raise ValueError(tool)


def command(tool, gab, cell, url, seconds, threads=1, h3peer="h3peer", floor="floor"):
    """The command line of tool for cell, or None when the tool has no such mode."""
    n, c, ka = str(cell.n), str(cell.c), cell.ka
    if cell.proto == "pipe":  # gab only: ab, h2load --h1 and hey do not pipeline
        return [gab, "-q", "-k", "--pipeline", str(cell.streams), "-n", n, "-c", c, url] if tool in ("gab", "gab-base") else None
    if cell.proto == "h3":  # Debian's h2load has no QUIC
        if tool in ("gab", "gab-base"):
            return [gab, "-q", "--http3", "--streams", str(cell.streams), "-n", n, "-c", c, url]
        if tool == "h3peer":
            return [h3peer, "-n", n, "-c", c, "-streams", str(cell.streams), url]
        return None
    if tool == "h3peer":
        return None
    if tool == "floor":  # bench/floor.c: plain HTTP/1.1 keep-alive only
        return [floor, "-n", n, "-c", c, url] if cell.proto == "http" and ka else None
    if cell.proto in ("h2c", "h2", "h2caddy"):
        if tool in ("gab", "gab-base"):
            return [gab, "-q", "--http2", "--streams", str(cell.streams), "-n", n, "-c", c, url]
        if tool == "h2load":  # h2c with prior knowledge on http://, h2 by ALPN on https://
            return ["h2load", "-t1", "-n", n, "-c", c, "-m", str(cell.streams), url]
        return None  # ab and wrk speak HTTP/1 only; hey cannot set streams per connection
    if tool == "gab-resume":  # gab --tls-resume: TLS sessions resumed on reconnect, a cost apart from ab's
        return [gab, "-q", "--tls-resume", "-n", n, "-c", c, url] if cell.proto == "https" and not ka else None
    if tool == "gab-uring":  # the io_uring engine of the HTTP/1 event loops: plain HTTP/1 only
        return [gab, "-q", "--engine", "uring", "-n", n, "-c", c] + (["-k"] if ka else []) + [url] if cell.proto == "http" else None
    if tool in ("gab", "gab-base"):
        return [gab, "-q", "-n", n, "-c", c] + (["-k"] if ka else []) + [url]
    if tool == "ab":
        return ["ab", "-q", "-n", n, "-c", c] + (["-k"] if ka else []) + [url]
    if tool == "wrk":  # no non-keep-alive mode: the server closes after each response instead
        return ["wrk", f"-t{threads}", f"-c{max(cell.c, threads)}", f"-d{seconds}s"] + (
            [] if ka else ["-H", "Connection: close"]) + [url]
    if tool == "h2load":  # --h1: HTTP/1.1 on http:// and, by ALPN, on https://; keep-alive only
        return ["h2load", "--h1", "-t1", "-n", n, "-c", c, url] if ka else None
    if tool == "hey":
        return ["hey", "-n", n, "-c", c, "-cpus", "1"] + ([] if ka else ["-disable-keepalive"]) + [url]
    raise ValueError(tool)


def cells_of(tier):
    """The cells of a tier, each with its request count (sized for ~1-3 s per run here)."""
    def h1(proto, size, c, ka):
        if proto == "https":
            n = 150000 if ka else 5000
        else:
            n = 200000 if ka else 30000
        if c == 1:
            n //= 5  # one request at a time runs at ~16k req/s
        if size == "10k":
            n //= 2
        if size == "1m":
            n = 5000
        return Cell(proto, size, c, ka, 1, max(n, 2 * c))

    def h2(proto, streams):
        return Cell(proto, "100", 10, True, streams, 100000)

    def h3(proto, streams):  # Caddy: about 10k req/s here
        return Cell(proto, "100", 10, True, streams, 50000)

    if tier == "smoke":
        return [h1("http", "100", 10, True), h1("http", "100", 10, False),
                h1("https", "100", 10, True), h1("https", "100", 10, False),
                h2("h2", 10), h3("h3", 10), h3("h2caddy", 10)]
    if tier == "quick":
        return ([h1("http", "100", c, True) for c in (10, 100, 1)]
                + [h1("http", "100", c, False) for c in (10, 100)]
                + [h1("http", "1m", 10, True)]
                + [Cell("pipe", "100", 100, True, 16, 400000)]  # --pipeline 16 beside the c=100 row
                + [h1("http", "100", c, True) for c in (1000, 5000)]
                + [h2("h2c", m) for m in (1, 10)]
                + [h1("https", "100", c, True) for c in (10, 100, 1000, 5000)]
                + [h1("https", "100", c, False) for c in (10, 100)]
                + [h2("h2", m) for m in (1, 10)]
                + [h3(p, 10) for p in CADDY])
    return ([h1("http", s, c, ka) for s in SIZES for c in (1, 10, 100, 1000) for ka in (True, False)]
            + [h1("http", "100", 5000, True)]
            + [h2("h2c", m) for m in (1, 10)]
            + [h1("https", s, c, ka) for s in SIZES for c in (1, 10, 100) for ka in (True, False)]
            + [h1("https", "100", c, True) for c in (1000, 5000)]
            + [h2("h2", m) for m in (1, 10)]
            + [h3(p, m) for p in CADDY for m in (1, 10)])


def cell_title(cell):
    return (f"{PROTO_TITLE[cell.proto]}, {cell.size}, c={cell.c}, "
            + (f"streams={cell.streams}" if cell.proto in STREAMED else f"keep-alive={'yes' if cell.ka else 'no'}"))


def scaled(cell, scale):
    return cell._replace(n=max(int(cell.n * scale), 2 * cell.c)) if scale != 1 else cell


def url_of(cell, port):
    if cell.proto in CADDY:
        return f"https://localhost:{port + PORT_OFFSET[cell.proto]}/f{cell.size}.txt"
    scheme = "https" if cell.proto in ("https", "h2") else "http"
    return f"{scheme}://127.0.0.1:{port + PORT_OFFSET[cell.proto]}/f{cell.size}.txt"


# Targets: the peers gab's client CPU per request is compared with, per kind of cell.
def peers_of(cell):
    if cell.proto == "pipe":
        return ()  # compare with gab's own http 100 c=100 keep-alive row
    if cell.proto == "h3":
        return ("h3peer",)
    if cell.proto in ("h2c", "h2", "h2caddy"):
        return ("h2load",)
    return ("ab", "wrk", "h2load") if cell.ka else ("ab",)


def fmt(values, scale=1.0, digits=1):
    if not values:
        return "-"
    v = [x * scale for x in values]
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}-{max(v):.{digits}f})"


def raise_nofile():
    """Raises the open-file limit to its hard limit (children inherit it); returns the limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        want = 1 << 20 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return soft


def interrupted(*_):
    raise KeyboardInterrupt


def main():
    # SIGTERM (kill, a CI timeout) unwinds like Ctrl-C, so that nginx and the
    # running client are stopped by the finally blocks.
    signal.signal(signal.SIGTERM, interrupted)
    ap = argparse.ArgumentParser()
    ap.add_argument("--tier", choices=["smoke", "quick", "full"], default="quick")
    ap.add_argument("--reps", type=int, default=0, help="repetitions (default: 5 quick/full, 2 smoke)")
    ap.add_argument("--scale", type=float, default=0,
                    help="multiply every cell's requests and wrk's duration (default: 1, smoke 0.1)")
    ap.add_argument("--gab", default="", help="gab binary (default: build it)")
    ap.add_argument("--gab-base", default="", help="a second gab binary, the tool 'gab-base' (e.g. the build before a change)")
    ap.add_argument("--tools", default="",
                    help="comma-separated clients (default: gab,gab-uring,gab-resume,gab-base,ab,wrk,h2load,hey,h3peer,floor; "
                    "gab-base only with --gab-base; gab-uring is gab --engine uring, in plain HTTP/1 cells only; "
                    "gab-resume is gab --tls-resume, in HTTPS cells without keep-alive only; h3peer "
                    "is bench/h3peer, in the HTTP/3 cells only; floor is bench/floor.c, built with gcc, in the "
                    "plain keep-alive cells only)")
    ap.add_argument("--key", choices=sorted(KEYS), default="ec", help="the certificate's key: ec (P-256) or rsa (2048)")
    ap.add_argument("--tls", choices=sorted(PROTOCOLS), default="1.3", help="the only TLS version nginx accepts")
    ap.add_argument("--port", type=int, default=18480, help="first of five ports: HTTP, h2c, HTTPS, h2, Caddy (TCP and UDP)")
    ap.add_argument("--caddy-unpinned", action="store_true",
                    help="run Caddy on every CPU with Go's default GOMAXPROCS (default: pinned to CPU 0, GOMAXPROCS=1)")
    ap.add_argument("--list", action="store_true", help="print the tier's cells and commands, run nothing")
    ap.add_argument("--only", default="", help="run only the cells whose --list title matches this regular expression")
    args = ap.parse_args()

    if not args.tools:
        args.tools = ("gab,gab-uring,gab-resume,gab-base,ab,wrk,h2load,hey,h3peer,floor" if args.gab_base
                      else "gab,gab-uring,gab-resume,ab,wrk,h2load,hey,h3peer,floor")
    scale = args.scale or (0.1 if args.tier == "smoke" else 1.0)
    reps = args.reps or (2 if args.tier == "smoke" else 5)
    seconds = max(1, round(3 * scale))  # wrk runs for a duration, not a count
    full_cells = [c for c in cells_of(args.tier) if re.search(args.only, cell_title(c))]
    cells = [scaled(cell, scale) for cell in full_cells]

    if args.list:
        for cell in cells:
            print(cell_title(cell))
            for t in args.tools.split(","):
                binary = args.gab_base if t == "gab-base" else (args.gab or "gab")
                cmd = command(t, binary, cell, url_of(cell, args.port), seconds)
                if cmd:
                    print("    " + " ".join(cmd))
        return

    for t in ("nginx", "openssl", "taskset", "/usr/bin/time"):
        need(t)
    nofile = raise_nofile()
    tools = []
    for t in args.tools.split(","):
        if t == "gab-base" and not args.gab_base:
            sys.exit("bench: the tool gab-base needs --gab-base BINARY")
        if t == "floor" and not shutil.which("gcc"):
            print("bench: gcc is not installed, floor left out (apt-get install -y gcc)", file=sys.stderr)
        elif t in ("gab", "gab-base", "gab-resume", "gab-uring", "h3peer", "floor") or shutil.which(t):
            tools.append(t)
        else:
            print(f"bench: {t} is not installed, left out ({INSTALL})", file=sys.stderr)
    gab = args.gab
    caddy_cells = any(c.proto in CADDY for c in cells)
    build_h3peer = caddy_cells and "h3peer" in tools
    build_floor = "floor" in tools and any(c.proto == "http" and c.ka for c in cells)
    bindir = tempfile.mkdtemp(prefix="gab-bin-") if not gab or build_h3peer or build_floor else ""  # only for what is built
    if not gab:
        need("go")
        gab = os.path.join(bindir, "gab")
        subprocess.check_call(["go", "build", "-o", gab, "."], cwd=ROOT)
    h3peer = os.path.join(bindir, "h3peer")
    if caddy_cells:
        need("caddy")
    if build_h3peer:
        need("go")
        subprocess.check_call(["go", "build", "-o", h3peer, "./bench/h3peer"], cwd=ROOT)
    floor = os.path.join(bindir, "floor")
    if build_floor:
        subprocess.check_call(["gcc", "-O2", "-o", floor, os.path.join(HERE, "floor.c")])

    print(f"nginx on CPU 0 (TLS {args.tls} only, {args.key} certificate), each client on CPU 1; "
          f"{reps} interleaved repetition(s), requests x{scale:g}", flush=True)
    nginx = Nginx(args.port, args.key, args.tls)
    caddy = None
    started = time.monotonic()
    rows = []
    unscaled = 0.0  # the cells' run time at --scale 1, from each run's req/s
    try:
        if caddy_cells:
            caddy = Caddy(nginx.work, args.port + PORT_OFFSET["h3"], pinned=not args.caddy_unpinned)
        for cell, full in zip(cells, full_cells):
            url = url_of(cell, args.port)
            res = {t: {"cpu": [], "rps": [], "rss": []} for t in tools}
            for _ in range(reps):
                for t in tools:  # interleaved: one run of each tool per repetition
                    cmd = command(t, args.gab_base if t == "gab-base" else gab, cell, url, seconds, h3peer=h3peer,
                                  floor=floor)
                    if cmd is None:
                        continue
                    if cell.c + 64 > nofile:
                        print(f"bench: {t} left out at c={cell.c}: the open-file limit is {nofile}", file=sys.stderr)
                        continue
                    out, cpu, rss = timed(cmd, 1, timeout=120)
                    try:
                        done, rps = parse_count(t, out)
                    except (AttributeError, ValueError):
                        print(f"bench: could not parse {t} output:\n{out[-500:]}", file=sys.stderr)
                        continue
                    unscaled += 3 if t == "wrk" else full.n / max(rps, 1)
                    if done <= 0:
                        continue
                    res[t]["cpu"].append(cpu / done * 1e6)
                    res[t]["rps"].append(rps)
                    res[t]["rss"].append(rss / 1024)
            new_table = not rows or rows[-1][0].proto != cell.proto
            rows.append((cell, res))
            print_rows([rows[-1]], tools, header=new_table)
            sys.stdout.flush()
        print_targets(rows)
        print(f"\n(cells: {time.monotonic() - started:.0f} s; at --scale 1 and the req/s measured here, "
              f"{unscaled / reps:.0f} s per repetition)")

        # Unpinned, both cores: gab vs wrk -t2 (the server shares the machine).
        url = f"http://127.0.0.1:{args.port}/f100.txt"
        n = max(int(400000 * scale), 1000)
        print("\nUnpinned 2-core throughput, keep-alive, 100 B, c=100 (req/s, median of reps):")
        tp = {t: [] for t in ("gab", "gab-base") if t in tools}
        if "wrk" in tools:
            tp["wrk -t2"] = []
        for _ in range(reps):
            for t in tp:
                if t == "wrk -t2":
                    out, _, _ = timed(["wrk", "-t2", "-c100", f"-d{seconds}s", url], None, 120)
                    tp[t].append(parse_count("wrk", out)[1])
                    continue
                b = args.gab_base if t == "gab-base" else gab
                out, _, _ = timed([b, "-q", "-k", "-n", str(n), "-c", "100", url], None, 120)
                tp[t].append(parse_count(t, out)[1])
        for k, v in tp.items():
            print(f"  {k:8s} {fmt(v, digits=0)}")
        memory_and_syscalls(gab, args.port, scale, tools)
        print(f"\n(total: {time.monotonic() - started:.0f} s)")
    finally:
        if caddy:
            caddy.stop()
        nginx.stop()
        if bindir:  # the binaries built for this run
            shutil.rmtree(bindir, ignore_errors=True)


def memory_and_syscalls(gab, port, scale, tools):
    """Peak RSS at -n 1000000 -c 100 -k (gab vs ab) and syscalls per request (strace -c -f)."""
    url = f"http://127.0.0.1:{port}/f100.txt"
    n = max(int(1000000 * scale), 100000)
    print(f"\nPeak RSS, -n {n} -c 100 -k, 100 B (MB):")
    for name, cmd in (("gab", [gab, "-q", "-k", "-n", str(n), "-c", "100", url]),
                      ("ab", ["ab", "-q", "-k", "-n", str(n), "-c", "100", url])):
        if name not in tools:
            continue
        _, cpu, rss = timed(cmd, 1, timeout=300)
        print(f"  {name:4s} {rss / 1024:.1f} MB  (client CPU {cpu / n * 1e6:.2f} µs/req)")
    if not shutil.which("strace"):
        print("(strace not installed: no syscall counts)")
        return
    n = 20000
    print(f"\nSyscalls per request, keep-alive, 100 B, c=10, -n {n} (strace -c -f):")
    for name, cmd in (("gab", [gab, "-q", "-k", "-n", str(n), "-c", "10", url]),
                      ("ab", ["ab", "-q", "-k", "-n", str(n), "-c", "10", url]),
                      ("h2load", ["h2load", "--h1", "-t1", "-n", str(n), "-c", "10", url])):
        if name != "gab" and name not in tools:
            continue
        tf = tempfile.NamedTemporaryFile(delete=False)
        tf.close()
        subprocess.run(["strace", "-f", "-c", "-o", tf.name] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=300)
        with open(tf.name) as f:
            text = f.read()
        os.unlink(tf.name)
        m = re.search(r"100\.00\s+[\d.]+\s+\d+\s+(\d+)\s+(\d+)?\s*total", text)
        calls = int(m.group(1)) if m else -1
        print(f"  {name:6s} {calls / n:.2f} syscalls/request")


def print_rows(rows, tools, header):
    for cell, res in rows:
        h2 = cell.proto in STREAMED
        if header:
            print(f"\n{PROTO_TITLE[cell.proto]}:\n")
            if h2:
                print("| size | c | streams | tool | client CPU µs/req | req/s | peak RSS MB |")
            else:
                print("| size | c | keep-alive | tool | client CPU µs/req | req/s | peak RSS MB |")
            print("|---|---|---|---|---|---|---|")
        for t in tools:
            r = res[t]
            if not r["cpu"]:
                continue
            third = cell.streams if h2 else ("yes" if cell.ka else "no")
            print(f"| {cell.size} | {cell.c} | {third} | {t} | {fmt(r['cpu'], digits=2)} | "
                  f"{fmt(r['rps'], digits=0)} | {fmt(r['rss'], digits=1)} |")


def print_targets(rows):
    """gab's median client CPU per request over the best median of the peers its target names."""
    print("\nclient CPU per request, medians: gab over the best of its target's peers (and over gab-base)\n")
    print("| cell | gab µs/req | peers (best) | gab / best peer | gab-base µs/req | gab / gab-base |")
    print("|---|---|---|---|---|---|")
    for cell, res in rows:
        if not res.get("gab", {}).get("cpu"):
            continue
        g = statistics.median(res["gab"]["cpu"])
        name = f"{cell.proto} {cell.size} c={cell.c} " + (
            f"streams={cell.streams}" if cell.proto in STREAMED else ("keep-alive" if cell.ka else "no keep-alive"))
        best = [(statistics.median(res[p]["cpu"]), p) for p in peers_of(cell) if res.get(p, {}).get("cpu")]
        peer = ratio = "-"
        if best:
            b, p = min(best)
            peer, ratio = f"{'/'.join(peers_of(cell))} ({p} {b:.2f})", f"{g / b:.2f}×"
        base = rb = "-"
        if res.get("gab-base", {}).get("cpu"):
            bb = statistics.median(res["gab-base"]["cpu"])
            base, rb = f"{bb:.2f}", f"{g / bb:.2f}×"
        print(f"| {name} | {g:.2f} | {peer} | {ratio} | {base} | {rb} |")
    print_floor(rows)
    # gab --http3 over gab --http2 (over TLS) against the same Caddy: what QUIC costs gab.
    for cell, res in rows:
        if cell.proto != "h3" or not res.get("gab", {}).get("cpu"):
            continue
        for other, ores in rows:
            if other.proto == "h2caddy" and other.c == cell.c and other.streams == cell.streams and ores.get("gab", {}).get("cpu"):
                g3, g2 = statistics.median(res["gab"]["cpu"]), statistics.median(ores["gab"]["cpu"])
                r3, r2 = statistics.median(res["gab"]["rps"]), statistics.median(ores["gab"]["rps"])
                print(f"\ngab --http3 / gab --http2 against the same Caddy, c={cell.c} streams={cell.streams}: "
                      f"{g3 / g2:.2f}× the client CPU per request ({g3:.2f} / {g2:.2f} µs), {r3 / r2:.2f}× the req/s")


def print_floor(rows):
    """gab's median client CPU per request over the C epoll floor's (bench/floor.c), where both ran."""
    lines = []
    for cell, res in rows:
        g, f = res.get("gab", {}).get("cpu"), res.get("floor", {}).get("cpu")
        if g and f:
            gm, fm = statistics.median(g), statistics.median(f)
            lines.append(f"| {cell.proto} {cell.size} c={cell.c} keep-alive | {gm:.2f} | {fm:.2f} | {gm / fm:.2f}× |")
    if lines:
        print("\ngab over the C epoll floor (bench/floor.c), client CPU per request, medians\n")
        print("| cell | gab µs/req | floor µs/req | gab / floor |\n|---|---|---|---|\n" + "\n".join(lines))

if __name__ == "__main__":
    main()
