#!/usr/bin/env bash
# dockerd-sandbox.sh: a private Docker engine for tests and for machines with
# no system dockerd (no systemd), started so that it touches the host's
# network as little as possible, and stopped so that it leaves nothing behind.
#
#   dockerd-sandbox.sh start DIR   start dockerd; DIR/env then holds
#                                  "export DOCKER_HOST=unix://..." to source
#   dockerd-sandbox.sh stop DIR    remove every container and network it
#                                  made, stop it, undo what it changed on the
#                                  host (see below) and say what that was
#   dockerd-sandbox.sh check DIR   compare the host with the snapshot taken
#                                  at start; exit 1 on a difference
#
# DIR (a short path: sockets live there) holds the socket, pid file, log and
# the snapshot of the host taken before start. The image store (data root) is
# CAIRN_DOCKER_DATA_ROOT, default DIR/data-root; pointing it at a folder that
# survives (tests/test_compose.sh uses var/docker-cache/data-root) keeps
# imported base images and the apt layers of the cairn image between runs.
#
# How it touches the host, and why:
#   --iptables=false --ip6tables=false --ip-masq=false  no NAT or filter
#       rules: containers on a compose network reach each other (one Linux
#       bridge, layer 2) and the host reaches published ports through
#       docker-proxy, so the cluster needs no rules; builds that download
#       Debian packages run with --network host instead of NAT.
#   --ip-forward=false  dockerd would otherwise set net.ipv4.ip_forward=1
#       (it did here, even with --iptables=false).
#   --bridge=none  no docker0; compose makes its own network (a br-* bridge)
#       and removes it on "down".
# stop then removes any br-*/docker0/veth link that was not there at start,
# restores ip_forward (v4, v6) and, if the iptables rules (nft and legacy)
# differ from the snapshot, restores the snapshot.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

log() { echo "dockerd-sandbox: $*" >&2; }

# Host network state that dockerd may change, one file per item.
snapshot() {
  local out=$1
  mkdir -p "$out"
  cat /proc/sys/net/ipv4/ip_forward >"$out/ip_forward"
  cat /proc/sys/net/ipv6/conf/all/forwarding >"$out/ip6_forward" 2>/dev/null || echo 0 >"$out/ip6_forward"
  ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort >"$out/links"
  local t
  for t in iptables ip6tables iptables-legacy ip6tables-legacy; do
    if command -v "$t-save" >/dev/null 2>&1; then
      # rules only: no counters, no comment lines with dates
      "$t-save" 2>/dev/null | sed -e '/^#/d' -e 's/\[[0-9]*:[0-9]*\]//' >"$out/$t" || true
    fi
  done
}

cmd_start() {
  [ "$(id -u)" -eq 0 ] || { log "needs root"; exit 77; }
  local bin
  for bin in dockerd containerd runc; do
    command -v "$bin" >/dev/null || { log "$bin not found (apt-get install docker.io)"; exit 3; }
  done
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ -f "$dir/dockerd.pid" ] && kill -0 "$(cat "$dir/dockerd.pid")" 2>/dev/null; then
    log "already running in $dir"; exit 1
  fi
  local data_root=${CAIRN_DOCKER_DATA_ROOT:-$dir/data-root}
  mkdir -p "$data_root"
  rm -rf "$dir/before"
  snapshot "$dir/before"
  echo "$data_root" >"$dir/data-root.path"
  setsid dockerd \
    --iptables=false --ip6tables=false --ip-masq=false --ip-forward=false \
    --bridge=none \
    --data-root "$data_root" --exec-root "$dir/exec" \
    --pidfile "$dir/dockerd.pid" -H "unix://$dir/docker.sock" \
    >"$dir/dockerd.log" 2>&1 </dev/null &
  echo $! >"$dir/dockerd.launcher.pid"
  echo "export DOCKER_HOST=unix://$dir/docker.sock" >"$dir/env"
  local _
  for _ in $(seq 150); do
    if DOCKER_HOST="unix://$dir/docker.sock" /usr/bin/docker version >/dev/null 2>&1; then
      log "dockerd up (pid $(cat "$dir/dockerd.pid"), socket $dir/docker.sock, data root $data_root)"
      return 0
    fi
    if ! kill -0 "$(cat "$dir/dockerd.launcher.pid")" 2>/dev/null; then
      log "dockerd exited at start; its log ($dir/dockerd.log) ends with:"
      tail -n 20 "$dir/dockerd.log" >&2
      exit 4
    fi
    sleep 0.2
  done
  log "dockerd did not answer within 30 s; log: $dir/dockerd.log"
  tail -n 20 "$dir/dockerd.log" >&2
  cmd_stop || true
  exit 4
}

