#!/usr/bin/env bash
# Issue 16's side-by-side table, re-measured in one run: the same cairn-bench
# command lines as ../shared/peers/sidebyside/run.sh against nginx
# (peers/nginx: sendfile GET, DAV PUT), Ceph RGW (peers/ceph: 1 BlueStore OSD,
# pools of size 1), cairn N=3 on 3 nodes and cairn N=1 on 1 node, both on
# cairn-local's default deployment (ipc:// to the nodes, its default auth).
# The systems alternate: each pass runs every system once (the order rotates
# from pass to pass), so drift of a shared machine falls on all of them.
# Around every load the utime+stime of each server process is read from
# /proc/PID/stat: "front" is nginx's workers / radosgw / cairn-gateway, "back"
# is ceph-osd / the cairn nodes (summed); the summary divides them by the
# bytes moved (CPU-s per GB) for the large-object rows.
#
#   bench/tools/sidebyside.sh BUILD OUT      (BUILD/bin has cairn-bench,
#                                             cairn-gateway, cairn-storage)
#   PASSES=3 DUR=10 SYSTEMS="nginx ceph cairn3 cairn1"
#   FIRST_PASS=1: the first pass's number (a second invocation into the same
#   OUT continues the numbering and the rotation of the order)
#   ROWS="put1g get1g get1g16"   (also put4k get4k; get4k reads what put4k
#                                 wrote in the same pass; put4kdur: 4 KiB
#                                 PUTs over those keys for DUR seconds; leofs = LeoFS #766's
#                                 load + 95/5 mix via peers/sidebyside/leofs766.sh,
#                                 LEOFS_DUR seconds, not for nginx)
#   SBS_DIR, SBS_PORT, SBS_BASE_PORT: the cairn cluster's folder and ports
#   (default /tmp/sbs-cairn, 18660, 19660)
#   Start the peers first (peers/nginx/start.sh, peers/ceph/start.sh); a peer
#   that does not answer is skipped (and said so in OUT/runs.txt).
# Appends to OUT/runs.txt one line per load:
#   pass system row ops_s MBps errors bytes front_ticks back_ticks clk_tck p50_us p99_us
# and writes OUT/uptime.txt (load before and after each pass). The table:
#   bench/tools/sidebyside_table.py OUT/runs.txt
set -uo pipefail
build=$(cd "$1" && pwd); out=$2; mkdir -p "$out"
passes=${PASSES:-3}; dur=${DUR:-10}; leofs_dur=${LEOFS_DUR:-30}
read -r -a systems <<<"${SYSTEMS:-nginx ceph cairn3 cairn1}"
rows=${ROWS:-put1g get1g get1g16}
src=$(cd "$(dirname "$0")/../.." && pwd)
peers=${PEERS:-$src/../shared/peers}
[ -d "$peers" ] || peers=/work/shared/peers
local_sh=$src/deploy/local/cairn-local
B=$build/bin/cairn-bench
dir=${SBS_DIR:-/tmp/sbs-cairn}; port=${SBS_PORT:-18660}; base_port=${SBS_BASE_PORT:-19660}
ck=AKIACAIRNDEV00000000; cs=cairn-dev-secret-key-000000000000000000
tck=$(getconf CLK_TCK)
touch "$out/runs.txt"

