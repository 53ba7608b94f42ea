# Shell functions the experiment scripts share (sourced, not run).

# gab_binary sets GAB to a gab binary: the one given, or one built from this
# checkout ($1 is the checkout's top directory).
gab_binary() {
	if [ -z "${GAB:-}" ]; then
		command -v go >/dev/null 2>&1 || { echo "set GAB to a gab binary, or install Go to build one" >&2; exit 1; }
		GAB=$(mktemp -d)/gab
		(cd "$1" && go build -o "$GAB" .)
	fi
}

# make_files DIR SIZES writes one file per size of the comma-separated list
# SIZES (100b, 10k, 1m: b, k/kb, m/mb in powers of 1024), named as gab sweep
# substitutes {size}: DIR/f100b.bin ..., readable by every server user.
make_files() {
	local dir=$1 sz bytes
	for sz in $(echo "$2" | tr , ' '); do
		bytes=$(echo "$sz" | awk '{ s = tolower($0); n = s + 0; u = substr(s, length(n "") + 1);
			m = (u == "k" || u == "kb") ? 1024 : (u == "m" || u == "mb") ? 1048576 : 1; print n * m }')
		head -c "$bytes" /dev/zero | tr '\0' 'x' >"$dir/f$sz.bin"
	done
	chmod -R a+rX "$dir"
}

# pin_cpus sets server_cpu and client_cpu to taskset prefixes that put the
# server on CPU 0 and the client on CPU 1, when there are two CPUs to pin.
pin_cpus() {
	server_cpu="" client_cpu=""
	if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then
		server_cpu="taskset -c 0" client_cpu="taskset -c 1"
	fi
}
