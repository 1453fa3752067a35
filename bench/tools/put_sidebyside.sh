#!/usr/bin/env bash
# One 1 GiB PUT, side by side in one run, ROUNDS times alternated: nginx's
# DAV PUT (peers/nginx), `dd conv=fdatasync` of the same bytes to a file,
# Ceph RGW (peers/ceph, when it answers on 7480), and cairn N=1 (1 node) and
# N=3 (3 nodes) on cairn-local's default deployment (ipc://). cairn-bench
# drives every HTTP PUT; CPU seconds per GB from /proc/PID/stat of each
# server process (nginx: its workers; Ceph: radosgw + ceph-osd; cairn: the
# gateway and the mean of the nodes; dd: itself, from /usr/bin/time).
#
#   bench/tools/put_sidebyside.sh BUILD [OUT]   (BUILD/bin has the binaries)
#   ROUNDS=3 SIZE=1073741824 SYSTEMS="nginx dd ceph cairn1 cairn3"
#   Start the peers first (peers/nginx/start.sh, peers/ceph/start.sh).
#   Prints one line per run "system MB/s server_cpu_s_per_gb [node_cpu_s_per_gb]"
#   and the medians.
set -euo pipefail
build=$(cd "$1" && pwd); out=${2:-/tmp/put-sidebyside}
rounds=${ROUNDS:-3}; size=${SIZE:-1073741824}
systems=${SYSTEMS:-nginx dd ceph cairn1 cairn3}
src=$(cd "$(dirname "$0")/../.." && pwd)
tools=$src/bench/tools
bench=$build/bin/cairn-bench
mkdir -p "$out"; touch "$out/runs.txt"
uptime >>"$out/uptime.txt"
ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }
tck=$(getconf CLK_TCK)

put() { # label endpoint pids... (extra bench args in BARGS)
  local label=$1 ep=$2; shift 2
  local t0 t1
  t0=$(ticks "$@")
  # shellcheck disable=SC2086
  "$bench" --endpoint "$ep" $BARGS --out "$out/$label" --progress false --plot false --concurrent 1 \
    --duration_s 600 --operations '[{put,1}]' --key_generator '{partitioned_sequential_int,1,1}' \
    --value_generator "{fixed_bin,$size}" --http_raw_request_timeout 0 --json "$out/$label.json" >/dev/null 2>&1
  t1=$(ticks "$@")
  python3 - "$out/$label.json" "$label" "$t0" "$t1" "$tck" >>"$out/runs.txt" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["total"]
gb = t["bytes_sent"] / 1e9
print(sys.argv[2], round(t["bytes_per_sec"] / 1e6), round((int(sys.argv[4]) - int(sys.argv[3])) / int(sys.argv[5]) / gb, 3), t["errors"])
PY
  tail -n 1 "$out/runs.txt"
}

for i in $(seq 1 "$rounds"); do
  for sys in $systems; do
    case $sys in
    nginx)
      pids=$(awk '/worker/ {print $1}' /tmp/nginx-peer/pids | sort -u)
      # shellcheck disable=SC2086
      BARGS="--create_bucket false" put nginx-$i http://127.0.0.1:8090/dav/pps $pids ;;
    dd)
      head -c "$size" /dev/urandom >"$out/dd.src"
      /usr/bin/time -f "%e %S %U" -o "$out/dd.time" dd if="$out/dd.src" of="$out/dd.out" bs=5M conv=fdatasync 2>/dev/null
      rm -f "$out/dd.out" "$out/dd.src"
      # dd also reads its source (one more copy): its CPU is an upper bound
      awk -v s="$size" -v l="dd-$i" '{printf "%s %d %.3f 0\n", l, s / $1 / 1e6, ($2 + $3) / (s / 1e9)}' "$out/dd.time" >>"$out/runs.txt"
      tail -n 1 "$out/runs.txt" ;;
    ceph)
      curl -s -o /dev/null http://127.0.0.1:7480/ || { echo "ceph not running: skipped"; continue; }
      pids=$(awk '$1 == "osd.0" || $1 == "client.rgw.peer" {print $2}' /tmp/ceph-peer/pids)
      # shellcheck disable=SC2086
      BARGS="--access_key peeraccess --secret_key peersecret" put ceph-$i http://127.0.0.1:7480/perfputsbs $pids ;;
    cairn1|cairn3)
      n=${sys#cairn}
      SIDES=after ROUNDS=1 NODES=$n PC_DIR=/tmp/pps-cairn "$tools/put_cpu_per_gb.sh" "$build" "$build" "$out/cairn-$n-$i" >/dev/null 2>&1 || true
      awk -v l="$sys-$i" '/^after/ {print l, $4, $2, $6, $3}' "$out/cairn-$n-$i/runs.txt" >>"$out/runs.txt"
      tail -n 1 "$out/runs.txt" ;;
    esac
  done
done
uptime >>"$out/uptime.txt"
python3 - "$out/runs.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    by.setdefault(r[0].rsplit("-", 1)[0], []).append(r)
print("| system | MB/s (median) | server CPU-s/GB | node CPU-s/GB | runs |")
print("|---|---|---|---|---|")
for k, v in by.items():
    med = lambda c: statistics.median(float(x[c]) for x in v)
    node = "%.2f" % med(4) if len(v[0]) > 4 else "—"
    print("| %s | %d | %.2f | %s | %s |" % (k, med(1), med(2), node, " / ".join(x[1] for x in v)))
PY
