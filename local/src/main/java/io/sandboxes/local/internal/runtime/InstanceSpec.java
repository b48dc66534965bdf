package io.sandboxes.local.internal.runtime;

import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What a sandbox's instance is made from, in terms any runtime can give.
 *
 * @param image the image it starts from
 * @param name its name in the runtime's own listings
 * @param labels what it records about itself (read back after a restart)
 * @param env its environment, as {@code NAME=value}
 * @param hostname its host name
 * @param cpuCount how many CPUs it may use
 * @param memoryBytes the most memory it may use
 * @param pidsLimit the most processes it may run
 * @param volumes volume id to where it is mounted in the sandbox
 * @param network the network it starts on, or null for none
 * @param diskQuotaMB the limit of its writable layer the runtime enforces, 0 for none
 */
public record InstanceSpec(String image, String name, Map<String, String> labels, List<String> env, String hostname, int cpuCount,
    long memoryBytes, long pidsLimit, Map<String, String> volumes, @Nullable String network, long diskQuotaMB) {}
