#!/usr/bin/env bash
# The machine's own limits for a 1 GiB GET, to set beside cpu_per_gb.sh's
# cairn numbers in the same run: nginx serving the same number of bytes
# from a file (sendfile; the shared peer of ../shared/peers/nginx) to one
# cairn-bench stream, and dd reading that file from the page cache. Prints
# "label cpu_s_per_gb MBps" lines (nginx: its worker processes' CPU).
#
#   bench/tools/get_baseline.sh BUILD [OUT]
#   NGINX_URL (default http://127.0.0.1:8090), NGINX_ROOT (/tmp/nginx-peer),
#   ROUNDS=3 DUR=10 SIZE=1073741824
set -euo pipefail
build=$(cd "$1" && pwd); out=${2:-/tmp/get-baseline}
rounds=${ROUNDS:-3}; dur=${DUR:-10}; size=${SIZE:-1073741824}
url=${NGINX_URL:-http://127.0.0.1:8090}; root=${NGINX_ROOT:-/tmp/nginx-peer}
name=get-baseline-$$; file=$root/www/$name/1   # cairn-bench GETs ENDPOINT/1
mkdir -p "$out"; : >"$out/runs.txt"
trap 'rm -rf "${file%/1}"' EXIT
mkdir -p "${file%/1}"; chmod 755 "${file%/1}"
head -c "$size" /dev/urandom >"$file"; chmod 644 "$file"
cat "$file" >/dev/null   # into the page cache, as cairn's object is
workers=$(pgrep -P "$(cat "$root/nginx.pid")" | tr '\n' ' ')
ticks() { local f; for f in "$@"; do cat "/proc/$f/stat"; done | awk '{t += $14 + $15} END {print t}'; }
tck=$(getconf CLK_TCK)
for i in $(seq 1 "$rounds"); do
  # shellcheck disable=SC2086
  t0=$(ticks $workers)
  "$build/bin/cairn-bench" --endpoint "$url/$name" --out "$out/nginx-$i" --concurrent 1 \
    --duration_s "$dur" --operations '[{get,1}]' --key_generator "{uniform_int,1}" \
    --progress false --plot false --http_raw_request_timeout 0 \
    --not_found_ok false --json "$out/nginx-$i.json" >/dev/null 2>&1 || true
  # shellcheck disable=SC2086
  t1=$(ticks $workers)
  python3 - "$out/nginx-$i.json" "$t0" "$t1" "$tck" "nginx-$i" >>"$out/runs.txt" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["total"]
gb = t["bytes_received"] / 1e9
print(sys.argv[5], round((int(sys.argv[3]) - int(sys.argv[2])) / int(sys.argv[4]) / gb, 3),
      round(t["bytes_per_sec"] / 1e6), t["errors"])
PY
  tail -n 1 "$out/runs.txt"
  /usr/bin/time -f "%e %U %S" -o "$out/dd-$i.time" dd if="$file" of=/dev/null bs=1M 2>/dev/null
  read -r e u s <"$out/dd-$i.time"
  python3 -c "import sys; e,u,s,n=map(float,sys.argv[1:5]); print('dd-%s' % sys.argv[5], round((u+s)/(n/1e9),3), round(n/1e6/e), 0)" \
    "$e" "$u" "$s" "$size" "$i" >>"$out/runs.txt"
  tail -n 1 "$out/runs.txt"
done
