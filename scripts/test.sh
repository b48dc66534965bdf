#!/usr/bin/env bash
# The whole test suite, from a clean clone on a fresh machine: finds a JDK 21+, installs and
# starts Docker, builds the base image and the code interpreter's (once, with progress), then runs every module's tests
# against the real local server. The official-SDK conformance test needs node and npm (20.18+).
# Then the gVisor pass: the contract and security tests again with every sandbox on runsc, which
# docker-up.sh installs and registers with the local dockerd (SANDBOXES_GVISOR=0 skips both, e.g.
# where the engine is not a dockerd on this machine). On CI, the Docker restart pass: paused
# sandboxes through a real restart of dockerd (SANDBOXES_DOCKER_RESTART=1 runs it elsewhere).
# Last, it builds it/consumer, a user's project outside the reactor, once per supported JUnit line,
# and each project of it/coexist: a user's project that already has Testcontainers 1.x, a Spring
# Boot 3.5 or 4 parent, or LangChain4j, and adds Sandboxes with nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
user_path=$PATH # the caller's own, before env.sh puts the JDK it picked in front
source scripts/env.sh
gvisor=${SANDBOXES_GVISOR:-1}
if [ "$gvisor" = 1 ]; then
  bash scripts/docker-up.sh --runsc
else
  bash scripts/docker-up.sh
fi
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool is needed by the official-SDK conformance test" >&2; exit 1; }
done
echo "==> java: $("$JAVA_HOME/bin/java" -version 2>&1 | head -1), node: $(node --version)"
echo "==> building"
./mvnw -B -ntp -q install -DskipTests
echo "==> base image and the code interpreter's (code-interpreter-v1; built once per machine)"
image_started=$SECONDS
./mvnw -B -ntp -q -pl examples exec:exec -Dexample.main=io.sandboxes.local.Main -Dexample.args="image build code-interpreter-v1"
echo "==> images ready in $((SECONDS - image_started)) s"
echo "==> tests"
./mvnw -B -ntp verify "$@"

gvisor_failed=0
if [ "$gvisor" = 1 ]; then
  echo "==> the gVisor pass: contract and security tests, every sandbox on runsc"
  gvisor_started=$SECONDS
  ./mvnw -B -ntp verify -pl local -Pgvisor || gvisor_failed=1
  echo "==> the gVisor pass $([ "$gvisor_failed" = 0 ] && echo passed || echo FAILED) in $((SECONDS - gvisor_started)) s"
else
  echo "==> the gVisor pass: skipped (SANDBOXES_GVISOR=0)"
fi

# The Docker restart pass: paused sandboxes through a real restart of the machine's dockerd. It
# stops every container on the machine, so it runs on CI (CI=true) and where
# SANDBOXES_DOCKER_RESTART=1 asks for it, never by surprise on a developer's machine.
restart_failed=0
if [ "${SANDBOXES_DOCKER_RESTART:-$([ "${CI:-}" = true ] && echo 1 || echo 0)}" = 1 ]; then
  echo "==> the Docker restart pass: paused sandboxes through a real restart of dockerd"
  ./mvnw -B -ntp verify -pl local -Dtest=DockerRestartTest -Dsurefire.failIfNoSpecifiedTests=false \
    -Dsandboxes.test.restart-docker=true || restart_failed=1
else
  echo "==> the Docker restart pass: skipped (it restarts this machine's dockerd; SANDBOXES_DOCKER_RESTART=1 runs it)"
fi

# it/consumer against the artifacts installed above, as a user's build sees them. env -i: none of
# the variables env.sh or this machine set reach it; PATH and HOME
# are the user's own, and JAVA_HOME stays because it is how mvnw finds a JDK 21+ (without it,
# mvnw runs the first java on PATH, which can be older).
project_version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' pom.xml | head -n 1)
newest_junit=$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' pom.xml | head -n 1)
oldest_junit=5.10.3 # the oldest JUnit Jupiter sandboxes-junit supports (README, "Tests: @E2BSandbox")
[ -n "$project_version" ] && [ -n "$newest_junit" ] || { echo "error: cannot read the project's version or junit.version from pom.xml" >&2; exit 1; }
consumer_failed=0
summaries=()
# consumer_build LABEL POM [MAVEN ARGS...]: one user's project, built in a clean environment
consumer_build() {
  local label=$1 pom=$2
  shift 2
  echo "==> $label, in a clean environment"
  local log started status summary
  log=$(mktemp)
  started=$SECONDS
  status=0
  env -i PATH="$user_path" HOME="$HOME" JAVA_HOME="$JAVA_HOME" \
    ./mvnw -B -ntp -f "$pom" verify -Dsandboxes.version="$project_version" "$@" \
    2>&1 | tee "$log" || status=$?
  summary=$(grep -E '^\[[A-Z]+\] Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' "$log" | tail -n 1 | sed 's/^\[[A-Z]*\] //' || true)
  rm -f "$log"
  if [ "$status" -eq 0 ] && ! [[ $summary =~ ^Tests\ run:\ [1-9] ]]; then
    status=1 # a build that ran no test proves nothing
  fi
  [ "$status" -eq 0 ] || consumer_failed=1
  summaries+=("$label: ${summary:-no tests ran} ($((SECONDS - started)) s)$([ "$status" -eq 0 ] || echo ", FAILED")")
}
for junit in "$oldest_junit" "$newest_junit"; do
  consumer_build "it/consumer on JUnit Jupiter $junit" it/consumer/pom.xml -Djunit.version="$junit"
done
for pom in it/coexist/*/pom.xml; do
  consumer_build "$(dirname "$pom")" "$pom"
done
echo "==> consumer projects"
printf '    %s\n' "${summaries[@]}"
[ "$gvisor_failed" = 0 ] || echo "the gVisor pass FAILED (see above)" >&2
[ "$restart_failed" = 0 ] || echo "the Docker restart pass FAILED (see above)" >&2
[ "$consumer_failed" = 0 ] && [ "$gvisor_failed" = 0 ] && [ "$restart_failed" = 0 ]
