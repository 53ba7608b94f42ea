#!/bin/bash
# The web-server comparison, scaled to a small machine: Apache (event MPM),
# nginx, lighttpd, h2o and Caddy, each started on loopback with a private
# configuration serving three files, measured by one `gab sweep` over the
# file sizes and 1000 / 5000 concurrent clients, each client making the
# same number of requests at every concurrency (--requests-per-conn), every
# point's repetitions interleaved with every other point's. The servers are
# ranked by throughput and by the study's deviation (the mean of the runs'
# latency sds, --deviation mean-of-runs), tied where their ratio's 95 %
# interval holds 1, and every server is stated as ratios to the first one
# (--baseline), with each server's change from the first concurrency to the
# last. Results go to OUTDIR (sweep.csv, sweep.json, table.txt, sweep.html,
# and sweep.png with gnuplot: the study's figures, per file size the servers
# side by side); the servers are stopped at the end.
#
#   run.sh [-n REQUESTS | -p PER_CLIENT] [-c LIST] [-s SIZES] [-r REPEAT] [-k] [-R RAMP] [-o OUTDIR] [-S SERVERS]
#   run.sh -C SLO [-t STEP] [-m MAXRATE] [-s SIZES] [-r REPEAT] [-c MAXCONNS] [-o OUTDIR] [-S SERVERS]
#
# Capacity mode (-C, e.g. -C 'p99<10ms'): per file size, one `gab capacity`
# over every server (interleaved step by step, kept-alive connections, -c the
# most a step opens, default 256): each server's highest constant rate at
# which the corrected p99 (or whatever SLO says) holds, with its 95 %
# interval over -r searches, ranked; steps of -t (default 5s), no step above
# -m req/s (default gab's). Results:
# OUTDIR/capacity-SIZE.txt and capacity-SIZE.json.
#
# Defaults: -p 10 (each client makes 10 requests: -n is c × 10) -c 1000,5000
# -s 100b,10k,100k -r 3, no keep-alive (-k: keep-alive, as JMeter's
# clients), all connections opened at once (-R 5s: over 5 s, the requests
# started meanwhile left out, as JMeter's ramp-up), all five servers.
# Servers are pinned to CPU 0 and gab to CPU 1 when the machine has two or
# more (taskset), so that each server gets one core and gab the other.
#
# Needs (Debian): apache2 nginx-light lighttpd h2o caddy, and gab (GAB, or
# built from this repository with go). Nothing is installed: a missing
# package is named and the script stops. Environment: GAB, BASEPORT
# (default 18080: the servers listen on BASEPORT+1 .. BASEPORT+5).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n="" per=10 conc=1000,5000 sizes=100b,10k,100k repeat=3 out=$here/results keep="" ramp="" slo="" step=5s maxrate=""
servers="apache nginx lighttpd h2o caddy"
while getopts n:p:c:s:r:o:S:kR:C:t:m: opt; do
	case $opt in
	n) n=$OPTARG ;;
	p) per=$OPTARG ;;
	k) keep=-k ;;
	R) ramp=$OPTARG ;;
	C) slo=$OPTARG ;;
	t) step=$OPTARG ;;
	m) maxrate=$OPTARG ;;
	c) conc=$OPTARG ;;
	s) sizes=$OPTARG ;;
	r) repeat=$OPTARG ;;
	o) out=$OPTARG ;;
	S) servers=$OPTARG ;;
	*) sed -n '2,39p' "$0" >&2; exit 2 ;;
	esac
done
baseport=${BASEPORT:-18080}

missing=""
need() { command -v "$1" >/dev/null 2>&1 || [ -x "$1" ] || missing="$missing $2"; }
for s in $servers; do
	case $s in
	apache) need /usr/sbin/apache2 apache2 ;;
	nginx) need /usr/sbin/nginx nginx-light ;;
	lighttpd) need /usr/sbin/lighttpd lighttpd ;;
	h2o) need h2o h2o ;;
	caddy) need caddy caddy ;;
	*) echo "unknown server $s" >&2; exit 2 ;;
	esac
done
if [ -n "$missing" ]; then
	echo "missing Debian packages:$missing" >&2
	echo "install them with: apt-get install$missing" >&2
	exit 1
fi
. "$here/../lib.sh"
gab_binary "$root"

work=$(mktemp -d)
chmod 755 "$work"
mkdir -p "$work/www" "$out"
make_files "$work/www" "$sizes"

pin_cpus

pids="" targets="" pidopts=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	sleep 1
	for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# start NAME PORT PIDFILE-OR-"" COMMAND...: start a server in the background,
