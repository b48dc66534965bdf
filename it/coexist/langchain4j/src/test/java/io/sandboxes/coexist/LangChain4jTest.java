package io.sandboxes.coexist;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.langchain4j.SandboxTools;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A LangChain4j AI service calls Sandboxes' tools the way it calls any: the tool call's JSON is
 * read by LangChain4j's own Jackson, the command runs in a sandbox, and the result goes back to the
 * model; in the same JVM as the sandboxes of {@link CoexistenceChecks}. The model plays a script
 * (no model is reachable here); the application's OpenAI model class is built, not called.
 */
class LangChain4jTest extends CoexistenceChecks {

  interface Assistant {
    String chat(String message);
  }

  @Test
  void anAiServiceRunsAToolCallInASandbox() {
    List<String> results = new ArrayList<>();
    ChatModel scripted = new ChatModel() {
      @Override
      public ChatResponse doChat(ChatRequest request) {
        if (!(request.messages().getLast() instanceof ToolExecutionResultMessage result)) {
          return ChatResponse.builder().aiMessage(AiMessage.from(ToolExecutionRequest.builder().id("1")
              .name("run_command").arguments("{\"command\": \"echo hi from a tool call\"}").build())).build();
        }
        results.add(result.text());
        return ChatResponse.builder().aiMessage(AiMessage.from("done")).build();
      }
    };
    try (SandboxClient sandboxes = Sandboxes.local(); SandboxTools tools = SandboxTools.builder(sandboxes).build()) {
      Assistant assistant = AiServices.builder(Assistant.class).chatModel(scripted).tools(tools).build();
      assertThat(assistant.chat("say hi from a sandbox")).isEqualTo("done");
    }
    assertThat(results).containsExactly("exit code: 0\nstdout:\nhi from a tool call\n");
  }

  @Test
  void theApplicationsModelProviderStillBuilds() {
    ChatModel model = OpenAiChatModel.builder().baseUrl("http://127.0.0.1:9/v1").apiKey("none").modelName("any").build();
    assertThat(model.provider().name()).isEqualTo("OPEN_AI");
  }
}
