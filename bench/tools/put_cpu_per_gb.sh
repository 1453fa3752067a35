#!/usr/bin/env bash
# CPU seconds per GB put by a large-object PUT, gateway and each node, before
# and after a change, in one run: a cairn-local cluster of NODES nodes (its
# default deployment: ipc://, N = min(3, NODES)) from each build in turn,
# alternated ROUNDS times so drift of this shared machine falls on both alike.
# Each run PUTs one SIZE-byte object once with cairn-bench; utime+stime and
# minor faults of the gateway and the nodes are read from /proc/PID/stat
# around that PUT and divided by the bytes put (node: the mean of the nodes).
#
#   bench/tools/put_cpu_per_gb.sh BEFORE_BUILD AFTER_BUILD [OUT]
#   (each *_BUILD holds bin/cairn-gateway and bin/cairn-storage; cairn-bench
#    comes from AFTER_BUILD)
#   ROUNDS=3 NODES=1 SIZE=1073741824 environment overrides
#   PC_DIR, PC_PORT, PC_BASE_PORT: the cluster's folder and ports (default
#   /tmp/pc-cairn, 18900, 19900)
#   ENV_BEFORE, ENV_AFTER: "CAIRN_KEY=value ..." settings of each side's daemons
#   SIDES="before after": which sides run each round (one build alone:
#   SIDES=after put_cpu_per_gb.sh B B)
#   PERF=1: `perf record -g` the gateway and the first node during the PUT
#   (perf-LABEL-gw.data, perf-LABEL-node.data in OUT)
set -euo pipefail
before=$(cd "$1" && pwd); after=$(cd "$2" && pwd)
out=${3:-/tmp/put-cpu-per-gb}
rounds=${ROUNDS:-3}; nodes=${NODES:-1}; size=${SIZE:-1073741824}
src=$(cd "$(dirname "$0")/../.." && pwd)
local_sh=$src/deploy/local/cairn-local
bench=$after/bin/cairn-bench
dir=${PC_DIR:-/tmp/pc-cairn}; port=${PC_PORT:-18900}; base_port=${PC_BASE_PORT:-19900}
ck=AKIACAIRNDEV00000000; cs=cairn-dev-secret-key-000000000000000000
mkdir -p "$out"; touch "$out/runs.txt"
uptime >>"$out/uptime.txt"

# ticks (utime+stime) and minor faults of pid $1
stat() { awk '{print $14 + $15, $10}' "/proc/$1/stat"; }

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
    "$bench" --endpoint "$ep/pcb" "${a[@]}" --out "$out/$label-warm" --concurrent 1 \
      --duration_s 1 --operations '[{put,1}]' --key_generator '{uniform_int,1}' \
      --value_generator '{fixed_bin,16}' >/dev/null 2>&1 || true
    [ "$(wc -l <"$out/$label-warm/errors.csv")" -le 1 ] && break
    sleep 0.5
  done
  local gw g0 g1 n0=() n1=() p perfpids=()
  gw=$(cat "$dir"/run/gateway*.pid | head -1)
  local npids=()
  for p in $(ls "$dir"/run/*.pid | grep -v gateway); do npids+=("$(cat "$p")"); done
  g0=$(stat "$gw"); for p in "${npids[@]}"; do n0+=("$(stat "$p")"); done
  if [ -n "${PERF:-}" ]; then
    perf record -g -o "$out/perf-$label-gw.data" -p "$gw" >/dev/null 2>&1 & perfpids+=($!)
    perf record -g -o "$out/perf-$label-node.data" -p "${npids[0]}" >/dev/null 2>&1 & perfpids+=($!)
  fi
  "$bench" --endpoint "$ep/pcl" "${a[@]}" --out "$out/$label-put" --concurrent 1 \
    --duration_s 300 --operations '[{put,1}]' \
    --key_generator '{partitioned_sequential_int,1,1}' --value_generator "{fixed_bin,$size}" \
    --http_raw_request_timeout 0 --json "$out/$label-put.json" >/dev/null 2>&1
  g1=$(stat "$gw"); for p in "${npids[@]}"; do n1+=("$(stat "$p")"); done
  for p in "${perfpids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${perfpids[@]}"; do wait "$p" 2>/dev/null || true; done
  "$local_sh" down --dir "$dir" >/dev/null 2>&1 || true
  python3 - "$out/$label-put.json" "$label" "$(getconf CLK_TCK)" "$g0" "$g1" \
    "$(IFS=,; echo "${n0[*]}")" "$(IFS=,; echo "${n1[*]}")" >>"$out/runs.txt" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["total"]
label, tck = sys.argv[2], int(sys.argv[3])
g0, g1 = (list(map(int, a.split())) for a in sys.argv[4:6])
n0 = [list(map(int, a.split())) for a in sys.argv[6].split(",")]
n1 = [list(map(int, a.split())) for a in sys.argv[7].split(",")]
gb = t["bytes_sent"] / 1e9
node = sum(b[0] - a[0] for a, b in zip(n0, n1)) / len(n0) / tck / gb
print(label, round((g1[0] - g0[0]) / tck / gb, 3), round(node, 3),
      round(t["bytes_per_sec"] / 1e6), round((g1[1] - g0[1]) / gb), t["errors"])
PY
  tail -n 1 "$out/runs.txt"
}

for i in $(seq 1 "$rounds"); do
  case " ${SIDES:-before after} " in *" before "*) one before-n$nodes-$i "$before" "${ENV_BEFORE:-}" ;; esac
  case " ${SIDES:-before after} " in *" after "*) one after-n$nodes-$i "$after" "${ENV_AFTER:-}" ;; esac
done
uptime >>"$out/uptime.txt"
python3 - "$out/runs.txt" "$nodes" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
n = sys.argv[2]
def med(kind, col):
    v = [float(r[col]) for r in rows if r[0].startswith("%s-n%s-" % (kind, n))]
    return statistics.median(v) if v else float("nan")
print("| PUT 1 object, NODES=%s (median) | before | after | after/before |" % n)
print("|---|---|---|---|")
for name, col in (("gateway CPU-s per GB", 1), ("node CPU-s per GB (mean of nodes)", 2),
                  ("MB/s", 3), ("gateway minor faults per GB", 4)):
    b, a = med("before", col), med("after", col)
    print("| %s | %g | %g | %.2f |" % (name, b, a, a / b if b else float("nan")))
print("errors:", sum(int(r[5]) for r in rows))
PY
