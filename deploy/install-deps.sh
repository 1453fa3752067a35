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

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq || true
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
