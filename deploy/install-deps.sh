#!/usr/bin/env bash
# Installs the Debian packages cairn needs, only those that are missing.
# Usage: deploy/install-deps.sh [build|test]...   (default: build)
# The package lists live in deploy/deps/*.txt. Needs root (or sudo) only when
# something is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sets=("$@")
[ ${#sets[@]} -eq 0 ] && sets=(build)

want=()
for s in "${sets[@]}"; do
  f="$here/deps/$s.txt"
  [ -f "$f" ] || { echo "install-deps: no package list $f" >&2; exit 2; }
  while read -r pkg cmd _; do
    case "$pkg" in ''|'#'*) continue ;; esac
    # "pkg cmd:NAME": satisfied when NAME is already on PATH (e.g. a node
    # and npm installed from elsewhere, which Debian's npm would conflict with)
    case "$cmd" in cmd:*) command -v "${cmd#cmd:}" >/dev/null 2>&1 && continue ;; esac
    want+=("$pkg")
  done <"$f"
done

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

[ -n "${CAIRN_DEPS_LOG:-}" ] || echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
# CAIRN_DEPS_LOG=FILE (cairn-local up): apt's output goes to FILE, the
# terminal gets one line per package set; on failure the log's end
if [ -z "${CAIRN_DEPS_LOG:-}" ]; then
  $sudo apt-get update -qq || true
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  exit 0
fi
echo "install-deps: apt output in $CAIRN_DEPS_LOG" >&2
$sudo apt-get update -qq >>"$CAIRN_DEPS_LOG" 2>&1 || true
for s in "${sets[@]}"; do
  group=()
  while read -r pkg _; do
    for p in "${missing[@]}"; do [ "$p" = "$pkg" ] && group+=("$pkg"); done
  done <"$here/deps/$s.txt"
  [ ${#group[@]} -eq 0 ] && continue
  echo "install-deps: $s: ${#group[@]} packages (${group[*]})" >&2
  if ! $sudo apt-get install -y -qq --no-install-recommends "${group[@]}" \
      >>"$CAIRN_DEPS_LOG" 2>&1; then
    echo "install-deps: $s: apt-get install failed; last lines of $CAIRN_DEPS_LOG:" >&2
    tail -n 15 "$CAIRN_DEPS_LOG" >&2
    exit 1
  fi
done
