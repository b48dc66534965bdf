package io.sandboxes.springai;

import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.SandboxToolkit;
import io.sandboxes.dsl.Sandboxes;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Spring Boot auto-configuration: a {@link SandboxClient} for the configured provider, a {@link
 * SandboxToolkit}, the {@link SandboxSpringTools} bean and a {@link ToolCallbackProvider} of its
 * tools (which Spring AI's chat clients pick up), from the {@code sandboxes.*} properties ({@link
 * SandboxesProperties}). At shutdown every conversation's sandbox is killed, then the client is
 * closed (for the local provider, that stops the in-process server). Each bean gives way to one
 * the application defines.
 */
@AutoConfiguration
@EnableConfigurationProperties(SandboxesProperties.class)
public class SandboxesAutoConfiguration {
  /** Made by Spring. */
  public SandboxesAutoConfiguration() {}

  /**
   * The client for the configured provider.
   *
   * @param properties the {@code sandboxes.*} properties
   * @return the client, closed at shutdown
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public SandboxClient sandboxClient(SandboxesProperties properties) {
    SandboxesProperties.Provider p = properties.provider() == null ? SandboxesProperties.Provider.AUTO : properties.provider();
    return switch (p) {
      case LOCAL -> Sandboxes.local();
      case E2B -> Sandboxes.e2b();
      case AUTO -> Sandboxes.auto();
    };
  }

  /**
   * The toolkit, one sandbox per conversation.
   *
   * @param client where sandboxes run
   * @param properties the {@code sandboxes.*} properties
   * @return the toolkit, closed (its sandboxes killed) at shutdown
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public SandboxToolkit sandboxToolkit(SandboxClient client, SandboxesProperties properties) {
    SandboxToolkit.Builder b = SandboxToolkit.builder(client);
    if (properties.template() != null && !properties.template().isBlank()) {
      b.template(properties.template());
    }
    if (properties.timeout() != null) {
      b.sandboxTimeout(properties.timeout());
    }
    if (properties.commandTimeout() != null) {
      b.commandTimeout(properties.commandTimeout());
    }
    if (properties.outputLimit() != null) {
      b.outputLimit(properties.outputLimit());
    }
    if (properties.allowOut() != null) {
      b.allowOut(properties.allowOut().toArray(String[]::new));
    }
    return b.build();
  }

  /**
   * The tools.
   *
   * @param toolkit what runs them
   * @return the tools
   */
  @Bean
  @ConditionalOnMissingBean
  public SandboxSpringTools sandboxSpringTools(SandboxToolkit toolkit) {
    return new SandboxSpringTools(toolkit);
  }

  /**
   * The tools as Spring AI tool callbacks.
   *
   * @param tools the tools
   * @return a provider of their callbacks
   */
  @Bean
  @ConditionalOnMissingBean(name = "sandboxToolCallbacks")
  public ToolCallbackProvider sandboxToolCallbacks(SandboxSpringTools tools) {
    // the callbacks whose descriptions state the sandboxes' network policy
    return ToolCallbackProvider.from(tools.toolCallbacks());
  }
}