ticks() { # utime+stime of the pids given, summed (fields after "(comm)")
  local p s t=0
  for p in "$@"; do
    s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    s=${s##*) }
    # shellcheck disable=SC2086 # the fields of /proc/PID/stat, split on purpose
    set -- $s
    t=$((t + ${12} + ${13}))
  done
  echo $t
}

FRONT=(); BACK=()
run_load() { # pass system row endpoint args... -> one line in runs.txt
  local pass=$1 sys=$2 row=$3 ep=$4; shift 4
  local d=$out/$pass-$sys-$row f0 b0 f1 b1
  rm -rf "$d"
  f0=$(ticks "${FRONT[@]}"); b0=$(ticks "${BACK[@]}")
  "$B" --endpoint "$ep" --out "$d" --progress false --plot false --report_interval 1 \
       --json "$d.json" "$@" >"$d.log" 2>&1
  f1=$(ticks "${FRONT[@]}"); b1=$(ticks "${BACK[@]}")
  python3 - "$d.json" "$pass $sys $row" $((f1 - f0)) $((b1 - b0)) "$tck" >>"$out/runs.txt" <<'PY'
import json, sys
label, ft, bt, tck = sys.argv[2:6]
try:
    j = json.load(open(sys.argv[1]))
except Exception:
    print(label, "NA NA NA 0", ft, bt, tck, "NA NA"); sys.exit()
t = j["total"]
moved = t["bytes_received"] + t["bytes_sent"]
lat = [v["latency_us"] for v in j["ops"].values()]
print(label, round(t["ops_per_sec"], 1), round(t["bytes_per_sec"] / 1e6, 1), t["errors"], moved,
      ft, bt, tck, lat[0]["p50"] if lat else "NA", lat[0]["p99"] if lat else "NA")
PY
  echo "  $(tail -n 1 "$out/runs.txt")"
}

leofs() { # pass system endpoint/bucket access secret
  local pass=$1 sys=$2 d=$out/$1-$2-leofs
  rm -rf "$d"; mkdir -p "$d"
  local f0 b0 f1 b1
  f0=$(ticks "${FRONT[@]}"); b0=$(ticks "${BACK[@]}")
  "$peers/sidebyside/leofs766.sh" "$B" "$3" "$4" "$5" "$d" "$leofs_dur" >"$d/summary.txt" 2>&1
  f1=$(ticks "${FRONT[@]}"); b1=$(ticks "${BACK[@]}")
  local ph
  for ph in load mix; do
    python3 - "$d/$ph.json" "$pass $sys leofs-$ph" $((f1 - f0)) $((b1 - b0)) "$tck" >>"$out/runs.txt" <<'PY'
import json, sys
label, ft, bt, tck = sys.argv[2:6]
try:
    t = json.load(open(sys.argv[1]))["total"]
    print(label, round(t["ops_per_sec"], 1), round(t["bytes_per_sec"] / 1e6, 1), t["errors"],
          t["bytes_received"] + t["bytes_sent"], ft, bt, tck, "NA NA")
except Exception:
    print(label, "NA NA NA 0", ft, bt, tck, "NA NA")
PY
    echo "  $(tail -n 1 "$out/runs.txt")"
  done
}

rows_for() { # pass system endpoint auth... : the loads of run.sh, in ROWS order
  local pass=$1 sys=$2 ep=$3; shift 3
  local a=("$@") r
  for r in $rows; do
    case $r in
    put4k) local pep=$ep/sbs; [ "$sys" = nginx ] && pep=$ep/dav/sbs
      run_load "$pass" "$sys" put4k "$pep" "${a[@]}" --concurrent 32 --duration_s 60 --operations '[{put,1}]' \
        --key_generator '{partitioned_sequential_int,1,5000}' --value_generator '{fixed_bin,4096}' ;;
    put4kdur) local pep=$ep/sbs; [ "$sys" = nginx ] && pep=$ep/dav/sbs
      run_load "$pass" "$sys" put4kdur "$pep" "${a[@]}" --concurrent 32 --duration_s "$dur" --operations '[{put,1}]' \
        --key_generator '{uniform_int,5000}' --value_generator '{fixed_bin,4096}' ;;
    get4k)
      run_load "$pass" "$sys" get4k "$ep/sbs" "${a[@]}" --concurrent 32 --duration_s "$dur" --operations '[{get,1}]' \
        --key_generator '{uniform_int,5000}' --not_found_ok false ;;
    put1g) local pep=$ep/sbsl; [ "$sys" = nginx ] && pep=$ep/dav/sbsl
      run_load "$pass" "$sys" put1g "$pep" "${a[@]}" --concurrent 1 --duration_s 600 --operations '[{put,1}]' \
        --key_generator '{partitioned_sequential_int,1,1}' --value_generator '{fixed_bin,1073741824}' \
        --http_raw_request_timeout 0 ;;
    get1g)
      run_load "$pass" "$sys" get1g "$ep/sbsl" "${a[@]}" --concurrent 1 --duration_s "$dur" --operations '[{get,1}]' \
        --key_generator '{uniform_int,1}' --http_raw_request_timeout 0 --not_found_ok false ;;
    get1g16)
      run_load "$pass" "$sys" get1g16 "$ep/sbsl" "${a[@]}" --concurrent 16 --duration_s "$dur" --operations '[{get,1}]' \
        --key_generator '{uniform_int,1}' --http_raw_request_timeout 0 --not_found_ok false ;;
    leofs)
      [ "$sys" = nginx ] || leofs "$pass" "$sys" "$ep/leofs766" "${a[1]}" "${a[3]}" ;;
    esac
  done
}

