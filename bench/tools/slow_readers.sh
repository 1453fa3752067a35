#!/usr/bin/env bash
# Many slow readers of one large object: N concurrent GETs at 1 MB/s each
# (cairn-bench --recv_rate) of one 256 MiB object on a one-node cairn-local
# cluster (its default transport security), for DUR seconds. Reports the
# gateway's peak RSS during the reads (VmHWM, reset through clear_refs after
# the PUT), the GETs that failed (503, cut short, timed out: cairn-bench
# errors, by kind) and the "aborted" / "refused" lines of the gateway log.
# GETs still in flight at the end of the window are dropped, not counted
# (as basho_bench does): a reader needs 256 s for the whole object, the
# memory bound is reached in the first seconds. Not part of the test suite.
#
#   bench/tools/slow_readers.sh BUILD "100 400 1000" [OUT]
#   (BUILD holds bin/cairn-gateway, cairn-storage, cairn-admin, cairn-bench;
#    BENCH_BUILD: the build whose cairn-bench drives the load, default BUILD)
#   DUR=60 RATE=1M SIZE=268435456 LABEL=after
#   GW_SET="key=value ..." extra gateway settings (CAIRN_* environment)
#   SR_DIR, SR_PORT, SR_BASE_PORT: folder and ports (/tmp/sr-cairn, 18900, 19900)
# Prints one row per N: label N hwm_MiB rss_before_MiB ok errors aborted refused MBps
set -euo pipefail
build=$(cd "$1" && pwd); counts=$2; out=${3:-/tmp/slow-readers}
bench_build=$(cd "${BENCH_BUILD:-$build}" && pwd)
dur=${DUR:-60}; rate=${RATE:-1M}; size=${SIZE:-268435456}; label=${LABEL:-run}
src=$(cd "$(dirname "$0")/../.." && pwd)
local_sh=$src/deploy/local/cairn-local
bench=$bench_build/bin/cairn-bench
dir=${SR_DIR:-/tmp/sr-cairn}; port=${SR_PORT:-18900}; base_port=${SR_BASE_PORT:-19900}
ck=AKIACAIRNDEV00000000; cs=cairn-dev-secret-key-000000000000000000
mkdir -p "$out"

kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }

for n in $counts; do
  "$local_sh" down --dir "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
  # extra gateway settings travel as CAIRN_* variables (they override the file)
  envs=()
  for kv in ${GW_SET:-}; do
    k=${kv%%=*}; v=${kv#*=}
    envs+=("CAIRN_$(tr 'a-z.' 'A-Z_' <<<"$k")=$v")
  done
  env "${envs[@]}" "$local_sh" up -d --no-build --build "$build" --dir "$dir" \
    --gateway-port "$port" --base-port "$base_port" --nodes 1 >"$out/$label-$n.up.log" 2>&1
  envout=$("$local_sh" env --dir "$dir")
  ep=$(sed -n 's/^export AWS_ENDPOINT_URL=//p' <<<"$envout")
  ca=$(sed -n 's/^export AWS_CA_BUNDLE=//p' <<<"$envout")
  a=(--access_key $ck --secret_key $cs --progress false --plot false)
  [ -n "$ca" ] && a+=(--ca_cert "$ca")
  for _ in $(seq 1 20); do
    "$bench" --endpoint "$ep/srb" "${a[@]}" --out "$out/$label-$n-warm" --concurrent 1 \
      --duration_s 1 --operations '[{put,1}]' --key_generator '{uniform_int,1}' \
      --value_generator '{fixed_bin,16}' >/dev/null 2>&1 || true
    [ "$(wc -l <"$out/$label-$n-warm/errors.csv")" -le 1 ] && break
    sleep 0.5
  done
  "$bench" --endpoint "$ep/srl" "${a[@]}" --out "$out/$label-$n-put" --concurrent 1 \
    --duration_s 300 --operations '[{put,1}]' \
    --key_generator '{partitioned_sequential_int,1,1}' --value_generator "{fixed_bin,$size}" \
    --http_raw_request_timeout 0 >/dev/null 2>&1
  gw=$(cat "$dir"/run/gateway*.pid | head -1)
  sleep 1
  echo 5 >"/proc/$gw/clear_refs"     # VmHWM := VmRSS now
  before=$(kib "$gw" VmRSS)
  load0=$(cut -d' ' -f1 /proc/loadavg)
  "$bench" --endpoint "$ep/srl" "${a[@]}" --out "$out/$label-$n-get" --concurrent "$n" \
    --duration_s "$dur" --operations '[{get,1}]' --key_generator '{uniform_int,1}' \
    --recv_rate "$rate" --http_raw_request_timeout 0 --not_found_ok false \
    --json "$out/$label-$n-get.json" >"$out/$label-$n-get.txt" 2>&1 || true
  hwm=$(kib "$gw" VmHWM)
  load1=$(cut -d' ' -f1 /proc/loadavg)
  log=$(ls "$dir"/logs/gateway*.log 2>/dev/null | head -1 || true)
  aborted=0; refused=0
  if [ -n "$log" ]; then
    aborted=$(grep -c "aborted at byte" "$log" || true)
    refused=$(grep -c "no read-ahead budget" "$log" || true)
  fi
  "$local_sh" down --dir "$dir" >/dev/null 2>&1 || true
  python3 - "$out/$label-$n-get.json" "$label" "$n" "$hwm" "$before" "$aborted" "$refused" \
    "$load0" "$load1" >>"$out/runs.txt" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["total"]
label, n, hwm, before, aborted, refused, l0, l1 = sys.argv[2:10]
print(label, n, round(int(hwm) / 1024, 1), round(int(before) / 1024, 1), t["ok"], t["errors"],
      aborted, refused, round(t["bytes_per_sec"] / 1e6), "load %s-%s" % (l0, l1))
PY
  tail -n 1 "$out/runs.txt"
  grep "^error" "$out/$label-$n-get.txt" || true
done
