#!/usr/bin/env bash
# The gateway's layers (docs/architecture.md): gateway/http/ is a library
# that knows nothing of S3, auth, large objects or the cluster. Fails when a
# file in it includes a header of another gateway folder (or the worker's
# assembly), or names a symbol of another layer (gw_s3_, gw_req_, gw_lo_,
# gw_store_, gw_sigv4_, gw_cluster_, gw_worker). Also fails when a file of
# gateway/s3/ or gateway/lo/ includes worker.h or reaches through a worker:
# handlers use their typed contexts (s3/s3_ctx.h, lo/lo_env.h), and when a
# file of gateway/lo/ names the S3 request (lo/ sees sinks and sources).
set -euo pipefail
gw="$(cd "$(dirname "$0")/../gateway" && pwd)"
bad=0
for f in "$gw"/http/*.[ch]; do
  for inc in $(grep -o '#include "[^"]*"' "$f" | cut -d'"' -f2); do
    case "$inc" in cn/*) continue ;; esac
    if [ ! -f "$gw/http/$inc" ]; then
      echo "layers: $(basename "$f") includes \"$inc\", which is not in gateway/http/"
      bad=1
    fi
  done
  if grep -nE '\b(gw_s3_|gw_req_|gw_lo_|gw_store_|gw_sigv4_|gw_cluster_|gw_worker|GW_S3_)' "$f"; then
    echo "layers: $(basename "$f") names a symbol of another layer (above)"
    bad=1
  fi
done
for f in "$gw"/s3/*.[ch] "$gw"/lo/*.[ch]; do
  if grep -nE '#include "worker\.h"|->worker\b|struct gw_worker\b' "$f"; then
    echo "layers: $(basename "$f") reaches through the worker (above)"
    bad=1
  fi
done
# lo/ knows no S3 request: a large GET writes to a read-pipeline sink and a
# large PUT reads a gw_lo_put_source, both made by s3/ (s3_get_sink.c,
# s3_body.c).
for f in "$gw"/lo/*.[ch]; do
  if grep -nE '#include "(request|s3_body)\.h"|struct gw_req\b|\bgw_req_' "$f"; then
    echo "layers: $(basename "$f") reaches into the S3 request (above)"
    bad=1
  fi
done
[ "$bad" -eq 0 ] && echo "layers: gateway/http/ stands alone; s3/ and lo/ use their contexts; lo/ sees no request"
exit "$bad"
