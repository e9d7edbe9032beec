#!/usr/bin/env bash
# Fetch the ASN snapshot shipped by Debian's python3-pyasn package and extract it
# (no root needed): apt-get download + dpkg -x. Only when the download fails is
# `apt-get update` tried (it needs root), then the download once more.
#
# usage: scripts/fetch-asn-data.sh [DEST]      (default: var/asn/pkg)
# Prints the data directory (the one holding asnames.json) on success.
set -euo pipefail

PACKAGE="${ASN_DEB_PACKAGE:-python3-pyasn}"
DEST="${1:-var/asn/pkg}"
DATA_REL="usr/lib/python3/dist-packages/data"

if [[ -s "$DEST/$DATA_REL/asnames.json" && -s "$DEST/$DATA_REL/ipasn6_20151101.dat.gz" ]]; then
    echo "$DEST/$DATA_REL"
    exit 0
fi

for tool in apt-get dpkg; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "fetch-asn-data: '$tool' not found; this script needs Debian's package tools" >&2
        exit 2
    fi
done

mkdir -p "$DEST"
WORK="$(mktemp -d "${DEST%/}/.fetch.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
chmod 0755 "$WORK"   # lets apt's sandbox user write the .deb when run as root

download() {
    (cd "$WORK" && apt-get download "$PACKAGE") >&2
}

if ! download; then
    echo "fetch-asn-data: download failed; refreshing the package lists (apt-get update)" >&2
    if ! apt-get update >&2; then
        echo "fetch-asn-data: apt-get update failed (it needs root or sudo)" >&2
        exit 1
    fi
    download
fi

DEB="$(ls "$WORK"/*.deb | head -n 1)"
dpkg -x "$DEB" "$WORK/x"
dpkg-deb -f "$DEB" Package Version >"$WORK/x/$DATA_REL/PACKAGE-INFO"
rm -rf "$DEST/usr"
mv "$WORK/x/usr" "$DEST/usr"
echo "$DEST/$DATA_REL"
