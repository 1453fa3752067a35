#!/usr/bin/env bash
# Runs bench/conformance/s3_conformance.py against cairn (the test harness:
# 3 storage nodes + 1 gateway on loopback) and against the Ceph RGW peer
# (../shared/peers/ceph), then prints the side-by-side table.
#   bench/conformance/run-vs-ceph.sh [OUT_DIR]    (from the repository root,
#   after a build in build/; needs /usr/bin/python3 with boto3)
# Ceph is started if it is not running and stopped again at the end (stop.sh
# stops exactly the PIDs start.sh recorded); a second Ceph user (peer2) is
# created with radosgw-admin for the second account.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEER="${CEPH_PEER_DIR:-$ROOT/../shared/peers/ceph}"
[[ -d "$PEER" ]] || PEER=/work/shared/peers/ceph
OUT="${1:-$(mktemp -d /tmp/s3conf.XXXXXX)}"
mkdir -p "$OUT"
PY=/usr/bin/python3
CONF="$ROOT/bench/conformance/s3_conformance.py"

CAIRN_BIN="${CAIRN_BIN:-$ROOT/build/bin}" "$PY" "$CONF" cairn "$OUT/cairn.json"

started=0
trap 'if [[ $started == 1 ]]; then "$PEER/stop.sh"; fi' EXIT
if ! curl -s -o /dev/null "http://127.0.0.1:7480"; then
  started=1   # before start.sh: a start that fails half way is stopped too
  CEPH_PEER_MGR=0 CEPH_PEER_OSD_MEMORY_TARGET="${CEPH_PEER_OSD_MEMORY_TARGET:-1073741824}" \
    "$PEER/start.sh"
fi
# shellcheck source=/dev/null
. "$PEER/env.sh"
radosgw-admin --conf "$CEPH_CONF" user info --uid=peer2 >/dev/null 2>&1 ||
  radosgw-admin --conf "$CEPH_CONF" user create --uid=peer2 \
    --display-name="conformance second account" \
    --access-key=peer2access --secret-key=peer2secret >/dev/null
S3C_ENDPOINT="$CEPH_PEER_S3_ENDPOINT" S3C_A_KEY="$AWS_ACCESS_KEY_ID" \
  S3C_A_SECRET="$AWS_SECRET_ACCESS_KEY" S3C_B_KEY=peer2access S3C_B_SECRET=peer2secret \
  "$PY" "$CONF" run "Ceph RGW $(ceph --version | awk '{print $3}')" "$OUT/ceph.json"

"$PY" "$CONF" table "$OUT/cairn.json" "$OUT/ceph.json" | tee "$OUT/table.md"
