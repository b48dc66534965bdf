package io.sandboxes.examples;

import io.sandboxes.dsl.SandboxToolkit;
import io.sandboxes.springai.SandboxSpringTools;
import io.sandboxes.springai.SandboxesAutoConfiguration;
import java.io.PrintStream;
import java.util.Map;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.env.MapPropertySource;

/**
 * Spring AI: the auto-configuration in an application context (provider {@code local}, an output
 * limit), the tool callbacks it offers a chat client, two conversations' tool calls as a chat
 * client makes them, and the context's shutdown, which kills both sandboxes. No language model
 * runs here: in an application, {@code ChatClient.builder(model).defaultToolCallbacks(...)} hands
 * these tools to one.
 *
 * <p>Run it with {@code scripts/run-examples.sh SpringAiTools}.
 */
public final class SpringAiTools {
  private SpringAiTools() {}

  public static void main(String[] args) {
    run(System.out);
  }

  static void run(PrintStream out) {
    try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
      context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("example",
          Map.of("sandboxes.provider", "local", "sandboxes.output-limit", "300")));
      context.register(SandboxesAutoConfiguration.class);
      context.refresh();
      for (ToolCallback c : context.getBean("sandboxToolCallbacks", ToolCallbackProvider.class).getToolCallbacks()) {
        out.println("tool callback " + c.getToolDefinition().name());
      }
      SandboxSpringTools tools = context.getBean(SandboxSpringTools.class);
      ToolContext alice = new ToolContext(Map.of(ChatMemory.CONVERSATION_ID, "alice"));
      ToolContext bob = new ToolContext(Map.of(ChatMemory.CONVERSATION_ID, "bob"));
      out.println(tools.writeFile("/home/user/todo.txt", "ship it", alice));
      out.println(tools.readFile("/home/user/todo.txt", alice));
      out.println(tools.readFile("/home/user/todo.txt", bob)); // bob's sandbox is not alice's
      out.println("conversations with a sandbox: " + context.getBean(SandboxToolkit.class).conversations().size());
    }
    out.println("context closed: every conversation's sandbox killed");
  }
}
