package io.sandboxes.springai;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code sandboxes.*} properties of the Spring Boot auto-configuration.
 *
 * @param provider where sandboxes run: {@code local} (this machine's Docker), {@code e2b} (E2B's
 *     cloud or an E2B-compatible server, from {@code E2B_API_KEY}, {@code E2B_API_URL}, {@code
 *     E2B_SANDBOX_URL}) or {@code auto} (E2B when a key is set); {@code auto} by default
 * @param template the template each conversation's sandbox is made from; the provider's default
 * @param timeout how long a conversation's sandbox lives after its last call unless released; 30
 *     minutes by default
 * @param commandTimeout how long one command or program may run; 60 seconds by default
 * @param allowOut destinations sandboxes may reach; none by default (deny-by-default egress)
 * @param outputLimit the most characters of each output a tool answers; 4,000 by default
 */
@ConfigurationProperties("sandboxes")
public record SandboxesProperties(@Nullable Provider provider, @Nullable String template, @Nullable Duration timeout,
    @Nullable Duration commandTimeout, @Nullable List<String> allowOut, @Nullable Integer outputLimit) {

  /** Where sandboxes run. */
  public enum Provider {
    /** The local runtime, on this machine's Docker. */
    LOCAL,
    /** E2B's cloud, or an E2B-compatible server named by the environment. */
    E2B,
    /** E2B when {@code E2B_API_KEY} is set, the local runtime otherwise. */
    AUTO
  }
}
