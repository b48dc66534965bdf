package io.sandboxes.springai;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.model.tool.ToolCallingManager;
import org.springframework.ai.model.tool.ToolExecutionResult;

/**
 * A chat model that plays a script, and runs the tool calls it emits through Spring AI's
 * {@link ToolCallingManager} as Spring AI's own model integrations do. No language model is
 * reachable here, and none is pretended: the script is the test's.
 */
final class ScriptedChatModel implements ChatModel {
  private final List<Function<Prompt, AssistantMessage>> steps;
  private final ToolCallingManager tools = ToolCallingManager.builder().build();
  final List<Prompt> prompts = new ArrayList<>();

  @SafeVarargs
  ScriptedChatModel(Function<Prompt, AssistantMessage>... steps) {
    this.steps = List.of(steps);
  }

  @Override
  public ChatOptions getOptions() {
    return ToolCallingChatOptions.builder().build();
  }

  @Override
  public ChatResponse call(Prompt prompt) {
    Prompt current = prompt;
    while (true) {
      prompts.add(current);
      if (prompts.size() > steps.size()) {
        throw new AssertionError("the script has " + steps.size() + " turns; turn " + prompts.size() + " was asked for");
      }
      AssistantMessage said = steps.get(prompts.size() - 1).apply(current);
      ChatResponse response = new ChatResponse(List.of(new Generation(said)));
      if (!said.hasToolCalls()) {
        return response;
      }
      ToolExecutionResult result = tools.executeToolCalls(current, response);
      current = new Prompt(result.conversationHistory(), current.getOptions());
    }
  }

  /** A turn that calls tools. */
  static AssistantMessage calls(AssistantMessage.ToolCall... calls) {
    return AssistantMessage.builder().content("").toolCalls(List.of(calls)).build();
  }

  /** A tool call as a model emits it. */
  static AssistantMessage.ToolCall call(String tool, String argumentsJson) {
    return new AssistantMessage.ToolCall(UUID.randomUUID().toString(), "function", tool, argumentsJson);
  }

  /** A turn that answers. */
  static AssistantMessage says(String text) {
    return AssistantMessage.builder().content(text).build();
  }

  /** The tool results the last message of a prompt carries, in order. */
  static List<String> results(Prompt prompt) {
    List<Message> messages = prompt.getInstructions();
    Message last = messages.get(messages.size() - 1);
    if (!(last instanceof ToolResponseMessage r)) {
      throw new AssertionError("the last message is not tool results: " + last);
    }
    return r.getResponses().stream().map(ToolResponseMessage.ToolResponse::responseData).toList();
  }
}
