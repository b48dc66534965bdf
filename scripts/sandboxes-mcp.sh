#!/usr/bin/env bash
# The MCP server over stdio: sandboxes as tools for an MCP client (a desktop assistant, an IDE).
#   scripts/sandboxes-mcp.sh [--provider local|e2b|auto] [--template NAME] [--allow-out DEST]...
#   SANDBOXES_MCP_TOKEN=... scripts/sandboxes-mcp.sh --http PORT    (streamable HTTP at /mcp)
# Point the client's server command at this script. It builds the runnable jar on first use
# (quietly, on stderr: stdout is the protocol's), starts Docker for the local provider, then runs
#   java -jar mcp/target/sandboxes-mcp-VERSION-all.jar "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh >&2
version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' pom.xml | head -n 1)
jar="mcp/target/sandboxes-mcp-$version-all.jar"
if [ ! -f "$jar" ]; then
  ./mvnw -B -ntp -q install -DskipTests -pl mcp -am >&2
fi
case " $* " in
  *" --provider e2b "*) ;;
  *) bash scripts/docker-up.sh >&2 ;;
esac
exec java -jar "$jar" "$@"
