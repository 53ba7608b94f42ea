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
# the portable paths (no epoll, no CGI) must build, tests included
GOOS=darwin go vet ./...
GOOS=freebsd go vet ./...
go vet ./... && go test -race -count=1 ./...
