package io.sandboxes.langchain4j;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolMemoryId;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.agent.tool.ToolSpecifications;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.service.memory.ChatMemoryAccess;
import dev.langchain4j.service.tool.DefaultToolExecutor;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.service.tool.ToolProvider;
import dev.langchain4j.service.tool.ToolProviderRequest;
import dev.langchain4j.service.tool.ToolProviderResult;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.SandboxToolkit;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * LangChain4j tools that give a model a Linux sandbox of its own per conversation: run a shell
 * command, run Python, read, write and list files. Hand an instance to {@code AiServices} as its
 * tool provider:
 *
 * {@snippet :
 * try (SandboxClient sandboxes = Sandboxes.local();
 *      SandboxTools tools = SandboxTools.builder(sandboxes).build()) {
 *   Assistant assistant = AiServices.builder(Assistant.class)
 *       .chatModel(model)
 *       .chatMemoryProvider(id -> MessageWindowChatMemory.builder().id(id).maxMessages(20)
 *           .chatMemoryStore(tools.releasingOnDelete(new InMemoryChatMemoryStore())).build())
 *       .toolProvider(tools)
 *       .build();
 *   assistant.chat("alice", "How many primes are below 10,000? Compute it.");
 * }
 * }
 *
 * <p>Each chat memory id gets its own sandbox, made on its first tool call, so two conversations
 * never see each other's files. A sandbox is killed when its conversation's messages are deleted
 * (a store wrapped by {@link #releasingOnDelete}: {@code ChatMemory.clear()} reaches it), when
 * the conversation is evicted through {@link #evict} (LangChain4j's own {@code evictChatMemory}
 * only drops the memory from its cache, keeping the messages, and tells nobody), when {@link
 * #release} is called, once its conversation has made no call for the sandbox timeout, and for
 * all of them at {@link #close}.
 * Without a memory id (an AI service with no chat memory) every call shares the {@code "default"}
 * conversation. The answers are {@link SandboxToolkit}'s: compact text, failures as {@code
 * error:} lines the model can act on.
 *
 * <p>As a {@link ToolProvider} ({@code .toolProvider(tools)}) the tools that reach the network
 * ({@code run_command}, {@code run_python}) describe the sandboxes' network policy to the model
 * ({@link SandboxToolkit#networkPolicy()}: closed, or which hosts it can reach), so a denied host
 * is not retried as a flaky network. {@code .tools(tools)} works too, with the annotations'
 * fixed descriptions, which can only say that denials are the policy's.
 */
public final class SandboxTools implements AutoCloseable, ToolProvider {
  /** What the fixed descriptions can say of the network: denials are the policy's. */
  static final String DENIALS = " A host the sandbox's network policy denies answers HTTP 403 or refuses the connection:"
      + " that is the policy, not a flaky network, so do not retry it.";

  private final SandboxToolkit toolkit;

  private SandboxTools(SandboxToolkit toolkit) {
    this.toolkit = toolkit;
  }

  /**
   * Starts tools whose sandboxes the given client makes; the client stays the caller's to close.
   *
   * @param client where the sandboxes run ({@code Sandboxes.local()}, {@code Sandboxes.e2b()}, ...)
   * @return a builder
   */
  public static Builder builder(SandboxClient client) {
    return new Builder(SandboxToolkit.builder(client));
  }

  /**
   * Runs a bash command line in the conversation's sandbox.
   *
   * @param memoryId the conversation
   * @param command the command line
   * @return the exit code and the output, or an {@code error:} line
   */
  @Tool(name = "run_command", value = "Runs a bash command line in your own Linux sandbox (kept for this conversation: files "
      + "you write stay there) and returns its exit code, stdout and stderr. Long outputs are cut in the middle." + DENIALS)
  public String runCommand(@ToolMemoryId @Nullable Object memoryId, @P(name = "command", value = "the bash command line to run") String command) {
    return toolkit.runCommand(memoryId, command);
  }

  /**
   * Runs a Python 3 program in the conversation's sandbox.
   *
   * @param memoryId the conversation
   * @param code the program's source
   * @return the exit code and the output, or an {@code error:} line
   */
  @Tool(name = "run_python", value = "Runs a Python 3 program in your own Linux sandbox and returns its exit code, stdout "
      + "and stderr. Print what you want to see." + DENIALS)
  public String runPython(@ToolMemoryId @Nullable Object memoryId, @P(name = "code", value = "the Python 3 source code") String code) {
    return toolkit.runPython(memoryId, code);
  }

  /**
   * Reads a text file from the conversation's sandbox.
   *
   * @param memoryId the conversation
   * @param path the file's path
   * @return the file's text, cut to the output limit, or an {@code error:} line
   */
  @Tool(name = "read_file", value = "Reads a text file from your sandbox. Long files are cut in the middle.")
  public String readFile(@ToolMemoryId @Nullable Object memoryId, @P(name = "path", value = "the file's path") String path) {
    return toolkit.readFile(memoryId, path);
  }

  /**
   * Writes a text file in the conversation's sandbox, making its folders.
   *
   * @param memoryId the conversation
   * @param path the file's path
   * @param content the whole text of the file
   * @return what was written, or an {@code error:} line
   */
  @Tool(name = "write_file", value = "Writes a text file in your sandbox, replacing it if it exists and making missing folders.")
  public String writeFile(@ToolMemoryId @Nullable Object memoryId, @P(name = "path", value = "the file's path") String path,
      @P(name = "content", value = "the whole text of the file") String content) {
    return toolkit.writeFile(memoryId, path, content);
  }

  /**
   * Lists a folder of the conversation's sandbox.
   *
   * @param memoryId the conversation
   * @param path the folder's path
   * @return one line per entry, or an {@code error:} line
   */
  @Tool(name = "list_folder", value = "Lists a folder of your sandbox: one line per entry, folders end with a slash.")
  public String listFolder(@ToolMemoryId @Nullable Object memoryId, @P(name = "path", value = "the folder's path") String path) {
    return toolkit.listFolder(memoryId, path);
  }

  /**
   * Kills the conversation's sandbox, if it has one; its next tool call makes a new one.
   *
   * @param memoryId the conversation
   * @return whether it had one
   */
  public boolean release(@Nullable Object memoryId) {
    return toolkit.release(memoryId);
  }

  /**
   * Evicts a conversation's chat memory from an AI service and kills its sandbox.
   *
   * @param service the AI service (its interface extends {@link ChatMemoryAccess})
   * @param memoryId the conversation
   * @return whether there was a memory or a sandbox to drop
   */
  public boolean evict(ChatMemoryAccess service, Object memoryId) {
    Objects.requireNonNull(service, "service");
    boolean evicted = service.evictChatMemory(memoryId);
    return release(memoryId) || evicted;
  }

  /**
   * A chat memory store that kills a conversation's sandbox when the conversation's messages are
   * deleted, as {@code ChatMemory.clear()} does; everything else goes to {@code store}.
   *
   * @param store where the messages are kept
   * @return the store that also releases sandboxes
   */
  public ChatMemoryStore releasingOnDelete(ChatMemoryStore store) {
    Objects.requireNonNull(store, "store");
    return new ChatMemoryStore() {
      @Override
      public List<ChatMessage> getMessages(Object memoryId) {
        return store.getMessages(memoryId);
      }

      @Override
      public void updateMessages(Object memoryId, List<ChatMessage> messages) {
        store.updateMessages(memoryId, messages);
      }

      @Override
      public void deleteMessages(Object memoryId) {
        try {
          store.deleteMessages(memoryId);
        } finally {
          release(memoryId);
        }
      }
    };
  }

  /**
   * The ids of the conversations that have a sandbox now.
   *
   * @return a snapshot of them
   */
  public List<Object> conversations() {
    return toolkit.conversations();
  }

  /**
   * The sandbox id of a conversation, if it has one: for a caller that wants to look inside.
   *
   * @param memoryId the conversation
   * @return its sandbox's id, or null
   */
  public @Nullable String sandboxId(@Nullable Object memoryId) {
    return toolkit.sandboxId(memoryId);
  }

  /**
   * The five tools for {@code AiServices.builder(...).toolProvider(tools)}: each one's
   * specification from its annotation, where {@code run_command}'s and {@code run_python}'s
   * description states the sandboxes' network policy ({@link SandboxToolkit#networkPolicy()}), and
   * an executor calling it with the conversation's memory id.
   *
   * @param request the AI service's request (unused: the tools are the same for every one)
   * @return the tools
   */
  @Override
  public ToolProviderResult provideTools(ToolProviderRequest request) {
    return new ToolProviderResult(tools());
  }

  /**
   * The specifications a model is sent for these tools as a {@link ToolProvider}, network policy
   * included: to show or log what the model sees.
   *
   * @return the five tools' specifications
   */
  public List<ToolSpecification> toolSpecifications() {
    return List.copyOf(tools().keySet());
  }

  private Map<ToolSpecification, ToolExecutor> tools() {
    Map<ToolSpecification, ToolExecutor> tools = new LinkedHashMap<>();
    for (Method m : SandboxTools.class.getMethods()) {
      Tool tool = m.getAnnotation(Tool.class);
      if (tool == null) {
        continue;
      }
      ToolSpecification spec = ToolSpecifications.toolSpecificationFrom(m);
      if (spec.description() != null && spec.description().endsWith(DENIALS)) {
        String fixed = spec.description().substring(0, spec.description().length() - DENIALS.length());
        spec = spec.toBuilder().description(fixed + " " + toolkit.networkPolicy()).build();
      }
      tools.put(spec, new DefaultToolExecutor(this, m));
    }
    return tools;
  }

  /** The toolkit these tools answer from. */
  SandboxToolkit toolkit() {
    return toolkit;
  }

  /** Kills every conversation's sandbox; tool calls after this answer an {@code error:} line. */
  @Override
  public void close() {
    toolkit.close();
  }

  /** Settings of {@link SandboxTools}: those of {@link SandboxToolkit.Builder}. */
  public static final class Builder {
    private final SandboxToolkit.Builder toolkit;

    private Builder(SandboxToolkit.Builder toolkit) {
      this.toolkit = toolkit;
    }

    /**
     * The template each conversation's sandbox is made from; the provider's default by default.
     *
     * @param template a template name or id
     * @return this
     */
    public Builder template(String template) {
      toolkit.template(template);
      return this;
    }

    /**
     * How long a conversation's sandbox lives after its last call, unless released first; 30
     * minutes by default.
     *
     * @param timeout positive
     * @return this
     */
    public Builder sandboxTimeout(Duration timeout) {
      toolkit.sandboxTimeout(timeout);
      return this;
    }

    /**
     * How long one command or program may run before it is stopped and reported as an error; 60
     * seconds by default.
     *
     * @param timeout positive
     * @return this
     */
    public Builder commandTimeout(Duration timeout) {
      toolkit.commandTimeout(timeout);
      return this;
    }

    /**
     * The most characters of each output stream or file a tool answers with; 4,000 by default.
     *
     * @param characters at least 100
     * @return this
     */
    public Builder outputLimit(int characters) {
      toolkit.outputLimit(characters);
      return this;
    }

    /**
     * Destinations the sandboxes may reach; none by default.
     *
     * @param destinations host names, addresses or CIDR ranges
     * @return this
     */
    public Builder allowOut(String... destinations) {
      toolkit.allowOut(destinations);
      return this;
    }

    /**
     * The tools so configured.
     *
     * @return new tools, with no sandbox made yet
     */
    public SandboxTools build() {
      return new SandboxTools(toolkit.build());
    }
  }
}