# Prints the differences between the snapshot and the host now; returns 1 if
# there is any.
cmd_check() {
  [ -d "$dir/before" ] || { log "no snapshot in $dir"; return 2; }
  rm -rf "$dir/after"
  snapshot "$dir/after"
  local f rc=0
  for f in "$dir"/before/*; do
    f=$(basename "$f")
    if ! cmp -s "$dir/before/$f" "$dir/after/$f"; then
      log "host differs from the snapshot in $f:"
      diff "$dir/before/$f" "$dir/after/$f" >&2 || true
      rc=1
    fi
  done
  return $rc
}

# Waits up to $2 tenths of a second for pid $1 to exit.
wait_gone() {
  local _
  for _ in $(seq "$2"); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  return 1
}

cmd_stop() {
  [ -d "$dir" ] || { log "no sandbox in $dir"; return 0; }
  dir=$(cd "$dir" && pwd)
  local sock="unix://$dir/docker.sock" pid=""
  [ -f "$dir/dockerd.pid" ] && pid=$(cat "$dir/dockerd.pid")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    local ids
    ids=$(DOCKER_HOST=$sock /usr/bin/docker ps -aq 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -n "$ids" ] && DOCKER_HOST=$sock /usr/bin/docker rm -f -v $ids >/dev/null 2>&1 || true
    DOCKER_HOST=$sock /usr/bin/docker network prune -f >/dev/null 2>&1 || true
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid" 300; then
      log "dockerd $pid ignored TERM for 30 s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      wait_gone "$pid" 50 || true
    fi
  fi
  # the containerd dockerd started (its pid file is in the exec root)
  local cpid f=$dir/exec/containerd/containerd.pid
  if [ -f "$f" ]; then
    cpid=$(cat "$f")
    if kill -0 "$cpid" 2>/dev/null; then
      kill -TERM "$cpid" 2>/dev/null || true
      wait_gone "$cpid" 100 || kill -KILL "$cpid" 2>/dev/null || true
    fi
  fi
  # mounts left under the exec root or the data root (overlays, netns)
  local data_root=""
  [ -f "$dir/data-root.path" ] && data_root=$(cat "$dir/data-root.path")
  local m
  for m in $(awk '{ print $2 }' /proc/mounts | sort -r); do
    case "$m" in
      "$dir"/*|"${data_root:-/nonexistent}"/*)
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
        log "unmounted $m" ;;
    esac
  done
  restore_host
  rm -rf --one-file-system "$dir/exec"
  rm -f "$dir/docker.sock" "$dir/dockerd.pid" "$dir/dockerd.launcher.pid"
  if cmd_check; then
    log "stopped; host network settings are as before"
  else
    log "stopped, but the host still differs from the snapshot (above)"
    return 1
  fi
}

# Undoes what dockerd changed: links, forwarding, iptables.
restore_host() {
  local before=$dir/before
  [ -d "$before" ] || return 0
  local link
  for link in $(ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
    grep -qxF "$link" "$before/links" && continue
    case "$link" in
      docker0|br-*|veth*)
        ip link delete "$link" 2>/dev/null && log "removed link $link" || true ;;
    esac
  done
  local v
  v=$(cat "$before/ip_forward")
  if [ "$(cat /proc/sys/net/ipv4/ip_forward)" != "$v" ]; then
    echo "$v" >/proc/sys/net/ipv4/ip_forward && log "restored net.ipv4.ip_forward=$v"
  fi
  v=$(cat "$before/ip6_forward")
  if [ -f /proc/sys/net/ipv6/conf/all/forwarding ] &&
     [ "$(cat /proc/sys/net/ipv6/conf/all/forwarding)" != "$v" ]; then
    echo "$v" >/proc/sys/net/ipv6/conf/all/forwarding && log "restored net.ipv6.conf.all.forwarding=$v"
  fi
  local t now
  for t in iptables ip6tables iptables-legacy ip6tables-legacy; do
    [ -f "$before/$t" ] || continue
    now=$("$t-save" 2>/dev/null | sed -e '/^#/d' -e 's/\[[0-9]*:[0-9]*\]//' || true)
    if [ "$now" != "$(cat "$before/$t")" ]; then
      "$t-restore" <"$before/$t" && log "restored the $t rules of the snapshot"
    fi
  done
}

case "$cmd" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  check) cmd_check ;;
  *) log "unknown command '$cmd' (start, stop, check)"; exit 2 ;;
esac
