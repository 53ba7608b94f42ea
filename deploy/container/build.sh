#!/usr/bin/env bash
# Builds gab's container image with buildah, offline: a static gab from this
# checkout, copied into an empty image (Containerfile). Prints the image's size.
#
#   deploy/container/build.sh [TAG]          TAG defaults to gab:latest
#
# Environment:
#   VERSION        version stamped into the binary and the image label
#                  (default: git describe, else 0.0.0-dev)
#   BUILDAH_FLAGS  global buildah flags, e.g. "--root DIR --runroot DIR" for a
#                  private store (default storage driver: vfs, which needs no
#                  kernel support and works as root anywhere)
#   CA_BUNDLE      the CA certificates copied in for --verify-tls
#                  (default /etc/ssl/certs/ca-certificates.crt)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
tag=${1:-gab:latest}
version=${VERSION:-$(git -C "$top" describe --tags --always --dirty 2>/dev/null || echo 0.0.0-dev)}
ca=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
# shellcheck disable=SC2206 # word splitting of the flags is intended
flags=(${BUILDAH_FLAGS:-} --storage-driver vfs)

command -v buildah >/dev/null || { echo "build.sh: buildah is not installed (Debian: apt-get install buildah)" >&2; exit 1; }
[ -r "$ca" ] || { echo "build.sh: no CA bundle at $ca (Debian: apt-get install ca-certificates, or set CA_BUNDLE)" >&2; exit 1; }

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
(cd "$top" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$ctx/gab" .)
mkdir -p "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/tmp"
chmod 1777 "$ctx/rootfs/tmp"
cp "$ca" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"

buildah "${flags[@]}" bud --isolation chroot --layers=false \
    --build-arg "VERSION=$version" -f "$here/Containerfile" -t "$tag" "$ctx" >&2
size=$(buildah "${flags[@]}" images --format '{{.Size}}' "$tag" | head -n1)
echo "built $tag ($version): $size"
