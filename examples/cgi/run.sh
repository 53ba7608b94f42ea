#!/bin/sh
# The output-buffering experiment: the same CGI document produced
# by each output method, timed by `gab --cgi` with no web server in between,
# then (with -S) one program timed through lighttpd's mod_cgi for comparison.
#
#   run.sh [-n REQUESTS] [-c CONCURRENCY] [-r ROUNDS] [-s "SIZES"] [-o OUTDIR] [-S]
#   run.sh build [DIR]      only build the programs and data files into DIR
#                           (default: this directory, so that
#                           gab --cgi examples/cgi/stdio ... works)
#
# Every (method, size) is run ROUNDS times (default 3), the rounds interleaved
# so that a change in the machine's load hits every method alike; a cell is
# the median over the rounds of each run's mean and median.
#
# Environment: CC (default cc), CFLAGS, GAB (a gab binary; default: built from
# this repository), BIN (where the programs are built; default: this
# directory), PORT (lighttpd's loopback port for -S, default 18491).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2 -Wall -Wextra}
methods="stdio setvbuf-1k setvbuf-4k setvbuf-8k setvbuf-64k onewrite writeline readwrite mmap sendfile"
sizes="1024 16384 131072 1048576"

# build DIR: compile every method and write data/doc-SIZE for each size.
build() {
	dir=$1
	mkdir -p "$dir/data"
	$CC $CFLAGS -o "$dir/stdio" "$here/src/stdio.c"
	for k in 1 4 8 64; do
		$CC $CFLAGS -DBUFSZ=$((k * 1024)) -o "$dir/setvbuf-${k}k" "$here/src/stdio.c"
	done
	$CC $CFLAGS -o "$dir/onewrite" "$here/src/onewrite.c"
	$CC $CFLAGS -o "$dir/writeline" "$here/src/writeline.c"
	$CC $CFLAGS -DREADWRITE -o "$dir/readwrite" "$here/src/file.c"
	$CC $CFLAGS -DMMAP -o "$dir/mmap" "$here/src/file.c"
	$CC $CFLAGS -DSENDFILE -o "$dir/sendfile" "$here/src/file.c"
	$CC $CFLAGS -o "$dir/mkdoc" "$here/src/mkdoc.c"
	for s in $sizes 10240; do
		"$dir/mkdoc" "$s" >"$dir/data/doc-$s"
	done
}

if [ "${1:-}" = build ]; then
	[ $# -le 2 ] || { echo "usage: run.sh build [DIR]" >&2; exit 2; }
	build "${2:-$here}"
	exit 0
fi

n=1000 c=1 rounds=3 out=$here/results server=0
while getopts n:c:r:s:o:S opt; do
	case $opt in
	n) n=$OPTARG ;;
	r) rounds=$OPTARG ;;
	c) c=$OPTARG ;;
	s) sizes=$OPTARG ;;
	o) out=$OPTARG ;;
	S) server=1 ;;
	*) sed -n '2,19p' "$0" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
bin=${BIN:-$here}
build "$bin"
if [ -z "${GAB:-}" ]; then
	GAB=$out/gab
	(cd "$root" && go build -o "$GAB" .)
fi
"$GAB" -h 2>&1 | grep -q -- --cgi || { echo "run.sh: $GAB has no --cgi option" >&2; exit 1; }

# measure NAME URL [gab options]: one run; prints "mean median" in ms. The mean
# is ab's "Time per request" (wall time per request at -c 1), the median the
# 50 % row of the -e file, both with µs resolution.
measure() {
	name=$1 url=$2
	shift 2
	"$GAB" "$@" -q -n "$n" -c "$c" -e "$out/$name.csv" -g "$out/$name.tsv" "$url" >"$out/$name.txt" 2>"$out/$name.err" ||
		{ echo "run.sh: gab failed for $name, see $out/$name.err" >&2; exit 1; }
	grep -q '^Failed requests: *0$' "$out/$name.txt" ||
		{ echo "run.sh: failed requests for $name, see $out/$name.txt" >&2; exit 1; }
	mean=$(awk '/^Time per request:.*\(mean\)$/ { print $4 }' "$out/$name.txt")
	median=$(awk -F, '$1 == 50 { print $2 }' "$out/$name.csv")
	echo "$mean $median"
}

label() { awk -v s="$1" 'BEGIN { if (s >= 1048576) printf "%g MiB", s / 1048576; else printf "%g KiB", s / 1024 }'; }

