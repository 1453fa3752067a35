#!/usr/bin/env bash
# Keeps docs/config.md true: each binary's settings table (its --help, made
# from its descriptor table) sits in docs/config.md between markers
#   <!-- BEGIN <binary> --help -->  ...  <!-- END <binary> --help -->
#   tests/config_doc.sh --check BIN_DIR    exit 1 when a table differs
#   tests/config_doc.sh --update BIN_DIR   rewrite the tables in place
set -euo pipefail
mode=$1
bin=$2
doc=$(cd "$(dirname "$0")/.." && pwd)/docs/config.md
rc=0
for b in cairn-gateway cairn-storage; do
  [ -x "$bin/$b" ] || { echo "config_doc: $bin/$b missing" >&2; exit 2; }
  table=$("$bin/$b" --help | grep '^|')
  if ! grep -q "<!-- BEGIN $b --help -->" "$doc"; then
    echo "config_doc: docs/config.md has no '<!-- BEGIN $b --help -->' section" >&2
    rc=1
    continue
  fi
  current=$(sed -n "/<!-- BEGIN $b --help -->/,/<!-- END $b --help -->/p" "$doc" | grep '^|' || true)
  if [ "$current" != "$table" ]; then
    if [ "$mode" = "--update" ]; then
      TABLE="$table" python3 - "$doc" "$b" <<'PY'
import os, re, sys
doc, b = sys.argv[1], sys.argv[2]
s = open(doc).read()
begin, end = "<!-- BEGIN %s --help -->" % b, "<!-- END %s --help -->" % b
i, j = s.index(begin) + len(begin), s.index(end)
s = s[:i] + "\n" + os.environ["TABLE"] + "\n" + s[j:]
open(doc, "w").write(s)
PY
      echo "config_doc: updated the $b table"
    else
      echo "config_doc: docs/config.md's $b table differs from '$b --help';" \
           "run tests/config_doc.sh --update build/bin" >&2
      rc=1
    fi
  fi
done
exit $rc
