package io.sandboxes.coexist;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import tools.jackson.databind.ObjectMapper;

/**
 * The application's context starts with Sandboxes' Spring AI auto-configuration, a tool call
 * arrives as a model sends it (JSON, read by Spring AI's Jackson) and runs in a sandbox, and the
 * application's Jackson is the one Spring Boot 4 manages, in the same JVM as the sandboxes of
 * {@link CoexistenceChecks}.
 */
@SpringBootTest
class SpringBoot4Test extends CoexistenceChecks {

  @Autowired
  ObjectMapper mapper;

  @Autowired
  @Qualifier("sandboxToolCallbacks")
  ToolCallbackProvider tools;

  @Test
  void theApplicationKeepsTheJacksonItsParentChose() {
    assertThat(mapper.version().toString()).isEqualTo(System.getProperty("coexist.jackson"));
    assertThat(mapper.writeValueAsString(Map.of("coexists", true))).isEqualTo("{\"coexists\":true}");
  }

  @Test
  void theAutoConfiguredToolsRunAToolCallInASandbox() {
    ToolCallback runCommand = Arrays.stream(tools.getToolCallbacks())
        .filter(t -> t.getToolDefinition().name().equals("run_command")).findFirst().orElseThrow();
    String answer = runCommand.call("{\"command\": \"echo hi from a tool call\"}",
        new ToolContext(Map.of(ChatMemory.CONVERSATION_ID, "coexist")));
    assertThat(answer).contains("exit code: 0").contains("hi from a tool call");
  }
}
