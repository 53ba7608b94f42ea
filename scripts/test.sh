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
GOOS=darwin go build ./...
GOOS=freebsd go build ./...
go vet ./... && go test -race -count=1 ./...
