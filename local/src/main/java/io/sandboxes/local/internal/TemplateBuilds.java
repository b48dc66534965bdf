package io.sandboxes.local.internal;

import io.sandboxes.local.internal.runtime.InstanceLabels;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.build.TemplateService;
import io.sandboxes.local.internal.runtime.BuildRuntime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * Templates built through E2B's v2 build protocol, under the name the server's HTTP layer and
 * {@code LocalServer} know them by. The work is the build package's ({@link TemplateService} and
 * its collaborators); this class adds nothing, so its callers' names ({@code TemplateBuilds.Built},
 * {@code TemplateBuilds.MAX_UPLOAD}, ...) keep resolving while they move to the build package's.
 * It hands the build package its runtime (Docker's today), tells it which
 * sandbox-side labels a build image must not carry, and runs a template's start and ready
 * commands in its sandboxes ({@link TemplateStartCommands}).
 */
public final class TemplateBuilds extends TemplateService {
  /**
   * @param runtime what build steps run on and images are kept in (its steps on the builds' own
   *     network, behind the host firewall, when egress is enforced)
   * @param files where uploads are kept (what a previous run left there is removed)
   * @param budgetMB what one build's COPY archives may expand to, in MiB; all uploads together
   *     may hold as much
   */
  public TemplateBuilds(BuildRuntime runtime, Templates templates, Path files, String serverId, String baseImage,
      long budgetMB) {
    super(runtime, templates, files, serverId, baseImage, budgetMB,
        Set.of(Templates.LABEL_SNAPSHOT_ID, InstanceLabels.SANDBOX_ID, InstanceLabels.ENVD_TOKEN, WarmPool.LABEL_POOL,
            Registry.LABEL_FORK_OF, Registry.LABEL_FORK_IMAGE));
  }

  /**
   * Deletes a built template, every build of it.
   *
   * @return false when there is no such template
   * @throws RpcError already_exists when a sandbox was created from it
   */
  public boolean delete(String idOrName, List<LocalSandbox> sandboxes) throws RpcError {
    return deleteUnlessUsed(idOrName, sandboxes.stream().map(s -> new SandboxUse(s.id(), s.templateId(), s.paused())).toList());
  }

  /** How long a sandbox of a template with a {@code readyCmd} may take to become ready. */
  public static final Duration READY_LIMIT = TemplateStartCommands.READY_LIMIT;

  /**
   * Runs a built template's {@code startCmd} in the background of a new sandbox, as the template's
   * user in its workdir, then its {@code readyCmd} until that exits 0.
   *
   * @throws RpcError when the start command cannot start, or the sandbox is not ready within {@link #READY_LIMIT}
   */
  public void startCommands(LocalSandbox s, Defaults d) throws RpcError {
    TemplateStartCommands.run(s, d);
  }
}
