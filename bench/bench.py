#!/usr/bin/env python3
"""Benchmark gab beside ab, wrk, h2load --h1 and hey against a local nginx.

nginx runs one worker pinned to CPU 0 (access log off) on 127.0.0.1 and serves
files of 100 B, 10 KiB and 1 MiB. Each client is pinned to CPU 1 and run under
/usr/bin/time, so the client's own CPU per completed request is
(user + sys) / requests. Tools run interleaved, several repetitions; the table
shows medians with min-max. Everything is bounded and stopped by PID.

  bench/bench.py --tier quick    # the cells BENCHMARKS.md's targets name, 5 reps (~10 min)
  bench/bench.py --tier full     # the whole matrix
  bench/bench.py --tier smoke    # a 1-minute check that the harness works
  bench/bench.py --tools gab,gab-base --gab-base /tmp/gab-old   # before/after one change

A client that is not installed is left out with a note; nginx, taskset and
/usr/bin/time are required.
"""
import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZES = {"100": 100, "10k": 10240, "1m": 1048576}

NGINX_CONF = """
worker_processes 1;
worker_cpu_affinity 01;
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log error;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000000;
    keepalive_timeout 65;
    server {{
        listen 127.0.0.1:{port} backlog=4096 reuseport;
        root {work}/www;
    }}
    server {{
        listen 127.0.0.1:{h2port} http2;
        sendfile off;
        root {work}/www;
    }}
}}
"""


INSTALL = "apt-get install -y apache2-utils wrk nghttp2-client hey nginx-light time"


def need(tool):
    path = shutil.which(tool)
    if not path:
        sys.exit(f"bench: {tool} is not installed ({INSTALL})")
    return path


class Nginx:
    def __init__(self, port, h2port):
        self.work = tempfile.mkdtemp(prefix="gab-bench-")
        os.chmod(self.work, 0o755)  # nginx's workers run as nobody: they must be able to read www/
        os.makedirs(f"{self.work}/www", mode=0o755)
        for name, size in SIZES.items():
            with open(f"{self.work}/www/f{name}.txt", "wb") as f:
                f.write(b"a" * size)
        with open(f"{self.work}/nginx.conf", "w") as f:
            f.write(NGINX_CONF.format(work=self.work, port=port, h2port=h2port))
        self.proc = subprocess.Popen(
            ["nginx", "-c", f"{self.work}/nginx.conf", "-p", self.work],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(f"{self.work}/nginx.pid"):
                break
            time.sleep(0.05)
        time.sleep(0.2)

    def stop(self):
        self.proc.send_signal(signal.SIGQUIT)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.work, ignore_errors=True)


def timed(cmd, cpu, timeout):
    """Runs cmd pinned to cpu (None: unpinned) under /usr/bin/time; returns (stdout+stderr, user+sys s, maxrss KB)."""
    tf = tempfile.NamedTemporaryFile(delete=False)
    tf.close()
    full = ["/usr/bin/time", "-o", tf.name, "-f", "%U %S %M"]
    if cpu is not None:
        full += ["taskset", "-c", str(cpu)]
    full += cmd
    p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    with open(tf.name) as f:
        lines = f.read().strip().splitlines()
    os.unlink(tf.name)
    u, s, m = lines[-1].split()
    return out.decode("latin1"), float(u) + float(s), int(m)


def parse_count(tool, out):
    """Completed requests and req/s as the tool reports them."""
    if tool in ("gab", "gab-base", "ab"):
        n = int(re.search(r"Complete requests:\s+(\d+)", out).group(1))
        failed = int(re.search(r"Failed requests:\s+(\d+)", out).group(1))
        non2xx = re.search(r"Non-2xx responses:\s+(\d+)", out)
        if non2xx:  # an error page is not the document being benchmarked
            failed += int(non2xx.group(1))
        rps = float(re.search(r"Requests per second:\s+([\d.]+)", out).group(1))
        return n - failed, rps
    if tool == "wrk":
        n = int(re.search(r"(\d+) requests in", out).group(1))
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


def command(tool, gab, url, n, c, ka, seconds, threads=1):
    if tool in ("gab", "gab-base"):
        return [gab, "-q", "-n", str(n), "-c", str(c)] + (["-k"] if ka else []) + [url]
    if tool == "ab":
        return ["ab", "-q", "-n", str(n), "-c", str(c)] + (["-k"] if ka else []) + [url]
    if tool == "wrk":
        return ["wrk", f"-t{threads}", f"-c{max(c, threads)}", f"-d{seconds}s"] + ([] if ka else ["-H", "Connection: close"]) + [url]
    if tool == "h2load":
        return ["h2load", "--h1", "-t1", "-n", str(n), "-c", str(c), url] if ka else None
    if tool == "hey":
        return ["hey", "-n", str(n), "-c", str(c), "-cpus", "1"] + ([] if ka else ["-disable-keepalive"]) + [url]
    raise ValueError(tool)


