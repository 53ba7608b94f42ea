#!/bin/bash
# Latency and bandwidth against message size: nginx on loopback, measured by
# two `gab sweep`s over sizes from 4 B to 256 KB with keep-alive, each point
# repeated: one over the response size (GET of a file of each size) and one
# over the request size (POST of a body of each size, answered with 3 bytes).
# The server's CPU per request comes from --server-pid (nginx's master and
# worker), the client's from gab's own CPU time, the whole host's (softirq
# included, where loopback's packet work is charged) from /proc/stat.
# Results go to OUTDIR: response.{csv,json,txt,html}, request.{csv,json,
# txt,html}, and with gnuplot response.png and request.png: bandwidth (sent
# for the requests), min and p50 latency and CPU per request against size.
#
#   run.sh [-n REQUESTS] [-c LIST] [-s SIZES] [-r REPEAT] [-o OUTDIR]
#
# Defaults: -n 2000 -c 1,8 -s 4,16,64,256,1k,4k,16k,64k,256k -r 3.
# nginx is pinned to CPU 0 and gab to CPU 1 when the machine has two or more.
#
# Needs (Debian): nginx-light, and gab (GAB, or built from this repository
# with go). Nothing is installed: a missing package is named and the script
# stops. Environment: GAB, PORT (default 18180).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=2000 conc=1,8 sizes=4,16,64,256,1k,4k,16k,64k,256k repeat=3 out=$here/results
while getopts n:c:s:r:o: opt; do
	case $opt in
	n) n=$OPTARG ;;
	c) conc=$OPTARG ;;
	s) sizes=$OPTARG ;;
	r) repeat=$OPTARG ;;
	o) out=$OPTARG ;;
	*) sed -n '2,19p' "$0" >&2; exit 2 ;;
	esac
done
port=${PORT:-18180}

if [ ! -x /usr/sbin/nginx ]; then
	echo "missing Debian package: nginx-light (apt-get install nginx-light)" >&2
	exit 1
fi
. "$here/../lib.sh"
gab_binary "$root"

work=$(mktemp -d)
chmod 755 "$work"
mkdir -p "$work/www" "$work/nginx" "$out"
chmod 777 "$work/nginx"
make_files "$work/www" "$sizes"

pin_cpus

d=$work/nginx
cat >"$d/nginx.conf" <<CONF
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log error;
daemon off;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    client_body_temp_path $d;
    proxy_temp_path $d;
    fastcgi_temp_path $d;
    uwsgi_temp_path $d;
    scgi_temp_path $d;
    server {
        listen 127.0.0.1:$port;
        root $work/www;
        # POST bodies are read in memory and dropped; the answer is "ok\n".
        location = /post {
            client_max_body_size 1m;
            client_body_buffer_size 1m;
            return 200 "ok\n";
        }
    }
}
CONF
$server_cpu /usr/sbin/nginx -p "$d" -c "$d/nginx.conf" >"$d/out.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; sleep 0.5; rm -rf "$work"' EXIT INT TERM
i=0
until (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null || [ $i -ge 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -0 $pid 2>/dev/null || { echo "nginx did not start:" >&2; cat "$d/out.log" "$d/error.log" >&2; exit 1; }

gab() {
	local name=$1
	shift
	local cpus=()
	[ -n "$client_cpu" ] && cpus=(--cpus 1)
	echo "$client_cpu gab sweep ${cpus[*]} $*" >>"$out/command.txt"
	local pictures=(--html "$out/$name.html")
	command -v gnuplot >/dev/null 2>&1 && pictures+=(--plot "$out/$name.png")
	$client_cpu "$GAB" sweep "${cpus[@]}" "$@" "${pictures[@]}" --csv "$out/$name.csv" --json "$out/$name.json" | tee "$out/$name.txt"
}

: >"$out/command.txt"
echo "load average before: $(cat /proc/loadavg)" | tee "$out/load.txt"
gab response -k -n "$n" -c "$conc" --repeat "$repeat" --pause 0.2 --server-pid "$pid" \
	--sizes "$sizes" "response=http://127.0.0.1:$port/f{size}.bin"
gab request -k -n "$n" -c "$conc" --repeat "$repeat" --pause 0.2 --server-pid "$pid" \
	-T application/octet-stream --post-sizes "$sizes" "request=http://127.0.0.1:$port/post"
echo "load average after: $(cat /proc/loadavg)" | tee -a "$out/load.txt"
