package io.sandboxes.local.internal.docker;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.ContainerNetwork;
import com.github.dockerjava.api.model.Network;
import io.sandboxes.local.internal.runtime.InstanceLabels;
import io.sandboxes.local.internal.runtime.NetworkAttachments;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Network attachments on Docker: a bridge is a Docker bridge network (inter-container traffic
 * disabled), an instance's namespace is its container's init process, and a network change goes
 * through {@link DockerRuntime#changingNetworks} so it never meets a container's start or removal.
 */
public final class DockerNetworkAttachments implements NetworkAttachments {
  private final DockerRuntime docker;

  /** @param docker the engine the sandboxes run on */
  public DockerNetworkAttachments(DockerRuntime docker) {
    this.docker = docker;
  }

  @Override
  public Bridge ensureBridge(String name) {
    List<Network> existing = docker.client().listNetworksCmd().withNameFilter(name).exec();
    Network net = existing.stream().filter(n -> name.equals(n.getName())).findFirst().orElse(null);
    if (net == null) {
      try {
        docker.client().createNetworkCmd().withName(name).withDriver("bridge")
            .withLabels(Map.of(InstanceLabels.OURS, "true"))
            .withOptions(Map.of("com.docker.network.bridge.enable_icc", "false"))
            .exec();
      } catch (com.github.dockerjava.api.exception.ConflictException raced) {
        // another server made it meanwhile
      }
    }
    Network inspected = docker.client().inspectNetworkCmd().withNetworkId(name).exec();
    Network.Ipam.Config config = inspected.getIpam().getConfig().get(0);
    return new Bridge(inspected.getName(), config.getGateway(), config.getSubnet(), bridgeOf(inspected));
  }

  /** The host's bridge device for a Docker bridge network: named by its options, else {@code br-} and the id's first 12. */
  private static String bridgeOf(Network net) {
    String named = net.getOptions() == null ? null : net.getOptions().get("com.docker.network.bridge.name");
    return named != null && !named.isEmpty() ? named : "br-" + net.getId().substring(0, 12);
  }

  @Override
  public Attachment attachment(String instanceId) {
    InspectContainerResponse info = docker.client().inspectContainerCmd(instanceId).exec();
    Map<String, ContainerNetwork> nets = info.getNetworkSettings().getNetworks();
    Map<String, String> addresses = new HashMap<>();
    if (nets != null) {
      nets.forEach((name, n) -> {
        if (n != null && n.getIpAddress() != null) {
          addresses.put(name, n.getIpAddress());
        }
      });
    }
    return new Attachment(info.getState().getPidLong(), nets == null ? Set.of() : nets.keySet(), addresses);
  }

  @Override
  public void connect(String instanceId, String network) {
    DockerRuntime.changingNetworks(() ->
        docker.client().connectToNetworkCmd().withContainerId(instanceId).withNetworkId(network).exec());
  }

  @Override
  public void disconnect(String instanceId, String network, boolean force) {
    DockerRuntime.changingNetworks(() ->
        docker.client().disconnectFromNetworkCmd().withContainerId(instanceId).withNetworkId(network).withForce(force).exec());
  }

  @Override
  public String isolatedNetwork() {
    return "none";
  }

  @Override
  public String isolatedHostAddress() {
    return DockerRuntime.NO_NETWORK_HOST_ADDRESS;
  }
}
