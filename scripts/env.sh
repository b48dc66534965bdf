#!/usr/bin/env bash
# Sourced by the other scripts: picks a JDK of version 21 or newer and exports JAVA_HOME.
# (The local runtime finds Docker itself: no Testcontainers switches are needed, and none are set,
# so every test runs as a user's program would.)
# Order: an existing JAVA_HOME that is new enough, then the newest JDK under /usr/lib/jvm.

java_major() {
  local v
  v=$("$1/bin/java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2; exit}')
  echo "${v%%.*}"
}

pick_jdk() {
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ] && [ "$(java_major "$JAVA_HOME")" -ge 21 ] 2>/dev/null; then
    echo "$JAVA_HOME"; return 0
  fi
  local best="" best_v=0 d v
  for d in /usr/lib/jvm/*/ /opt/java/*/ "$HOME"/.sdkman/candidates/java/*/; do
    d=${d%/}
    [ -x "$d/bin/javac" ] || continue
    v=$(java_major "$d" 2>/dev/null) || continue
    if [ -n "$v" ] && [ "$v" -ge 21 ] 2>/dev/null && [ "$v" -gt "$best_v" ]; then best=$d; best_v=$v; fi
  done
  [ -n "$best" ] || return 1
  echo "$best"
}

if ! JAVA_HOME=$(pick_jdk); then
  echo "error: no JDK 21 or newer found (set JAVA_HOME, or install one under /usr/lib/jvm)" >&2
  return 1 2>/dev/null || exit 1
fi
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"