cairn_run() { # pass nodes
  local pass=$1 n=$2 sys=cairn$2
  "$local_sh" down --dir "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
  if ! "$local_sh" up -d --no-build --build "$build" --dir "$dir" --gateway-port "$port" \
       --base-port "$base_port" --nodes "$n" >"$out/$pass-$sys.up.log" 2>&1; then
    echo "$pass $sys start-failed NA NA NA 0 0 0 $tck NA NA" >>"$out/runs.txt"; return
  fi
  local ep=http://127.0.0.1:$port a=(--access_key "$ck" --secret_key "$cs")
  for _ in $(seq 1 20); do # until the cluster takes a PUT
    "$B" --endpoint "$ep/sbswarm" "${a[@]}" --out "$out/$pass-$sys-warm" --progress false --plot false \
      --concurrent 1 --duration_s 1 --operations '[{put,1}]' --key_generator '{uniform_int,1}' \
      --value_generator '{fixed_bin,16}' >/dev/null 2>&1 || true
    [ "$(wc -l <"$out/$pass-$sys-warm/errors.csv")" -le 1 ] && break
    sleep 0.5
  done
  FRONT=("$(cat "$dir"/run/gateway*.pid | head -1)")
  BACK=()
  local pf
  for pf in "$dir"/run/*.pid; do
    case $pf in */gateway*) ;; *) BACK+=("$(cat "$pf")") ;; esac
  done
  rows_for "$pass" "$sys" "$ep" "${a[@]}"
  "$local_sh" down --dir "$dir" >/dev/null 2>&1 || true
}

first=${FIRST_PASS:-1}
for pass in $(seq "$first" $((first + passes - 1))); do
  echo "pass $pass start $(uptime)" | tee -a "$out/uptime.txt"
  k=${#systems[@]}
  for j in $(seq 0 $((k - 1))); do
    sys=${systems[$(((j + pass - 1) % k))]}
    echo "pass $pass: $sys"
    case $sys in
    nginx)
      curl -s -o /dev/null -m 2 http://127.0.0.1:8090/health || { echo "$pass nginx not-running NA NA NA 0 0 0 $tck NA NA" >>"$out/runs.txt"; continue; }
      mapfile -t FRONT < <(awk '/worker/ {print $1}' /tmp/nginx-peer/pids); BACK=()
      rows_for "$pass" nginx http://127.0.0.1:8090 --create_bucket false ;;
    ceph)
      curl -s -o /dev/null -m 2 http://127.0.0.1:7480/ || { echo "$pass ceph not-running NA NA NA 0 0 0 $tck NA NA" >>"$out/runs.txt"; continue; }
      mapfile -t FRONT < <(awk '$1 == "client.rgw.peer" {print $2}' /tmp/ceph-peer/pids)
      mapfile -t BACK < <(awk '$1 == "osd.0" {print $2}' /tmp/ceph-peer/pids)
      rows_for "$pass" ceph http://127.0.0.1:7480 --access_key peeraccess --secret_key peersecret ;;
    cairn1|cairn3) cairn_run "$pass" "${sys#cairn}" ;;
    esac
  done
  echo "pass $pass end   $(uptime)" | tee -a "$out/uptime.txt"
done
