#!/usr/bin/env bash
# Keeps docs/s3-compat.md's table of S3 operations true: the table that
# `cairn-gateway --list-operations` prints (made from gateway/s3/s3_ops.c,
# the table the router matches requests against) sits between markers
#   <!-- BEGIN cairn-gateway --list-operations -->  ...  <!-- END ... -->
#   tests/ops_doc.sh --check BIN_DIR    exit 1 when the table differs
#   tests/ops_doc.sh [--update] [BIN_DIR]   rewrite it in place (BIN_DIR
#                                           defaults to build/bin)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=--update
case "${1:-}" in --check | --update) mode=$1; shift ;; esac
bin=${1:-$root/build/bin}
doc=$root/docs/s3-compat.md
begin="<!-- BEGIN cairn-gateway --list-operations -->"
end="<!-- END cairn-gateway --list-operations -->"
[ -x "$bin/cairn-gateway" ] || { echo "ops_doc: $bin/cairn-gateway missing" >&2; exit 2; }
table=$("$bin/cairn-gateway" --list-operations | grep '^|')
if ! grep -qF -- "$begin" "$doc" || ! grep -qF -- "$end" "$doc"; then
  echo "ops_doc: docs/s3-compat.md has no '$begin' ... '$end' section" >&2
  exit 1
fi
current=$(sed -n "/$begin/,/$end/p" "$doc" | grep '^|' || true)
[ "$current" = "$table" ] && exit 0
if [ "$mode" = --check ]; then
  echo "ops_doc: docs/s3-compat.md's table of operations differs from" \
       "'cairn-gateway --list-operations'; run tests/ops_doc.sh" >&2
  exit 1
fi
TABLE="$table" BEGIN="$begin" END="$end" python3 - "$doc" <<'PY'
import os, sys
doc = sys.argv[1]
s = open(doc).read()
begin, end = os.environ["BEGIN"], os.environ["END"]
i, j = s.index(begin) + len(begin), s.index(end)
s = s[:i] + "\n" + os.environ["TABLE"] + "\n" + s[j:]
open(doc, "w").write(s)
PY
echo "ops_doc: updated the table of operations in docs/s3-compat.md"
