#!/usr/bin/env bash
# The main job: runs the examples against the local runtime (Docker on this machine).
#   scripts/run-examples.sh                 the tour of every example
#   scripts/run-examples.sh Hello           one example (a class in io.sandboxes.examples)
#   scripts/run-examples.sh bench.LocalBench 10 100
# Installs and starts what it needs: a JDK 21+ is found, Docker is installed and started, the
# base image is built on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/docker-up.sh
example=${1:-Tour}
shift || true
echo "==> building"
./mvnw -B -ntp -q install -DskipTests
echo "==> running io.sandboxes.examples.$example"
exec ./mvnw -B -ntp -q -pl examples exec:exec -Dexample.main="io.sandboxes.examples.$example" -Dexample.args="$*"
