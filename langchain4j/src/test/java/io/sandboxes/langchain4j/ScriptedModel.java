package io.sandboxes.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;

/**
 * A chat model that plays a script, as a model that calls tools would: each turn gets the
 * request it is sent (tool results included) and answers the next step. No language model is
 * reachable here, and none is pretended: the script is the test's.
 */
final class ScriptedModel implements ChatModel {
  private final List<Function<ChatRequest, AiMessage>> steps;
  final List<ChatRequest> requests = new ArrayList<>();

  @SafeVarargs
  ScriptedModel(Function<ChatRequest, AiMessage>... steps) {
    this.steps = List.of(steps);
  }

  @Override
  public ChatResponse doChat(ChatRequest request) {
    requests.add(request);
    if (requests.size() > steps.size()) {
      throw new AssertionError("the script has " + steps.size() + " turns; turn " + requests.size() + " was asked for");
    }
    return ChatResponse.builder().aiMessage(steps.get(requests.size() - 1).apply(request)).build();
  }

  /** A tool call as a model emits it. */
  static ToolExecutionRequest call(String tool, String argumentsJson) {
    return ToolExecutionRequest.builder().id(UUID.randomUUID().toString()).name(tool).arguments(argumentsJson).build();
  }

  /** The tool results a request carries since the model's last message, in order. */
  static List<String> results(ChatRequest request) {
    List<String> out = new ArrayList<>();
    List<ChatMessage> messages = request.messages();
    for (int i = messages.size() - 1; i >= 0 && messages.get(i) instanceof ToolExecutionResultMessage r; i--) {
      out.add(0, r.text());
    }
    return out;
  }
}
