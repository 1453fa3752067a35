#!/usr/bin/env bash
# Every binary answers --version with "NAME VERSION" on one line and exits 0;
# VERSION is git describe at configure time, or "unknown" outside a checkout
# (CMakeLists.txt). Usage: version.sh BIN_DIR [EXPECTED_VERSION]
set -euo pipefail
bin="$1"
want="${2:-}"
bad=0
for name in cairn-gateway cairn-storage cairn-admin cairn-bench cairn-sn-bench; do
  if [ ! -x "$bin/$name" ]; then
    echo "version: $name is not built in $bin"
    bad=1
    continue
  fi
  out="$(timeout 10 "$bin/$name" --version)" || { echo "version: $name --version failed"; bad=1; continue; }
  if ! [[ "$out" =~ ^$name\ [^[:space:]]+$ ]]; then
    echo "version: $name printed '$out', not '$name VERSION'"
    bad=1
  elif [ -n "$want" ] && [ "$out" != "$name $want" ]; then
    echo "version: $name printed '$out', expected '$name $want'"
    bad=1
  else
    echo "$out"
  fi
done
exit "$bad"
