#!/usr/bin/env bash
# Per-thread CPU of the gateway during one large PUT (issue 16): runs
# put_cpu_per_gb.sh for one side and one round while sampling
# /proc/PID/task/*/stat (utime+stime) of the cairn-gateway whose command
# line names the cluster's folder, and prints the run's line and the three
# busiest threads' CPU seconds (the event-loop thread, the MD5 hasher).
#
#   bench/tools/put_thread_cpu.sh SIDE BEFORE_BUILD AFTER_BUILD OUT
#   (SIDE: before or after; NODES and SIZE as put_cpu_per_gb.sh)
set -euo pipefail
side=$1; before=$2; after=$3; out=$4
dir=${PC_DIR:-/tmp/pt-cairn}
mkdir -p "$out"; samples="$out/threads-$side.txt"; : >"$samples"
sample() {
  while :; do
    local pid=
    for p in $(pgrep -f -- "$dir" || true); do
      [ "$(cat "/proc/$p/comm" 2>/dev/null)" = cairn-gateway ] && pid=$p
    done
    if [ -n "$pid" ]; then
      for t in /proc/"$pid"/task/*; do
        awk -v t="${t##*/}" '{print t, $14 + $15}' "$t/stat" 2>/dev/null || true
      done >>"$samples"
    fi
    sleep 0.2
  done
}
sample & sp=$!
PC_DIR=$dir SIDES=$side ROUNDS=1 "$(dirname "$0")/put_cpu_per_gb.sh" "$before" "$after" \
  "$out/$side" >"$out/$side.log" 2>&1 || true
kill "$sp"; wait "$sp" 2>/dev/null || true
head -1 "$out/$side.log"
tck=$(getconf CLK_TCK)
awk -v tck="$tck" '{ if ($2 > m[$1]) m[$1] = $2 } END { for (t in m) print m[t] / tck }' \
  "$samples" | sort -g -r | head -3 | tr '\n' ' '; echo "(busiest threads, CPU-s)"
