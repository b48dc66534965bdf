#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine: installs Debian's docker.io when there is
# no daemon binary, starts dockerd in the background when nothing answers, and waits for it.
# Also installs debootstrap, which the local runtime uses to build its base image offline, and gcc
# with glibc's static libc, which the build uses for the in-sandbox daemon (daemon/build.sh).
#
# With --runsc (or SANDBOXES_RUNSC=1) it also installs gVisor (Debian's runsc) and registers it
# with the local dockerd as runtime "runsc", with the arguments the local runtime needs
# (--host-uds=open: the in-sandbox daemon connects out to its host socket; --network=host:
# gVisor uses the network namespace Docker made, so the server's firewalls apply). A running
# dockerd is sent SIGHUP, which reloads its runtimes; it is never restarted.
set -euo pipefail

runsc=${SANDBOXES_RUNSC:-0}
for arg in "$@"; do
  case "$arg" in
    --runsc) runsc=1 ;;
    *) echo "usage: $0 [--runsc]" >&2; exit 2 ;;
  esac
done

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

docker_answers() { docker info >/dev/null 2>&1; }

need_pkgs=()
# an engine that already answers (Docker Desktop, a remote DOCKER_HOST) needs no docker.io here
command -v dockerd >/dev/null 2>&1 || { command -v docker >/dev/null 2>&1 && docker_answers; } || need_pkgs+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_pkgs+=(debootstrap)
command -v gcc >/dev/null 2>&1 || need_pkgs+=(gcc)
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || need_pkgs+=(libc6-dev)
if [ "$runsc" = 1 ]; then
  command -v runsc >/dev/null 2>&1 || need_pkgs+=(runsc)
  command -v jq >/dev/null 2>&1 || need_pkgs+=(jq)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "==> installing ${need_pkgs[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

# The arguments the runtime "runsc" must be registered with, as JSON.
RUNSC_ARGS='["--host-uds=open","--network=host"]'

# Whether the engine lists runtime "runsc" with gVisor's binary and the arguments the server needs.
runsc_registered() {
  docker info --format '{{json .Runtimes}}' 2>/dev/null | jq -e '.runsc
    | (.path // "" | test("(^|/)runsc$"))
      and ((.runtimeArgs // []) | index("--network=host") != null)
      and ((.runtimeArgs // []) | (index("--host-uds=open") != null or index("--host-uds=all") != null))' >/dev/null 2>&1
}

# Adds runtime "runsc" to the local dockerd's configuration file, keeping everything else in it,
# and has a running dockerd reload it.
register_runsc() {
  local pid config entry tmp
  pid=$(pidof dockerd 2>/dev/null | awk '{print $1}' || true)
  config=/etc/docker/daemon.json
  if [ -n "$pid" ]; then
    # a dockerd started with --config-file reads that file instead
    local named
    named=$(tr '\0' '\n' <"/proc/$pid/cmdline" | sed -n 's/^--config-file=//p; /^--config-file$/{n;p}' | head -n 1)
    [ -z "$named" ] || config=$named
  elif docker_answers; then
    echo "error: the Docker engine that answers is not a dockerd on this machine, so this script cannot register runsc with it;" \
      "register gVisor there as runtime \"runsc\" with runtimeArgs $RUNSC_ARGS" >&2
    exit 1
  fi
  entry=$(jq -n --arg path "$(command -v runsc)" --argjson args "$RUNSC_ARGS" '{path: $path, runtimeArgs: $args}')
  as_root mkdir -p "$(dirname "$config")"
  if as_root test -s "$config"; then
    local existing
    existing=$(as_root cat "$config")
    if echo "$existing" | jq -e '.runtimes.runsc != null' >/dev/null; then
      if ! echo "$existing" | jq -e --argjson want "$entry" '.runtimes.runsc.runtimeArgs == $want.runtimeArgs' >/dev/null; then
        echo "error: $config already registers a runtime \"runsc\" with other arguments; the local runtime needs" \
          "runtimeArgs $RUNSC_ARGS (left as it is)" >&2
        exit 1
      fi
    fi
    tmp=$(echo "$existing" | jq --argjson e "$entry" '.runtimes.runsc = $e')
  else
    tmp=$(jq -n --argjson e "$entry" '{runtimes: {runsc: $e}}')
  fi
  echo "$tmp" | as_root tee "$config.sandboxes-new" >/dev/null
  as_root mv "$config.sandboxes-new" "$config"
  echo "==> registered gVisor as Docker runtime runsc in $config"
  if [ -n "$pid" ]; then
    as_root kill -HUP "$pid" # dockerd reloads its runtimes on SIGHUP
  fi
}

if [ "$runsc" = 1 ] && ! runsc_registered; then
  register_runsc
fi

if ! docker_answers; then
  echo "==> starting dockerd"
  log=${DOCKERD_LOG:-/tmp/sandboxes-dockerd.log}
  as_root sh -c "nohup dockerd >'$log' 2>&1 &"
  for _ in $(seq 1 60); do
    docker_answers && break
    sleep 1
  done
  if ! docker_answers; then
    echo "error: dockerd did not answer within 60 s; its log:" >&2
    tail -n 40 "$log" >&2 || true
    exit 1
  fi
fi
echo "==> docker engine is up"

if [ "$runsc" = 1 ]; then
  for _ in $(seq 1 20); do
    runsc_registered && break
    sleep 0.5
  done
  if ! runsc_registered; then
    echo "error: Docker does not list runtime runsc with runtimeArgs $RUNSC_ARGS after the reload; docker info says:" >&2
    docker info --format '{{json .Runtimes}}' >&2 || true
    exit 1
  fi
  echo "==> gVisor (runsc $(runsc --version 2>/dev/null | head -n 1 | awk '{print $3}')) is registered with Docker"
fi
