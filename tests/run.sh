#!/usr/bin/env bash
# Builds cairn and runs every test: unit, fuzz-seed replays and integration
# tests in a warnings-as-errors build, the same under ASan+UBSan, then each
# libFuzzer target for a short time. Installs missing Debian packages first.
#
#   ./tests/run.sh            everything (what CI runs)
#   ./tests/run.sh --quick    the main build's tests only
#   CN_FUZZ_SECONDS=N         seconds per fuzz target (default 10; 0 skips)
#   CN_SKIP_COMPOSE=1         skip the docker-compose cluster test
#   CN_JOBS=N                 build and test parallelism (default: nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
quick=0
[ "${1:-}" = "--quick" ] && quick=1
jobs=${CN_JOBS:-$(nproc)}
fuzz_seconds=${CN_FUZZ_SECONDS:-10}
start=$(date +%s)

stage() { printf '\n=== %s (%ds)\n' "$*" $(( $(date +%s) - start )); }

stage "dependencies"
./deploy/install-deps.sh build test

stage "build (warnings are errors)"
cmake -S . -B build -DCN_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"

stage "tests"
(cd build && ctest --output-on-failure -j"$jobs")

if [ "$quick" -eq 1 ]; then
  stage "done (quick)"
  exit 0
fi

stage "large objects at full size (2 GiB PUT/GETs under 64 MiB RSS, aws cli 1 GiB round trip)"
(cd build && CAIRN_LO_HEAVY=1 ctest --output-on-failure -j1 \
  -R 'gateway_large_memory$|gateway_multipart$')

stage "sanitizer build (address,undefined)"
cmake -S . -B build-asan -DCN_WERROR=ON -DCN_SANITIZE=address,undefined \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$jobs"

stage "tests under sanitizers"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd build-asan && ctest --output-on-failure -j"$jobs" -L unit)
(cd build-asan && ctest --output-on-failure -j"$jobs" -L integration \
  -R 'storage_(basic|protocol|corrupt|crash)$|gateway_(basic|chunked|conformance|large|shutdown|access_log|status|sigv2|post_object|versioning|cluster_keys|versioned_crash|version_latest|first_requests)$|cluster_(failover|digest_read|handoff_durable)$|test_sec_(isolation|response_headers|owner_race|http|tls|acl|policy|key_restrictions)$|test_accounts$')

if [ "${CN_SKIP_COMPOSE:-0}" != 1 ]; then
  stage "compose cluster (docker: 3 nodes, 2 gateways, bench, a node stopped, growth)"
  ./tests/compose/test_compose.sh
fi

if [ "$fuzz_seconds" -gt 0 ]; then
  stage "fuzz targets, ${fuzz_seconds}s each (libFuzzer)"
  CC=clang cmake -S . -B build-fuzz -DCN_FUZZ=ON -DCN_SANITIZE=address,undefined \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-fuzz -j"$jobs"
  for bin in build-fuzz/fuzz/fuzz_*; do
    name=$(basename "$bin")
    corpus="build-fuzz/corpus/$name"
    mkdir -p "$corpus"
    echo "--- $name"
    "$bin" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=0 "$corpus" "tests/fuzz/seeds/$name" 2>&1 | tail -n 2
  done
fi

stage "all tests passed"
