package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.local.internal.common.RpcError;
import org.jspecify.annotations.Nullable;

/**
 * The fields of E2B's create and network bodies that the local runtime cannot honour: each is
 * refused with a 400 naming it and why, never accepted and ignored. A field that asks for nothing
 * (absent, JSON null, an empty object or list, or E2B's default) passes.
 */
final class UnservedFields {
  private UnservedFields() {}

  /**
   * A create's own fields: {@code iam} (workload identity tokens, minted by E2B's cloud),
   * {@code mcp} (E2B's MCP gateway template) and {@code secure: false} (every local sandbox has
   * its envd access token).
   */
  static void create(@Nullable JsonNode iam, @Nullable JsonNode mcp, @Nullable JsonNode secure) throws RpcError {
    if (asks(iam)) {
      throw refused("iam", "workload identity tokens are minted by E2B's cloud, which the local runtime is not");
    }
    if (asks(mcp)) {
      throw refused("mcp", "the MCP gateway is E2B's cloud template; run an MCP server in a sandbox of your own instead");
    }
    if (secure != null && secure.isBoolean() && !secure.booleanValue()) {
      throw refused("secure", "false asks for a sandbox whose envd needs no access token; every local sandbox has one");
    }
  }

  /** A network policy's field, at create and on update: {@code httpsPorts} (the port proxy speaks plain HTTP). */
  static void network(@Nullable JsonNode httpsPorts) throws RpcError {
    if (asks(httpsPorts)) {
      throw refused("httpsPorts", "the local port proxy speaks plain HTTP to a sandbox's ports");
    }
  }

  /**
   * A template build's {@code minFreeDiskMb}: served when this server's disk limit per sandbox
   * gives at least that much (a sandbox's writable layer starts empty, its whole limit free),
   * refused when it asks for more or is negative.
   */
  static void build(@Nullable Long minFreeDiskMb, int diskSizeMB) throws RpcError {
    if (minFreeDiskMb == null) {
      return;
    }
    if (minFreeDiskMb < 0) {
      throw new RpcError("invalid_argument", "'minFreeDiskMb' must not be negative, got " + minFreeDiskMb);
    }
    if (minFreeDiskMb > diskSizeMB) {
      throw new RpcError("invalid_argument", "'minFreeDiskMb' of " + minFreeDiskMb + " MiB is more than the local runtime gives a"
          + " sandbox: each has " + diskSizeMB + " MiB of disk (the server's diskSizeMB, serve --disk-mb)");
    }
  }

  private static boolean asks(@Nullable JsonNode v) {
    return v != null && !v.isNull() && !(v.isContainerNode() && v.isEmpty()) && !(v.isBoolean() && !v.booleanValue());
  }

  private static RpcError refused(String field, String why) {
    return new RpcError("invalid_argument", "'" + field + "' is not supported by the local runtime: " + why);
  }
}
