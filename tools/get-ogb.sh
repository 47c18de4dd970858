#!/usr/bin/env bash
# Downloads an OGB node-property dataset the way OGB's own loader does (the zip from OGB's
# server), unpacks it and names the folder as OGB's loader names it (ogbn-arxiv → DEST/ogbn_arxiv),
# ready for `halo-convert ogb`. Nothing is left half-written: the zip and the folder are unpacked
# under temporary names and renamed into place at the end.
#   tools/get-ogb.sh NAME [DEST]   NAME: ogbn-arxiv, ogbn-products, ogbn-proteins, ogbn-mag,
#                                  ogbn-papers100M; DEST defaults to ./dataset
# HALO_OGB_URL replaces OGB's base URL (a mirror, or file:///folder holding the zips).
set -euo pipefail

usage() { echo "usage: tools/get-ogb.sh NAME [DEST]   (NAME: ogbn-arxiv, ogbn-products, ogbn-proteins, ogbn-mag, ogbn-papers100M)" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
name=$1
dest=${2:-dataset}

# The zip names OGB's master.csv gives each dataset ('download_name').
case "$name" in
  ogbn-arxiv) zip_name=arxiv ;;
  ogbn-products) zip_name=products ;;
  ogbn-proteins) zip_name=proteins ;;
  ogbn-mag) zip_name=mag ;;
  ogbn-papers100M) zip_name=papers100M-bin ;;
  *) echo "get-ogb: error: unknown dataset '$name'" >&2; usage ;;
esac
base=${HALO_OGB_URL:-http://snap.stanford.edu/ogb/data/nodeproppred}
folder="$dest/${name//-/_}"
if [ -e "$folder" ]; then
  echo "get-ogb: $folder already exists; remove it to download again" >&2
  exit 1
fi
mkdir -p "$dest"

work="$dest/.get-ogb-tmp-$$"
trap 'rm -rf "$work"' EXIT
mkdir "$work"
url="$base/$zip_name.zip"
echo "get-ogb: downloading $url"
if command -v curl >/dev/null 2>&1; then
  curl -fL --retry 3 -o "$work/$zip_name.zip" "$url"
elif command -v wget >/dev/null 2>&1; then
  wget -O "$work/$zip_name.zip" "$url"
else
  echo "get-ogb: error: needs curl or wget (tools/install-deps.sh installs curl)" >&2
  exit 1
fi

echo "get-ogb: unpacking $zip_name.zip"
(cd "$work" && cmake -E tar xf "$zip_name.zip")
if [ ! -d "$work/$zip_name/raw" ]; then
  echo "get-ogb: error: $url did not hold the folder $zip_name/raw that OGB's zips hold" >&2
  exit 1
fi
mv "$work/$zip_name" "$folder"
echo "get-ogb: $folder is ready: build/bin/halo-convert ogb $folder OUTPUT"
