#!/bin/sh
# runtime-deps.sh BINARY...: prints, one per line, the Debian packages that
# hold the shared libraries the binaries load (from ldd and dpkg -S), so the
# runtime image installs exactly what the build links against and no list
# has to be kept in step by hand. Fails when a library belongs to no package.
set -eu
[ $# -gt 0 ] || { echo "usage: runtime-deps.sh BINARY..." >&2; exit 2; }
libs=$(ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)
for lib in $libs; do
  real=$(readlink -f "$lib")
  pkg=""
  # merged /usr: dpkg may know the file under /lib or /usr/lib, as a link
  # name or as its target
  for p in "$lib" "$real" "/usr$lib" "/usr$real" "${lib#/usr}" "${real#/usr}"; do
    pkg=$(dpkg -S "$p" 2>/dev/null | head -n 1 | cut -d: -f1) && [ -n "$pkg" ] && break
  done
  [ -n "$pkg" ] || { echo "runtime-deps: no package holds $lib" >&2; exit 1; }
  echo "$pkg"
done | sort -u
