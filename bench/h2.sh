#!/usr/bin/env bash
# bench/h2.sh: client CPU per request of `gab --http2` beside `h2load -t1 -m N`
# against a local nginx speaking h2c (TLS=1: h2 over TLS 1.3 with ALPN, a
# self-signed ECDSA P-256 certificate made in the temporary directory),
# 100-byte document.
#
# nginx runs as one process pinned to CPU 0, each client pinned to CPU 1; the
# client's user+sys CPU comes from /usr/bin/time and is divided by the requests
# it completed. Loopback only; every run is bounded by `timeout`; nginx is
# stopped by its PID on exit.
#
#   bench/h2.sh                 # N=100000 requests, 5 interleaved runs per row
#   N=20000 RUNS=1 bench/h2.sh  # quick look
#   GAB=/path/to/gab bench/h2.sh
#   GAB=/tmp/gab-new GAB_BASE=/tmp/gab-old bench/h2.sh   # a third tool, gab-base: before/after a change
#   TLS=1 bench/h2.sh           # h2 over TLS instead of h2c
#
# Rows: c=10 with streams (h2load -m) 1 and 10.
set -euo pipefail

N=${N:-100000}
RUNS=${RUNS:-5}
CASES=${CASES:-"10:1 10:10"} # connections:streams
TLS=${TLS:-0}
top=$(cd "$(dirname "$0")/.." && pwd)

for tool in nginx h2load taskset /usr/bin/time timeout go openssl; do
	command -v "$tool" >/dev/null || { echo "bench/h2.sh: $tool is not installed" >&2; exit 1; }
done

work=$(mktemp -d)
nginx_pid=""
cleanup() {
	if [ -n "$nginx_pid" ]; then
		kill "$nginx_pid" 2>/dev/null || true
		wait "$nginx_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

gab=${GAB:-}
if [ -z "$gab" ]; then
	gab=$work/gab
	(cd "$top" && go build -o "$gab" .)
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
mkdir -p "$work/www" "$work/logs" "$work/tmp"
head -c 100 /dev/zero | tr '\0' a >"$work/www/f100.txt"
listen="listen 127.0.0.1:$port http2;"
scheme=http
if [ "$TLS" = 1 ]; then
	openssl req -x509 -nodes -days 2 -subj /CN=localhost -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
	# nginx's TLS defaults otherwise: no session cache, session tickets on.
	listen="listen 127.0.0.1:$port ssl http2; ssl_protocols TLSv1.3;
        ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;"
	scheme=https
fi
cat >"$work/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process off;
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    fastcgi_temp_path $work/tmp/fcgi;
    uwsgi_temp_path $work/tmp/uwsgi;
    scgi_temp_path $work/tmp/scgi;
    default_type text/plain;
    keepalive_requests 1000000;
    server {
        # nginx 1.22's h2c stalls with sendfile on (over TLS it is not used).
        $listen
        sendfile off;
        root $work/www;
    }
}
EOF
taskset -c 0 nginx -c "$work/nginx.conf" -p "$work" -e "$work/logs/error.log" &
nginx_pid=$!
for _ in $(seq 100); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
	sleep 0.05
done
url="$scheme://127.0.0.1:$port/f100.txt"

# measure TOOL C M: prints "cpu_us_per_req req_per_s maxrss_kb" for one run.
measure() {
	local tool=$1 c=$2 m=$3 out="$work/out" tf="$work/time" done cmd
	case $tool in
	gab) cmd=("$gab" -q --http2 -n "$N" -c "$c" --streams "$m" "$url") ;;
	gab-base) cmd=("$GAB_BASE" -q --http2 -n "$N" -c "$c" --streams "$m" "$url") ;;
	h2load) cmd=(h2load -t1 -n "$N" -c "$c" -m "$m" "$url") ;;
	esac
	/usr/bin/time -o "$tf" -f '%U %S %M %e' timeout 300 taskset -c 1 "${cmd[@]}" >"$out" 2>&1 || {
		echo "bench/h2.sh: $tool failed:" >&2
		tail -5 "$out" >&2
		return 1
	}
	case $tool in
	gab | gab-base) done=$(awk '/^Complete requests:/ {print $3}' "$out") ;;
	h2load) done=$(awk '/^requests:/ {print $8}' "$out") ;;
	esac
	awk -v d="$done" '{ printf "%.2f %.0f %d\n", ($1 + $2) * 1e6 / d, d / $4, $3 }' "$tf"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "nginx $([ "$TLS" = 1 ] && echo "h2 over TLS 1.3" || echo h2c) on CPU 0, client on CPU 1, $N requests of 100 B, median of $RUNS interleaved run(s)"
echo
range() { sort -n | awk '{ v[NR] = $1 } END { printf "%s-%s", v[1], v[NR] }'; }

echo "| c | streams (-m) | tool | client CPU µs/req (min-max) | req/s | max RSS MB |"
echo "|---|---|---|---|---|---|"
for cs in $CASES; do
	c=${cs%%:*}
	m=${cs##*:}
	tools="h2load gab${GAB_BASE:+ gab-base}"
	for tool in $tools; do : >"$work/runs.$tool"; done
	for _ in $(seq "$RUNS"); do
		for tool in $tools; do # interleaved: one run of each tool per repetition
			measure "$tool" "$c" "$m" >>"$work/runs.$tool"
		done
	done
	for tool in $tools; do
		runs="$work/runs.$tool"
		cpu=$(awk '{print $1}' "$runs" | median)
		spread=$(awk '{print $1}' "$runs" | range)
		rps=$(awk '{print $2}' "$runs" | median)
		rss=$(awk '{print $3}' "$runs" | median)
		printf '| %s | %s | %s | %s (%s) | %s | %s |\n' "$c" "$m" "$tool" "$cpu" "$spread" "$rps" "$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')"
	done
done
