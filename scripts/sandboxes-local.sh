#!/usr/bin/env bash
# The local runtime's command line, from this checkout:
#   scripts/sandboxes-local.sh serve [--port 3000] [--envd-port 49983] [--api-key KEY]
#   scripts/sandboxes-local.sh image build
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/docker-up.sh >&2
./mvnw -B -ntp -q install -DskipTests
exec ./mvnw -B -ntp -q -pl examples exec:exec -Dexample.main=io.sandboxes.local.Main -Dexample.args="$*"
