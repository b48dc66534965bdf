package io.sandboxes.springai;

import io.sandboxes.dsl.SandboxToolkit;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;
import org.springframework.ai.tool.metadata.ToolMetadata;
import org.springframework.ai.tool.method.MethodToolCallbackProvider;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;

/**
 * Spring AI tools that give a model a Linux sandbox of its own per conversation: run a shell
 * command, run Python, read, write and list files. Register them with a {@code ChatClient}
 * ({@code .defaultToolCallbacks(tools.toolCallbacks())}, whose descriptions state the network
 * policy; or {@code .defaultTools(tools)}), and say which conversation a request
 * belongs to in its tool context, under {@link ChatMemory#CONVERSATION_ID} (the key Spring AI's
 * chat memory advisors use):
 *
 * {@snippet :
 * String answer = chatClient.prompt()
 *     .user("How many primes are below 10,000? Compute it.")
 *     .toolContext(Map.of(ChatMemory.CONVERSATION_ID, "alice"))
 *     .call().content();
 * }
 *
 * <p>A request without a conversation id shares the {@code "default"} conversation. The answers
 * are {@link SandboxToolkit}'s: compact text, failures as {@code error:} lines the model can act
 * on. The Spring Boot auto-configuration ({@link SandboxesAutoConfiguration}) makes one of these
 * as a bean; {@link #release} kills a conversation's sandbox, the bean's shutdown all of them.
 */
public final class SandboxSpringTools {
  /** What the fixed descriptions can say of the network: denials are the policy's. */
  static final String DENIALS = " A host the sandbox's network policy denies answers HTTP 403 or refuses the connection:"
      + " that is the policy, not a flaky network, so do not retry it.";

  private final SandboxToolkit toolkit;

  /**
   * Tools answering from a toolkit, which stays the caller's to close.
   *
   * @param toolkit what runs the calls
   */
  public SandboxSpringTools(SandboxToolkit toolkit) {
    this.toolkit = Objects.requireNonNull(toolkit, "toolkit");
  }

  /**
   * The five tools as Spring AI callbacks, as the auto-configuration registers them
   * ({@code ChatClient.builder(model).defaultToolCallbacks(tools.toolCallbacks())}): the
   * annotated methods, where {@code run_command}'s and {@code run_python}'s description states the
   * sandboxes' network policy ({@link SandboxToolkit#networkPolicy()}: closed, or which hosts it can
   * reach), so a denied host is not retried as a flaky network. ({@code .defaultTools(tools)}
   * works too, with the annotations' fixed descriptions.)
   *
   * @return the callbacks
   */
  public ToolCallback[] toolCallbacks() {
    String network = toolkit.networkPolicy();
    ToolCallback[] methods = MethodToolCallbackProvider.builder().toolObjects(this).build().getToolCallbacks();
    ToolCallback[] out = new ToolCallback[methods.length];
    for (int i = 0; i < methods.length; i++) {
      ToolCallback c = methods[i];
      ToolDefinition d = c.getToolDefinition();
      out[i] = !d.description().endsWith(DENIALS) ? c : new ToolCallback() {
        private final ToolDefinition described = ToolDefinition.builder().name(d.name()).inputSchema(d.inputSchema())
            .description(d.description().substring(0, d.description().length() - DENIALS.length()) + " " + network).build();

        @Override
        public ToolDefinition getToolDefinition() {
          return described;
        }

        @Override
        public ToolMetadata getToolMetadata() {
          return c.getToolMetadata();
        }

        @Override
        public String call(String toolInput) {
          return c.call(toolInput);
        }

        @Override
        public String call(String toolInput, @Nullable ToolContext toolContext) {
          return c.call(toolInput, toolContext);
        }
      };
    }
    return out;
  }

  /**
   * Runs a bash command line in the conversation's sandbox.
   *
   * @param command the command line
   * @param context the request's tool context, naming the conversation
   * @return the exit code and the output, or an {@code error:} line
   */
  @Tool(name = "run_command", resultConverter = TextResult.class, description = "Runs a bash command line in your own Linux sandbox (kept for this conversation: "
      + "files you write stay there) and returns its exit code, stdout and stderr. Long outputs are cut in the middle." + DENIALS)
  public String runCommand(@ToolParam(description = "the bash command line to run") String command, @Nullable ToolContext context) {
    return toolkit.runCommand(conversation(context), command);
  }

  /**
   * Runs a Python 3 program in the conversation's sandbox.
   *
   * @param code the program's source
   * @param context the request's tool context, naming the conversation
   * @return the exit code and the output, or an {@code error:} line
   */
  @Tool(name = "run_python", resultConverter = TextResult.class, description = "Runs a Python 3 program in your own Linux sandbox and returns its exit code, stdout "
      + "and stderr. Print what you want to see." + DENIALS)
  public String runPython(@ToolParam(description = "the Python 3 source code") String code, @Nullable ToolContext context) {
    return toolkit.runPython(conversation(context), code);
  }

  /**
   * Reads a text file from the conversation's sandbox.
   *
   * @param path the file's path
   * @param context the request's tool context, naming the conversation
   * @return the file's text, cut to the output limit, or an {@code error:} line
   */
  @Tool(name = "read_file", resultConverter = TextResult.class, description = "Reads a text file from your sandbox. Long files are cut in the middle.")
  public String readFile(@ToolParam(description = "the file's path") String path, @Nullable ToolContext context) {
    return toolkit.readFile(conversation(context), path);
  }

  /**
   * Writes a text file in the conversation's sandbox, making its folders.
   *
   * @param path the file's path
   * @param content the whole text of the file
   * @param context the request's tool context, naming the conversation
   * @return what was written, or an {@code error:} line
   */
  @Tool(name = "write_file", resultConverter = TextResult.class, description = "Writes a text file in your sandbox, replacing it if it exists and making missing folders.")
  public String writeFile(@ToolParam(description = "the file's path") String path,
      @ToolParam(description = "the whole text of the file") String content, @Nullable ToolContext context) {
    return toolkit.writeFile(conversation(context), path, content);
  }

  /**
   * Lists a folder of the conversation's sandbox.
   *
   * @param path the folder's path
   * @param context the request's tool context, naming the conversation
   * @return one line per entry, or an {@code error:} line
   */
  @Tool(name = "list_folder", resultConverter = TextResult.class, description = "Lists a folder of your sandbox: one line per entry, folders end with a slash.")
  public String listFolder(@ToolParam(description = "the folder's path") String path, @Nullable ToolContext context) {
    return toolkit.listFolder(conversation(context), path);
  }

  /**
   * Kills a conversation's sandbox, if it has one; its next tool call makes a new one.
   *
   * @param conversationId the conversation
   * @return whether it had one
   */
  public boolean release(String conversationId) {
    return toolkit.release(conversationId);
  }

  /**
   * The toolkit these tools answer from (conversations, sandbox ids).
   *
   * @return the toolkit
   */
  public SandboxToolkit toolkit() {
    return toolkit;
  }

  private static @Nullable Object conversation(@Nullable ToolContext context) {
    return context == null ? null : context.getContext().get(ChatMemory.CONVERSATION_ID);
  }
}
