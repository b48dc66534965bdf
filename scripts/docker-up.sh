#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine: installs Debian's docker.io when there is
# no daemon binary, starts dockerd in the background when nothing answers, and waits for it.
# Also installs debootstrap, which the local runtime uses to build its base image offline, and gcc
# with glibc's static libc, which the build uses for the in-sandbox daemon (daemon/build.sh).
set -euo pipefail

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

docker_answers() { docker info >/dev/null 2>&1; }

need_pkgs=()
# an engine that already answers (Docker Desktop, a remote DOCKER_HOST) needs no docker.io here
command -v dockerd >/dev/null 2>&1 || { command -v docker >/dev/null 2>&1 && docker_answers; } || need_pkgs+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_pkgs+=(debootstrap)
command -v gcc >/dev/null 2>&1 || need_pkgs+=(gcc)
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || need_pkgs+=(libc6-dev)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "==> installing ${need_pkgs[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

if docker_answers; then
  echo "==> docker engine is up"
  exit 0
fi

echo "==> starting dockerd"
log=${DOCKERD_LOG:-/tmp/sandboxes-dockerd.log}
as_root sh -c "nohup dockerd >'$log' 2>&1 &"
for _ in $(seq 1 60); do
  if docker_answers; then echo "==> docker engine is up"; exit 0; fi
  sleep 1
done
echo "error: dockerd did not answer within 60 s; its log:" >&2
tail -n 40 "$log" >&2 || true
exit 1