# wait for its port, and record its PID (the pidfile's, for daemons).
start() {
	name=$1 port=$2 pidfile=$3
	shift 3
	$server_cpu "$@" >"$work/$name.log" 2>&1 &
	pid=$!
	i=0
	# up to 30 s each for the port and the pidfile (a busy machine is slow)
	until (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null || [ $i -ge 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ -n "$pidfile" ]; then
		i=0
		until [ -s "$pidfile" ] || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
		pid=$(cat "$pidfile" 2>/dev/null || echo "$pid")
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "$name did not start:" >&2
		cat "$work/$name.log" >&2
		exit 1
	fi
	pids="$pids $pid"
	targets="$targets $name=http://127.0.0.1:$port/f{size}.bin"
	pidopts="$pidopts --server-pid $name=$pid"
}

port=$baseport
for s in $servers; do
	port=$((port + 1))
	d=$work/$s
	mkdir -p "$d"
	chmod 777 "$d" # the servers write their logs there after dropping privileges
	case $s in
	apache)
		cat >"$d/apache2.conf" <<-CONF
		ServerRoot /etc/apache2
		ServerName 127.0.0.1
		PidFile $d/apache2.pid
		Mutex file:$d default
		DefaultRuntimeDir $d
		ErrorLog $d/error.log
		LogLevel error
		LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
		LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
		User www-data
		Group www-data
		Listen 127.0.0.1:$port
		ListenBacklog 4096
		StartServers 2
		ServerLimit 16
		ThreadsPerChild 64
		MaxRequestWorkers 1024
		AsyncRequestWorkerFactor 4
		KeepAlive Off
		DocumentRoot $work/www
		<Directory $work/www>
		    Require all granted
		</Directory>
		CONF
		start apache $port "$d/apache2.pid" /usr/sbin/apache2 -f "$d/apache2.conf" -DFOREGROUND
		;;
	nginx)
		cat >"$d/nginx.conf" <<-CONF
		worker_processes 1;
		worker_rlimit_nofile 20000;
		pid $d/nginx.pid;
		error_log $d/error.log error;
		daemon off;
		events { worker_connections 12000; multi_accept on; }
		http {
		    access_log off;
		    sendfile on;
		    tcp_nopush on;
		    client_body_temp_path $d;
		    proxy_temp_path $d;
		    fastcgi_temp_path $d;
		    uwsgi_temp_path $d;
		    scgi_temp_path $d;
		    server {
		        listen 127.0.0.1:$port backlog=4096;
		        root $work/www;
		    }
		}
		CONF
		start nginx $port "" /usr/sbin/nginx -p "$d" -c "$d/nginx.conf"
		;;
	lighttpd)
		cat >"$d/lighttpd.conf" <<-CONF
		server.document-root = "$work/www"
		server.bind = "127.0.0.1"
		server.port = $port
		server.errorlog = "$d/error.log"
		server.max-fds = 16384
		server.max-connections = 8192
		server.listen-backlog = 4096
		server.username = "www-data"
		server.groupname = "www-data"
		server.modules = ()
		CONF
		start lighttpd $port "" /usr/sbin/lighttpd -D -f "$d/lighttpd.conf"
		;;
	h2o)
		cat >"$d/h2o.conf" <<-CONF
		listen:
		  host: 127.0.0.1
		  port: $port
		user: www-data
		num-threads: 1
		max-connections: 12000
		error-log: $d/error.log
		hosts:
		  default:
		    paths:
		      /:
		        file.dir: $work/www
		CONF
		start h2o $port "" h2o -c "$d/h2o.conf"
		;;
	caddy)
		cat >"$d/Caddyfile" <<-CONF
		{
		    admin off
		    auto_https off
		    storage file_system $d
		}
		http://127.0.0.1:$port {
		    root * $work/www
		    file_server
		}
		CONF
		HOME=$d XDG_DATA_HOME=$d XDG_CONFIG_HOME=$d GOMAXPROCS=1 start caddy $port "" caddy run --config "$d/Caddyfile" --adapter caddyfile
		;;
	esac
done

echo "load average before: $(cat /proc/loadavg)" | tee "$out/load.txt"
if [ -n "$slo" ]; then
	[ "$conc" = 1000,5000 ] && conc=256
	status=0
	: >"$out/command.txt"
	for sz in $(echo "$sizes" | tr , ' '); do
		set -- capacity --slo "$slo" --step "$step" --repeat "$repeat" -c "$conc" --json "$out/capacity-$sz.json"
		[ -n "$maxrate" ] && set -- "$@" --max-rate "$maxrate"
		for t in $targets; do set -- "$@" "${t//\{size\}/$sz}"; done
		[ -n "$client_cpu" ] && set -- capacity --cpus 1 "${@:2}"
		echo "$client_cpu gab $*" | sed "s|$work|WORK|g" >>"$out/command.txt"
		$client_cpu "$GAB" "$@" | tee "$out/capacity-$sz.txt" || status=$?
	done
	echo "load average after: $(cat /proc/loadavg)" | tee -a "$out/load.txt"
	exit $status
fi
requests=(--requests-per-conn "$per")
[ -n "$n" ] && requests=(-n "$n")
method=(--deviation mean-of-runs --baseline "${servers%% *}" --html "$out/sweep.html")
[ -n "$keep" ] && method+=("$keep")
[ -n "$ramp" ] && method+=(--ramp "$ramp")
command -v gnuplot >/dev/null 2>&1 && method+=(--plot "$out/sweep.png")
set -- sweep "${requests[@]}" -c "$conc" --sizes "$sizes" --repeat "$repeat" --pause 0.5 "${method[@]}" \
	--csv "$out/sweep.csv" --json "$out/sweep.json" $pidopts $targets
if [ -n "$client_cpu" ]; then
	shift
	set -- sweep --cpus 1 "$@"
fi
echo "$client_cpu gab $*" | sed "s|$work|WORK|g" >"$out/command.txt"
status=0
$client_cpu "$GAB" "$@" | tee "$out/table.txt" || status=$?
echo "load average after: $(cat /proc/loadavg)" | tee -a "$out/load.txt"
exit $status
