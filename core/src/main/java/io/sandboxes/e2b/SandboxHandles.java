package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxPausedException;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Json;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Makes {@link LiveSandbox} handles for an {@link E2BApi}: from the control plane's answer to a
 * create, connect or fork, or from a listing's row; says where each sandbox's daemon is reached,
 * and what a sandbox address that answered 502 means.
 */
final class SandboxHandles {
  private SandboxHandles() {}

  /** A handle from a sandbox record that carries its id, daemon token and domain. */
  static LiveSandbox handle(E2BApi api, JsonNode sandbox, String context) {
    String id;
    try {
      id = Json.requireText(sandbox, "sandboxID");
    } catch (IllegalArgumentException e) {
      throw new SandboxException(context + ": the answer names no sandbox: " + Json.abbreviate(sandbox), e);
    }
    String token = Json.text(sandbox, "envdAccessToken");
    String sandboxDomain = Json.text(sandbox, "domain");
    String effectiveDomain = sandboxDomain == null || sandboxDomain.isBlank() ? api.domain : sandboxDomain;
    Envd envd = new Envd(api.http, envdUrl(api.sandboxUrl, id, effectiveDomain), id, token,
        (what, message) -> unreachable(api, id, what, message));
    return new LiveSandbox(api, id, Json.text(sandbox, "templateID"), Json.text(sandbox, "envdVersion"), envd, effectiveDomain,
        Json.text(sandbox, "trafficAccessToken"));
  }

  /**
   * Explains a sandbox whose address answered 502: E2B's proxy says {@code "The sandbox was not
   * found"} for a killed sandbox and for a paused one alike (the local server says which), so the
   * control plane is asked. Paused is {@link SandboxPausedException}; gone is
   * {@link SandboxNotFoundException}; running (a proxy that lost its route for a moment) is a
   * plain {@link SandboxException}. When the control plane cannot be asked, the proxy's word
   * stands, with the failed look attached.
   */
  static RuntimeException unreachable(E2BApi api, String sandboxId, String what, String message) {
    SandboxInfo now;
    try {
      now = ApiAnswers.info(api.controlPlane.info(sandboxId));
    } catch (SandboxNotFoundException gone) {
      return new SandboxNotFoundException(sandboxId, message + "; the control plane has no such sandbox either");
    } catch (RuntimeException couldNotLook) {
      SandboxNotFoundException e = new SandboxNotFoundException(sandboxId, message);
      e.addSuppressed(couldNotLook);
      return e;
    }
    if (now.state() == SandboxState.PAUSED) {
      return new SandboxPausedException(sandboxId, what);
    }
    return new SandboxException(what + ": the sandbox's address answered HTTP 502 (" + message
        + ") while the control plane says it is " + now.state().name().toLowerCase(Locale.ROOT) + "; try again");
  }

  /**
   * Where a sandbox's pre-signed file URLs point, as the official SDK's direct envd URL: the
   * configured sandbox URL when there is one, else the per-sandbox host
   * {@code https://49983-<id>.<domain>} (a bare URL carries no routing header, so the shared
   * {@code sandbox.<domain>} host cannot serve it).
   */
  static URI directEnvdUrl(E2BApi api, String sandboxId, String sandboxDomain) {
    if (api.sandboxUrl != null) {
      return api.sandboxUrl;
    }
    return URI.create("https://" + Envd.PORT + "-" + sandboxId + "." + sandboxDomain);
  }

  /**
   * The domains E2B runs itself, where (as in the official SDKs) every sandbox's daemon is reached
   * at one shared host, {@code sandbox.<domain>}, routed by the {@code E2b-Sandbox-Id} header.
   */
  static final Set<String> E2B_DOMAINS = Set.of("e2b.app", "e2b.dev", "e2b.pro", "e2b-staging.dev");