def fmt(values, scale=1.0, digits=1):
    if not values:
        return "-"
    v = [x * scale for x in values]
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}-{max(v):.{digits}f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tier", choices=["smoke", "quick", "full"], default="quick")
    ap.add_argument("--reps", type=int, default=0, help="repetitions (default: 5 quick/full, 2 smoke)")
    ap.add_argument("--gab", default="", help="gab binary (default: build it)")
    ap.add_argument("--gab-base", default="", help="a second gab binary, the tool 'gab-base' (e.g. the build before a change)")
    ap.add_argument("--tools", default="gab,ab,wrk,h2load,hey")
    ap.add_argument("--port", type=int, default=18480)
    args = ap.parse_args()

    for t in ("nginx", "taskset", "/usr/bin/time"):
        need(t)
    tools = []
    for t in args.tools.split(","):
        if t == "gab-base" and not args.gab_base:
            sys.exit("bench: the tool gab-base needs --gab-base BINARY")
        if t in ("gab", "gab-base") or shutil.which(t):
            tools.append(t)
        else:
            print(f"bench: {t} is not installed, left out ({INSTALL})", file=sys.stderr)
    gab = args.gab
    if not gab:
        gab = os.path.join(tempfile.mkdtemp(prefix="gab-bin-"), "gab")
        subprocess.check_call(["go", "build", "-o", gab, "."], cwd=ROOT)

    reps = args.reps or (2 if args.tier == "smoke" else 5)
    if args.tier == "smoke":
        cells = [("100", 10, True), ("100", 10, False)]
        n_ka, n_close = 20000, 5000
    elif args.tier == "quick":
        cells = [("100", 10, True), ("100", 100, True), ("100", 1, True),
                 ("100", 10, False), ("100", 100, False), ("1m", 10, True)]
        n_ka, n_close = 200000, 30000
    else:
        cells = [(s, c, ka) for s in SIZES for c in (1, 10, 100, 1000) for ka in (True, False)]
        n_ka, n_close = 200000, 30000

    nginx = Nginx(args.port, args.port + 1)
    rows = []
    try:
        for size, c, ka in cells:
            n = n_ka if ka else n_close
            if c == 1:
                n //= 5  # one request at a time runs at ~16k req/s: keep each run near 2.5 s
            if size == "1m":
                n = 5000
            if size == "10k":
                n //= 2
            url = f"http://127.0.0.1:{args.port}/f{size}.txt"
            res = {t: {"cpu": [], "rps": [], "rss": []} for t in tools}
            for _ in range(reps):
                for t in tools:  # interleaved: one run of each tool per repetition
                    cmd = command(t, args.gab_base if t == "gab-base" else gab, url, n, c, ka, seconds=3)
                    if cmd is None or (t == "ab" and c > 20000):
                        continue
                    out, cpu, rss = timed(cmd, 1, timeout=120)
                    try:
                        done, rps = parse_count(t, out)
                    except (AttributeError, ValueError):
                        print(f"bench: could not parse {t} output:\n{out[-500:]}", file=sys.stderr)
                        continue
                    if done <= 0:
                        continue
                    res[t]["cpu"].append(cpu / done * 1e6)
                    res[t]["rps"].append(rps)
                    res[t]["rss"].append(rss / 1024)
            rows.append((size, c, ka, res))
            print_table([rows[-1]], tools, header=(len(rows) == 1))
            sys.stdout.flush()

        # Unpinned, both cores: gab vs wrk -t2 (the server shares the machine).
        url = f"http://127.0.0.1:{args.port}/f100.txt"
        print("\nUnpinned 2-core throughput, keep-alive, 100 B, c=100 (req/s, median of reps):")
        tp = {t: [] for t in ("gab", "gab-base") if t in tools}
        if "wrk" in tools:
            tp["wrk -t2"] = []
        for _ in range(reps):
            for t in tp:
                if t == "wrk -t2":
                    out, _, _ = timed(["wrk", "-t2", "-c100", "-d3s", url], None, 120)
                    tp[t].append(parse_count("wrk", out)[1])
                    continue
                b = args.gab_base if t == "gab-base" else gab
                out, _, _ = timed([b, "-q", "-k", "-n", str(n_ka * 2), "-c", "100", url], None, 120)
                tp[t].append(parse_count(t, out)[1])
        for k, v in tp.items():
            print(f"  {k:8s} {fmt(v, digits=0)}")
        memory_and_syscalls(gab, args.port, args.tier, tools)
    finally:
        nginx.stop()


def memory_and_syscalls(gab, port, tier, tools):
    """Peak RSS at -n 1000000 -c 100 -k (gab vs ab) and syscalls per request (strace -c -f)."""
    url = f"http://127.0.0.1:{port}/f100.txt"
    n = 1000000 if tier != "smoke" else 100000
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


def print_table(rows, tools, header):
    if header:
        print("| size | c | keep-alive | tool | client CPU µs/req | req/s | peak RSS MB |")
        print("|---|---|---|---|---|---|---|")
    for size, c, ka, res in rows:
        for t in tools:
            r = res[t]
            if not r["cpu"]:
                continue
            print(f"| {size} | {c} | {'yes' if ka else 'no'} | {t} | {fmt(r['cpu'], digits=2)} | "
                  f"{fmt(r['rps'], digits=0)} | {fmt(r['rss'], digits=1)} |")


if __name__ == "__main__":
    main()