echo "gab --cgi, -n $n -c $c, $rounds rounds; each cell: mean / median ms per request, then the difference from stdio (mean / median)"
echo
printf '| method |'
for s in $sizes; do printf ' %s |' "$(label "$s")"; done
echo
printf '|---|'
for s in $sizes; do printf -- '---|'; done
echo
# overall NAME: the median over the rounds of NAME's means and medians.
overall() {
	for r in $(seq "$rounds"); do cat "$out/$1-r$r.mm"; done | awk '
		{ m[NR] = $1; d[NR] = $2 }
		function med(a, n,   i, j, t) {
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
			return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
		}
		END { printf "%.3f %.3f\n", med(m, NR), med(d, NR) }'
}

for r in $(seq "$rounds"); do
	for s in $sizes; do
		for m in $methods; do
			measure "$m-$s-r$r" "http://localhost/cgi-bin/$m?size=$s" --cgi "$bin/$m" >"$out/$m-$s-r$r.mm"
		done
	done
done
for s in $sizes; do
	for m in $methods; do
		overall "$m-$s" >"$out/$m-$s.mm"
	done
done
for m in $methods; do
	printf '| %s |' "$m"
	for s in $sizes; do
		read -r bm bd <"$out/stdio-$s.mm"
		read -r mm md <"$out/$m-$s.mm"
		awk -v bm="$bm" -v bd="$bd" -v mm="$mm" -v md="$md" -v base="$([ "$m" = stdio ] && echo 1 || echo 0)" 'BEGIN {
			if (base) printf " %.3f / %.3f |", mm, md
			else printf " %.3f / %.3f (%+.0f %% / %+.0f %%) |", mm, md, 100 * (mm / bm - 1), 100 * (md / bd - 1)
		}'
	done
	echo
done
echo
echo "gnuplot (-g) files, -e files and reports: $out/<method>-<size>-r<round>.{tsv,csv,txt}"

[ "$server" = 1 ] || exit 0

# The same programs through lighttpd's mod_cgi on loopback, timed over HTTP.
command -v lighttpd >/dev/null || { echo "run.sh: -S needs lighttpd" >&2; exit 1; }
port=${PORT:-18491}
# Its document root holds only the programs it may run, and their data.
www=$out/www
mkdir -p "$www"
for m in stdio onewrite sendfile; do ln -sf "$bin/$m" "$www/$m"; done
ln -sfn "$bin/data" "$www/data"
conf=$out/lighttpd.conf
cat >"$conf" <<CONF
server.document-root = "$www"
server.bind = "127.0.0.1"
server.port = $port
server.modules = ("mod_cgi")
server.errorlog = "$out/lighttpd-error.log"
cgi.assign = ("" => "")
CONF
lighttpd -D -f "$conf" &
lpid=$!
trap 'kill "$lpid" 2>/dev/null; wait "$lpid" 2>/dev/null || true' EXIT INT TERM
tries=0
until "$GAB" -q -n 1 "http://127.0.0.1:$port/stdio?size=16" >/dev/null 2>&1; do
	tries=$((tries + 1))
	[ "$tries" -lt 50 ] || { echo "run.sh: lighttpd did not answer on port $port" >&2; exit 1; }
	sleep 0.1
done
echo
echo "Server comparison: gab --cgi versus gab over HTTP to lighttpd mod_cgi (127.0.0.1:$port), -n $n -c $c, $rounds rounds"
echo
echo "| program | size | --cgi mean / median ms | lighttpd mean / median ms | server's share (mean / median) |"
echo "|---|---|---|---|---|"
for r in $(seq "$rounds"); do
	for m in stdio onewrite sendfile; do
		for s in $sizes; do
			measure "http-$m-$s-r$r" "http://127.0.0.1:$port/$m?size=$s" >"$out/http-$m-$s-r$r.mm"
		done
	done
done
for m in stdio onewrite sendfile; do
	for s in $sizes; do
		read -r cm cd <"$out/$m-$s.mm"
		set -- $(overall "http-$m-$s")
		awk -v m="$m" -v s="$(label "$s")" -v cm="$cm" -v cd="$cd" -v hm="$1" -v hd="$2" 'BEGIN {
			printf "| %s | %s | %.3f / %.3f | %.3f / %.3f | %.0f %% / %.0f %% |\n", m, s, cm, cd, hm, hd, 100 * (hm - cm) / hm, 100 * (hd - cd) / hd
		}'
	done
done
kill "$lpid"
wait "$lpid" 2>/dev/null || true
trap - EXIT INT TERM
