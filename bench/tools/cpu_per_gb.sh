#!/usr/bin/env bash
# CPU seconds per GB served by a large-object GET, gateway and node, before
# and after a change, in one run: a one-node cairn-local cluster (its
# default transport security) from each build in turn, alternated ROUNDS
# times so drift of this shared machine falls on both alike. Each side PUTs
# one 1 GiB object, then GETs it with one stream for DUR seconds; the
# utime+stime (and minor faults) of the gateway and the node are read from
# /proc/PID/stat around the GETs and divided by the bytes served.
#
#   bench/tools/cpu_per_gb.sh BEFORE_BUILD AFTER_BUILD [OUT]
#   (each *_BUILD holds bin/cairn-gateway and bin/cairn-storage; cairn-bench
#    comes from AFTER_BUILD)
#   ROUNDS=3 DUR=10 SIZE=1073741824 NODES=1 environment overrides (with
#   NODES > 1 the node column is the sum over all nodes)
#   PERF=1: `perf record -g` of the gateway during each GET, into
#   OUT/LABEL.perf.data
#   CG_DIR, CG_PORT, CG_BASE_PORT: the cluster's folder and ports (default
#   /tmp/cg-cairn, 18800, 19800)
#   ENV_BEFORE, ENV_AFTER: "CAIRN_KEY=value ..." settings of each side's
#   daemons (one build, two settings: auto read-ahead against fixed values
#   is ENV_BEFORE="CAIRN_LARGE_OBJECT_READ_PREFETCH=4 ..." B B)
set -euo pipefail
before=$(cd "$1" && pwd); after=$(cd "$2" && pwd)
out=${3:-/tmp/cpu-per-gb}
rounds=${ROUNDS:-3}; dur=${DUR:-10}; size=${SIZE:-1073741824}; nodes=${NODES:-1}
src=$(cd "$(dirname "$0")/../.." && pwd)
local_sh=$src/deploy/local/cairn-local
bench=$after/bin/cairn-bench
dir=${CG_DIR:-/tmp/cg-cairn}; port=${CG_PORT:-18800}; base_port=${CG_BASE_PORT:-19800}
ck=AKIACAIRNDEV00000000; cs=cairn-dev-secret-key-000000000000000000
mkdir -p "$out"; : >"$out/runs.txt"
uptime >"$out/uptime-start.txt"

# ticks (utime+stime) and minor faults of the pids given, summed
stat() { local f; for f in "$@"; do cat "/proc/$f/stat"; done |
  awk '{t += $14 + $15; m += $10} END {print t, m}'; }

one() { # label build envs -> appends "label gw_cpu_s_per_gb node_cpu_s_per_gb MBps gw_minflt_per_gb errors"
  local label=$1 build=$2 envs=$3
  "$local_sh" down --dir "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
  # shellcheck disable=SC2086
  env $envs "$local_sh" up -d --no-build --build "$build" --dir "$dir" \
    --gateway-port "$port" --base-port "$base_port" --nodes "$nodes" >"$out/$label.up.log" 2>&1
  local envout ep ca a=(--access_key $ck --secret_key $cs --progress false --plot false)
  envout=$("$local_sh" env --dir "$dir")
  ep=$(sed -n 's/^export AWS_ENDPOINT_URL=//p' <<<"$envout")
  ca=$(sed -n 's/^export AWS_CA_BUNDLE=//p' <<<"$envout")
  [ -n "$ca" ] && a+=(--ca_cert "$ca")
  for _ in $(seq 1 20); do
    "$bench" --endpoint "$ep/cgb" "${a[@]}" --out "$out/$label-warm" --concurrent 1 \
      --duration_s 1 --operations '[{put,1}]' --key_generator '{uniform_int,1}' \
      --value_generator '{fixed_bin,16}' >/dev/null 2>&1 || true
    [ "$(wc -l <"$out/$label-warm/errors.csv")" -le 1 ] && break
    sleep 0.5
  done
  "$bench" --endpoint "$ep/cgl" "${a[@]}" --out "$out/$label-put" --concurrent 1 \
    --duration_s 300 --operations '[{put,1}]' \
    --key_generator '{partitioned_sequential_int,1,1}' --value_generator "{fixed_bin,$size}" \
    --http_raw_request_timeout 0 >/dev/null 2>&1
  local gw node g0 n0 g1 n1 perf_pid=
  gw=$(cat "$dir"/run/gateway*.pid | head -1)
  node=$(ls "$dir"/run/*.pid | grep -v gateway | xargs cat)
  if [ -n "${PERF:-}" ]; then
    perf record -g -o "$out/$label.perf.data" -p "$gw" >/dev/null 2>&1 &
    perf_pid=$!
  fi
  # shellcheck disable=SC2086
  g0=$(stat "$gw"); n0=$(stat $node)
  "$bench" --endpoint "$ep/cgl" "${a[@]}" --out "$out/$label-get" --concurrent 1 \
    --duration_s "$dur" --operations '[{get,1}]' --key_generator '{uniform_int,1}' \
    --http_raw_request_timeout 0 --not_found_ok false --json "$out/$label-get.json" \
    >/dev/null 2>&1
  # shellcheck disable=SC2086
  g1=$(stat "$gw"); n1=$(stat $node)
  if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
  "$local_sh" down --dir "$dir" >/dev/null 2>&1 || true
  python3 - "$out/$label-get.json" "$label" "$g0" "$g1" "$n0" "$n1" "$(getconf CLK_TCK)" \
    >>"$out/runs.txt" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["total"]
label = sys.argv[2]
g0, g1, n0, n1 = (list(map(int, a.split())) for a in sys.argv[3:7])
tck = int(sys.argv[7])
gb = t["bytes_received"] / 1e9
print(label, round((g1[0] - g0[0]) / tck / gb, 3), round((n1[0] - n0[0]) / tck / gb, 3),
      round(t["bytes_per_sec"] / 1e6), round((g1[1] - g0[1]) / gb), t["errors"])
PY
  tail -n 1 "$out/runs.txt"
}

for i in $(seq 1 "$rounds"); do
  one before-$i "$before" "${ENV_BEFORE:-}"
  one after-$i "$after" "${ENV_AFTER:-}"
done
uptime >"$out/uptime-end.txt"
python3 - "$out/runs.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
def med(kind, col):
    return statistics.median(float(r[col]) for r in rows if r[0].startswith(kind + "-"))
print("| GET 1 GiB, 1 stream (median) | before | after | after/before |")
print("|---|---|---|---|")
for name, col in (("gateway CPU-s per GB", 1), ("node CPU-s per GB", 2), ("MB/s", 3),
                  ("gateway minor faults per GB", 4)):
    b, a = med("before", col), med("after", col)
    print("| %s | %g | %g | %.2f |" % (name, b, a, a / b if b else float("nan")))
print("errors:", sum(int(r[5]) for r in rows))
PY
