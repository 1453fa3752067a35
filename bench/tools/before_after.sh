#!/usr/bin/env bash
# Before/after of a gateway change, in one run: the same cairn-bench loads
# (small GETs, 4 KiB, 32 workers; large GETs, one stream of a 256 MiB
# object) against a one-node cairn-local cluster started from each build in
# turn, alternated ROUNDS times so drift of this shared machine falls on both
# alike. Prints each run and the medians with the ratio after/before.
#
#   bench/tools/before_after.sh BEFORE_BUILD AFTER_BUILD [OUT]
#   (each *_BUILD holds bin/cairn-gateway and bin/cairn-storage; cairn-bench
#    comes from AFTER_BUILD so the driver is the same for both)
#   ROUNDS=3 DUR=10 environment overrides
#   UP_BEFORE, UP_AFTER: extra `cairn-local up` arguments of each side
#   (default --auth none, which builds from before CURVE also accept); the
#   cost of node authentication on one build:
#   UP_BEFORE="--auth none" UP_AFTER="--auth curve" before_after.sh B B
#   BA_DIR, BA_PORT, BA_BASE_PORT: the cluster's folder and ports (default
#   /tmp/ba-cairn, 18700, 19700), to run beside another before/after
#   LOCAL_BEFORE, LOCAL_AFTER: the cairn-local each side starts with (default
#   this tree's); an older build wants its own tree's, whose configs it reads
#   The loads go to the endpoint `cairn-local env` prints, so the cost of
#   TLS on one build is UP_AFTER="--auth none --tls" before_after.sh B B
#   (https with cairn-local's CA on the after side).
#   ENV_BEFORE, ENV_AFTER: "CAIRN_KEY=value ..." settings of each side's
#   daemons (one build, metrics off against on:
#   ENV_BEFORE="CAIRN_METRICS_PORT=0" before_after.sh B B)
#   Also reported: the PUT of the 256 MiB object, MB/s (one request; noisy),
#   and the CPU seconds (utime+stime from /proc/PID/stat, as cpu_per_gb.sh)
#   the gateway and the node spent per GB served by the large GET and per
#   small GET (microseconds; CPU time moves less with the machine's load
#   than throughput does).
#   Today's cairn-local runs the nodes over ipc:// by default; builds from
#   before that (e04f5b6) ran them over tcp://, so against such a build give
#   the after side UP_AFTER="--auth none --transport tcp" to compare like
#   with like.
set -euo pipefail
before=$(cd "$1" && pwd); after=$(cd "$2" && pwd)
out=${3:-/tmp/before-after}
rounds=${ROUNDS:-3}; dur=${DUR:-10}
src=$(cd "$(dirname "$0")/../.." && pwd)
bench=$after/bin/cairn-bench
ck=AKIACAIRNDEV00000000; cs=cairn-dev-secret-key-000000000000000000
mkdir -p "$out"; : >"$out/runs.txt"
uptime >"$out/uptime-start.txt"

# ticks (utime+stime) of the pids given, summed
ticks() { local f; for f in "$@"; do cat "/proc/$f/stat"; done | awk '{t += $14 + $15} END {print t}'; }

