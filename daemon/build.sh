#!/usr/bin/env bash
# Builds the in-sandbox daemon as one static binary: daemon/build.sh OUTPUT
# Needs gcc and glibc's static libc (libc6-dev); nothing else. Skips the build when OUTPUT is
# newer than every source file and this script.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: daemon/build.sh OUTPUT}
srcs=("$here"/src/*.c)
if [ -f "$out" ]; then
  fresh=1
  for f in "$here"/src/*.c "$here"/src/*.h "$here/build.sh"; do
    [ "$f" -nt "$out" ] && fresh=0
  done
  if [ "$fresh" = 1 ]; then
    echo "sandboxes-envd: $out is up to date"
    exit 0
  fi
fi
command -v "${CC:-gcc}" >/dev/null || { echo "error: gcc is needed to build the sandbox daemon (apt-get install gcc libc6-dev)" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
"${CC:-gcc}" -static -O2 -Wall -Wextra -Werror -std=gnu11 -o "$tmp" "${srcs[@]}"
strip "$tmp" 2>/dev/null || true
chmod 0755 "$tmp"
mv -f "$tmp" "$out"
echo "sandboxes-envd: built $out ($(stat -c %s "$out") bytes)"