  /**
   * Where a sandbox's daemon is reached: the configured sandbox URL when there is one; for E2B's
   * own domains the shared {@code https://sandbox.<domain>}; for any other domain (a self-hosted
   * E2B) the per-sandbox host {@code https://49983-<id>.<domain>}. Every request carries the
   * routing headers either way.
   */
  static URI envdUrl(@Nullable URI sandboxUrl, String sandboxId, String domain) {
    if (sandboxUrl != null) {
      return sandboxUrl;
    }
    if (E2B_DOMAINS.contains(domain)) {
      return URI.create("https://sandbox." + domain);
    }
    return URI.create("https://" + Envd.PORT + "-" + sandboxId + "." + domain);
  }

  /**
   * A handle to a sandbox a listing showed, made from the listing's row alone: nothing is asked
   * per sandbox, and no deadline moves. Its daemon's address and token are looked up when it is
   * first used ({@code GET /sandboxes/{id}}, which changes nothing); a sandbox gone or paused by
   * then makes that first call throw {@link SandboxNotFoundException} or
   * {@link SandboxPausedException}. Only when the record carries no daemon token (a server that
   * hands it out on connect alone) is the sandbox connected, asking for one second: connect only
   * ever extends a deadline, so a later one stays where it is.
   */
  static LiveSandbox listed(E2BApi api, SandboxInfo row) {
    String id = row.id();
    Envd envd = Envd.resolvedOnFirstUse(api.http, id, () -> listedAddress(api, id),
        (what, message) -> unreachable(api, id, what, message));
    return new LiveSandbox(api, id, row.templateId(), row.envdVersion(), envd, api.domain, LiveSandbox.NOT_TOLD);
  }

  /** Handles to the sandboxes the listing shows running, in its order; a row marked paused is skipped. */
  static List<io.sandboxes.Sandbox> listedRunning(E2BApi api) {
    List<SandboxInfo> rows = api.listAll(SandboxQuery.inState(SandboxState.RUNNING));
    List<io.sandboxes.Sandbox> out = new ArrayList<>(rows.size());
    for (SandboxInfo row : rows) {
      if (row.state() != SandboxState.PAUSED) {
        out.add(listed(api, row));
      }
    }
    return out;
  }

  private static Envd.Address listedAddress(E2BApi api, String sandboxId) {
    JsonNode detail = api.controlPlane.info(sandboxId);
    if ("paused".equals(Json.text(detail, "state"))) {
      throw new SandboxPausedException(sandboxId, "a call into sandbox " + sandboxId);
    }
    if (Json.text(detail, "envdAccessToken") == null) {
      detail = api.controlPlane.connect(sandboxId, 1);
    }
    String sandboxDomain = Json.text(detail, "domain");
    String effectiveDomain = sandboxDomain == null || sandboxDomain.isBlank() ? api.domain : sandboxDomain;
    return new Envd.Address(envdUrl(api.sandboxUrl, sandboxId, effectiveDomain), Json.text(detail, "envdAccessToken"));
  }

  /** The entries of a {@code ListDir} answer as the contract's {@link io.sandboxes.DirEntry} rows. */
  static List<io.sandboxes.DirEntry> dirEntries(List<EntryInfo> entries) {
    List<io.sandboxes.DirEntry> out = new ArrayList<>(entries.size());
    for (EntryInfo e : entries) {
      io.sandboxes.DirEntry.Type type = e.isSymlink() ? io.sandboxes.DirEntry.Type.SYMLINK
          : e.type() == FileType.DIR ? io.sandboxes.DirEntry.Type.DIRECTORY : io.sandboxes.DirEntry.Type.FILE;
      out.add(new io.sandboxes.DirEntry(e.name(), type, e.size(), e.symlinkTarget()));
    }
    return out;
  }

  /** The one fork asked for, or the reason it did not start; an answer with no entry is refused. */
  static LiveSandbox onlyFork(List<ForkResult> results, String sandboxId) {
    if (results.isEmpty()) {
      throw new SandboxException("fork sandbox " + sandboxId + ": the server answered with no fork");
    }
    return results.get(0).orThrow();
  }
}
