#!/usr/bin/env bash
# One build, two daemon environments, alternated: A/B of a setting on
# bench/tools/sidebyside.sh's cairn N=3 loads (cairn-local's default
# deployment). Each round runs side A then side B once (a fresh cluster
# each); the summary gives medians per row and side: ops/s, and CPU per unit
# of work of the gateway and of the three nodes together (CPU-us per op for
# the 4 KiB rows, CPU-s per GB for the 1 GiB rows), from /proc/PID/stat.
#
#   bench/tools/ab_env.sh OUT ROUNDS "ENV_A" "ENV_B"
#   e.g. bench/tools/ab_env.sh /tmp/ab 3 "CAIRN_INLINE_MAX=0" "CAIRN_UNUSED=1"
#   ROWS="put4k get4k" (sidebyside.sh's rows), DUR=10 (seconds per GET row),
#   BUILD=build (its bin/ has the binaries); BUILD_A and BUILD_B (default
#   BUILD) give each side its own binaries: an A/B of two builds (then pass
#   the same environment, e.g. "CAIRN_UNUSED=1", as ENV_A and ENV_B)
set -uo pipefail
out=$1; rounds=$2; env_a=$3; env_b=$4
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$src/build}
rm -rf "$out"; mkdir -p "$out"
for i in $(seq 1 "$rounds"); do
  for side in A B; do
    e=$env_a b=${BUILD_A:-$build}
    [ "$side" = B ] && e=$env_b b=${BUILD_B:-$build}
    # shellcheck disable=SC2086 # ENV_A/ENV_B are NAME=VALUE words, split on purpose
    env $e PASSES=1 DUR="${DUR:-10}" SYSTEMS=cairn3 ROWS="${ROWS:-put4k get4k}" \
      "$src/bench/tools/sidebyside.sh" "$b" "$out/$side-$i" >/dev/null 2>&1
    sed "s/^1 /$side-$i /" "$out/$side-$i/runs.txt" >>"$out/all.txt"
    cat "$out/$side-$i/uptime.txt" >>"$out/uptime.txt"
  done
done
python3 - "$out/all.txt" "$env_a" "$env_b" <<'PY'
import collections, statistics as st, sys
# all.txt: label system row ops_s MBps errors bytes front_ticks back_ticks clk_tck p50 p99
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 10 or f[3] == "NA":
        continue
    side, row = f[0].split("-")[0], f[2]
    moved, ft, bt, tck = int(f[6]), int(f[7]), int(f[8]), int(f[9])
    if "4k" in row:
        ops = moved / 4096
        rows[(row, side)].append((float(f[3]), ft / tck / ops * 1e6, bt / tck / ops * 1e6))
    else:
        gb = moved / 1e9
        rows[(row, side)].append((float(f[4]), ft / tck / gb, bt / tck / gb))
print("A = %s, B = %s" % (sys.argv[2], sys.argv[3]))
for (row, side), v in sorted(rows.items()):
    unit = ("ops/s", "CPU-us/op") if "4k" in row else ("MB/s", "CPU-s/GB")
    print("%-7s %s  %s %8.1f  gateway %s %6.3f  nodes %s %6.3f  (runs: %s)" % (
        row, side, unit[0], st.median(x[0] for x in v), unit[1], st.median(x[1] for x in v),
        unit[1], st.median(x[2] for x in v), " ".join("%.0f" % x[0] for x in v)))
PY
