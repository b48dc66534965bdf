#!/usr/bin/env bash
# Restarts the local Docker engine for real, as a reboot or an upgrade does: systemd's docker
# service when systemd runs it, otherwise the dockerd process on this machine is stopped (SIGTERM:
# it stops its containers as it shuts down) and started again with the same command line, and
# the script waits for it to answer. Used by the Docker restart pass of scripts/test.sh
# (DockerRestartTest); never run it where other people's containers live.
set -euo pipefail

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}
docker_answers() {
  docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}
await_answer() {
  for _ in $(seq 1 120); do
    docker_answers && return 0
    sleep 0.5
  done
  echo "error: dockerd did not answer within 60 s after its restart" >&2
  return 1
}

if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker 2>/dev/null; then
  echo "==> restarting docker.service"
  as_root systemctl restart docker
  await_answer
  exit 0
fi

pid=$(pidof dockerd 2>/dev/null | awk '{print $1}' || true)
if [ -z "$pid" ]; then
  echo "error: no dockerd runs on this machine, so there is nothing to restart" >&2
  exit 1
fi
mapfile -d '' cmdline <"/proc/$pid/cmdline"
log=${DOCKERD_LOG:-/tmp/sandboxes-dockerd.log}
echo "==> stopping dockerd ($pid)"
as_root kill -TERM "$pid"
for _ in $(seq 1 120); do
  [ -d "/proc/$pid" ] || break
  sleep 0.5
done
if [ -d "/proc/$pid" ]; then
  echo "error: dockerd ($pid) did not stop within 60 s" >&2
  exit 1
fi
echo "==> starting dockerd again: ${cmdline[*]}"
# a session of its own: the engine outlives whatever ran this script (a test's JVM, a build)
as_root setsid sh -c 'nohup "$@" >>"$0" 2>&1 </dev/null &' "$log" "${cmdline[@]}"
await_answer
echo "==> docker engine is up again"
