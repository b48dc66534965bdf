#!/usr/bin/env bash
# The whole test suite, from a clean clone on a fresh machine: finds a JDK 21+, installs and
# starts Docker, builds the base image (once, with progress), then runs every module's tests
# against the real local server. The official-SDK conformance test needs node and npm (20.18+).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/docker-up.sh
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool is needed by the official-SDK conformance test" >&2; exit 1; }
done
echo "==> java: $("$JAVA_HOME/bin/java" -version 2>&1 | head -1), node: $(node --version)"
echo "==> building"
./mvnw -B -ntp -q install -DskipTests
echo "==> base image"
./mvnw -B -ntp -q -pl examples exec:exec -Dexample.main=io.sandboxes.local.Main -Dexample.args="image build"
echo "==> tests"
./mvnw -B -ntp verify "$@"
