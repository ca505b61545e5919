#!/usr/bin/env bash
# device/check OUTDIR [--simulate] [--only a,b]: the device kit's one command. Unpacks the kit's Node into a
# private folder (xz, else Python's lzma), runs every check (bench/device/README.md), and removes it again.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
  echo "usage: $0 OUTDIR [--simulate] [--only seeing,launch-cost,quota,park,capture,gate]" >&2
  exit 2
fi
node_dir=$(mktemp -d "${TMPDIR:-/tmp}/gpushare-kit-node.XXXXXX") || exit 1
trap 'rm -rf "$node_dir"' EXIT
if command -v xz >/dev/null 2>&1; then
  xz -dc "$here/node.xz" >"$node_dir/node" || exit 1
else
  python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$here/node.xz" "$node_dir/node" || exit 1
fi
chmod 700 "$node_dir/node"
"$node_dir/node" "$here/app/dist/bench/device/check.js" "$@"
