#!/usr/bin/env bash
# The project's test command (the README's): formatting, cross-builds, vet,
# then every test with the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
    echo "gofmt needed on:" >&2
    echo "$unformatted" >&2
    exit 1
fi

# portable_packages GOOS lists the packages whose build for GOOS can differ
# from Linux's: their files differ (tests included), they use syscall or
# golang.org/x/sys/unix, or they import (tests included) a package that is
# one of these. The others compile to the same code on every system, and the
# Linux vet below covers them.
portable_packages() {
    local fmt='{{.ImportPath}}	{{.GoFiles}} {{.CgoFiles}} {{.TestGoFiles}} {{.XTestGoFiles}}	{{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}'
    local linux other
    linux=$(GOOS=linux go list -f "$fmt" ./...)
    other=$(GOOS=$1 go list -f "$fmt" ./...)
    awk -F'\t' '
        FNR == 1 { file++ }
        file == 1 { linux[$1] = $2; next }
        {
            pkg[$1] = 1; imports[$1] = " " $3 " "
            if (linux[$1] != $2 || imports[$1] ~ / (syscall|golang\.org\/x\/sys\/unix) /) sel[$1] = 1
        }
        END {
            do {
                grew = 0
                for (p in pkg) {
                    if (p in sel) continue
                    for (q in sel) if (index(imports[p], " " q " ")) { sel[p] = 1; grew = 1; break }
                }
            } while (grew)
            for (p in sel) print p
        }' <(printf '%s\n' "$linux") <(printf '%s\n' "$other") | sort
}

# the portable paths (no epoll, no CGI) must build, tests included
for goos in darwin freebsd; do
    pkgs=$(portable_packages "$goos")
    if [ -n "$pkgs" ]; then
        # shellcheck disable=SC2086 # one package a word
        GOOS=$goos go vet $pkgs
    fi
done
# go test's own vet checks are a subset of go vet's, which has just run.
go vet ./... && go test -race -count=1 -vet=off ./...
# quic-go's 0-RTT path has a data race of its own, so the --early-data tests
# skip themselves under the race detector and run here without it.
go test -count=1 -vet=off -run 'EarlyData' ./client/ .