one() { # label build up_args launcher envs -> appends "label small_ops large_MBps errors put_MBps
        # gw_cpu_s_per_gb node_cpu_s_per_gb gw_cpu_us_per_small_get node_cpu_us_per_small_get"
  local label=$1 build=$2 up_args=$3 local_sh=$4 envs=$5 dir=${BA_DIR:-/tmp/ba-cairn} port=${BA_PORT:-18700}
  "$local_sh" down --dir $dir >/dev/null 2>&1 || true
  rm -rf $dir
  # on a loaded machine `up` can find a daemon not yet started (a build
  # without cairn-admin skips the nodes' PING wait): try three times
  local try
  for try in 1 2 3; do
    # shellcheck disable=SC2086
    env $envs "$local_sh" up -d --no-build --build "$build" --dir $dir \
      --gateway-port $port --base-port "${BA_BASE_PORT:-19700}" --nodes 1 $up_args \
      >"$out/$label.up.log" 2>&1 && break
    [ "$try" -eq 3 ] && { cat "$out/$label.up.log" >&2; return 1; }
    "$local_sh" down --dir $dir >/dev/null 2>&1 || true
    rm -rf $dir; sleep 1
  done
  local envout ep ca a=(--access_key "$ck" --secret_key "$cs" --progress false --plot false)
  envout=$("$local_sh" env --dir $dir)
  ep=$(sed -n 's/^export AWS_ENDPOINT_URL=//p' <<<"$envout")
  ca=$(sed -n 's/^export AWS_CA_BUNDLE=//p' <<<"$envout")
  [ -n "$ca" ] && a+=(--ca_cert "$ca")
  # the gateway may not have seen the node up yet: wait until PUTs succeed
  for _ in $(seq 1 20); do
    "$bench" --endpoint $ep/bas "${a[@]}" --out "$out/$label-warm" --concurrent 1 --duration_s 1 \
      --operations '[{put,1}]' --key_generator '{uniform_int,1}' \
      --value_generator '{fixed_bin,16}' >/dev/null 2>&1 || true
    [ "$(wc -l <"$out/$label-warm/errors.csv" 2>/dev/null || echo 9)" -le 1 ] && break
    sleep 0.5
  done
  "$bench" --endpoint $ep/bas "${a[@]}" --out "$out/$label-p4k" --concurrent 32 --duration_s 60 \
    --operations '[{put,1}]' --key_generator '{partitioned_sequential_int,1,2000}' \
    --value_generator '{fixed_bin,4096}' >/dev/null 2>&1
  local gw node s0 t0 s1 t1 g0 n0 g1 n1
  gw=$(cat $dir/run/gateway.pid); node=$(cat $dir/run/node1.pid)
  s0=$(ticks "$gw"); t0=$(ticks "$node")
  "$bench" --endpoint $ep/bas "${a[@]}" --out "$out/$label-g4k" --concurrent 32 --duration_s "$dur" \
    --operations '[{get,1}]' --key_generator '{uniform_int,2000}' --not_found_ok false \
    --json "$out/$label-g4k.json" >/dev/null 2>&1
  s1=$(ticks "$gw"); t1=$(ticks "$node")
  "$bench" --endpoint $ep/basl "${a[@]}" --out "$out/$label-p256m" --concurrent 1 --duration_s 300 \
    --operations '[{put,1}]' --key_generator '{partitioned_sequential_int,1,1}' \
    --value_generator '{fixed_bin,268435456}' --http_raw_request_timeout 0 \
    --json "$out/$label-p256m.json" >/dev/null 2>&1
  g0=$(ticks "$gw"); n0=$(ticks "$node")
  "$bench" --endpoint $ep/basl "${a[@]}" --out "$out/$label-g256m" --concurrent 1 --duration_s "$dur" \
    --operations '[{get,1}]' --key_generator '{uniform_int,1}' --http_raw_request_timeout 0 \
    --not_found_ok false --json "$out/$label-g256m.json" >/dev/null 2>&1
  g1=$(ticks "$gw"); n1=$(ticks "$node")
  "$local_sh" down --dir $dir >/dev/null 2>&1 || true
  python3 - "$out/$label-g4k.json" "$out/$label-g256m.json" "$label" "$out/$label-p256m.json" \
    $((g1 - g0)) $((n1 - n0)) "$(getconf CLK_TCK)" $((s1 - s0)) $((t1 - t0)) >>"$out/runs.txt" <<'PY'
import json, sys
def rate(p):
    t = json.load(open(p))["total"]
    return t["ops_per_sec"], t["bytes_per_sec"] / 1e6, t["errors"]
s, _, e1 = rate(sys.argv[1]); _, mb, e2 = rate(sys.argv[2]); _, put, e3 = rate(sys.argv[4])
t4k = json.load(open(sys.argv[1]))["total"]
ops = t4k["ok"] + t4k["errors"]
gb = json.load(open(sys.argv[2]))["total"]["bytes_received"] / 1e9
tck = int(sys.argv[7])
print(sys.argv[3], round(s), round(mb), e1 + e2 + e3, round(put),
      round(int(sys.argv[5]) / tck / gb, 3), round(int(sys.argv[6]) / tck / gb, 3),
      *(round(int(a) / tck * 1e6 / max(ops, 1), 1) for a in sys.argv[8:10]))
PY
  tail -n 1 "$out/runs.txt"
}

for i in $(seq 1 "$rounds"); do
  one before-$i "$before" "${UP_BEFORE-"--auth none"}" "${LOCAL_BEFORE:-$src/deploy/local/cairn-local}" \
    "${ENV_BEFORE:-}"
  one after-$i "$after" "${UP_AFTER-"--auth none"}" "${LOCAL_AFTER:-$src/deploy/local/cairn-local}" \
    "${ENV_AFTER:-}"
done
uptime >"$out/uptime-end.txt"
python3 - "$out/runs.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
def med(kind, col):
    return statistics.median(float(r[col]) for r in rows if r[0].startswith(kind + "-"))
sb, sa = med("before", 1), med("after", 1)
lb, la = med("before", 2), med("after", 2)
print("| load | before (median) | after (median) | after/before |")
print("|---|---|---|---|")
print("| GET 4 KiB, 32 workers, ops/s | %.0f | %.0f | %.2f |" % (sb, sa, sa / sb))
print("| GET 256 MiB, 1 stream, MB/s | %.0f | %.0f | %.2f |" % (lb, la, la / lb))
if all(len(r) > 4 for r in rows):
    pb, pa = med("before", 4), med("after", 4)
    print("| PUT 256 MiB, 1 request, MB/s | %.0f | %.0f | %.2f |" % (pb, pa, pa / pb))
if all(len(r) > 6 for r in rows):
    for name, col in (("GET 256 MiB, gateway CPU-s per GB", 5), ("GET 256 MiB, node CPU-s per GB", 6)):
        b, a = med("before", col), med("after", col)
        print("| %s | %.3f | %.3f | %.2f |" % (name, b, a, a / b if b else float("nan")))
if all(len(r) > 8 for r in rows):
    for name, col in (("GET 4 KiB, gateway CPU-us per GET", 7), ("GET 4 KiB, node CPU-us per GET", 8)):
        b, a = med("before", col), med("after", col)
        print("| %s | %.1f | %.1f | %.2f |" % (name, b, a, a / b if b else float("nan")))
print("errors:", sum(int(r[3]) for r in rows))
PY
