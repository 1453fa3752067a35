#!/usr/bin/env bash
# The cost of the node's metrics on small requests: a node with metrics off
# (metrics.port=0) and one with them on and scraped every second, alternated
# RUNS times; each run does 4 KiB PUTs (8 writers, sync_mode none, so the
# request path and not the disk is measured) then 4 KiB GETs (depth 8).
# Prints one line per run; bench/results/node-metrics-cost-2vcpu.md has the
# medians. SCRAPE=0 leaves the metrics on but unscraped (the counting
# alone). Usage: bench/sn/metrics_cost.sh [BIN_DIR] [RUNS] [SECONDS]
set -euo pipefail
bin=${1:-build/bin}
runs=${2:-3}
secs=${3:-5}
tmp=$(mktemp -d /var/tmp/cairn-mcost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
port=$((20000 + RANDOM % 20000))
one() {   # one run: $1 = off|on
  local mode=$1 mport=0 node scraper=""
  rm -rf "$tmp/data"
  [ "$mode" = on ] && mport=$((port + 1))
  "$bin/cairn-storage" --set listen=tcp://127.0.0.1:$port --set data_dir="$tmp/data" \
    --set log_level=warn --set obj_containers.sync_mode=none --set metrics.port=$mport &
  node=$!
  sleep 0.5
  if [ "$mode" = on ] && [ "${SCRAPE:-1}" = 1 ]; then
    (while sleep 1; do curl -s -o /dev/null "http://127.0.0.1:$mport/metrics" || true; done) &
    scraper=$!
  fi
  local put get
  put=$("$bin/cairn-sn-bench" put --endpoint tcp://127.0.0.1:$port --writers 8 --size 4096 \
        --seconds "$secs")
  "$bin/cairn-sn-bench" load --endpoint tcp://127.0.0.1:$port --prefix g/ --count 20000 \
        --size 4096 --depth 8 >/dev/null
  get=$("$bin/cairn-sn-bench" slice --endpoint tcp://127.0.0.1:$port --prefix g/ --count 20000 \
        --size 4096 --slice 4096 --depth 8 --passes 5)
  [ -n "$scraper" ] && kill "$scraper" && wait "$scraper" 2>/dev/null || true
  kill -TERM "$node"; wait "$node" || true
  echo "metrics=$mode put: $put | get: $get"
}
for r in $(seq 1 "$runs"); do
  one off
  one on
done
