package io.sandboxes.langchain4j;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolMemoryId;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.service.memory.ChatMemoryAccess;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import io.sandboxes.DirEntry;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.SandboxException;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.SandboxRequest;
import io.sandboxes.e2b.LiveSandbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * LangChain4j tools that give a model a Linux sandbox of its own per conversation: run a shell
 * command, run Python, read, write and list files. Hand an instance to {@code AiServices}:
 *
 * {@snippet :
 * try (SandboxClient sandboxes = Sandboxes.local();
 *      SandboxTools tools = SandboxTools.builder(sandboxes).build()) {
 *   Assistant assistant = AiServices.builder(Assistant.class)
 *       .chatModel(model)
 *       .chatMemoryProvider(id -> MessageWindowChatMemory.builder().id(id).maxMessages(20)
 *           .chatMemoryStore(tools.releasingOnDelete(new InMemoryChatMemoryStore())).build())
 *       .tools(tools)
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
 * #release} is called, when its sandbox timeout passes, and for all of them at {@link #close}.
 * Without a memory id (an AI service with no chat memory) every call shares the {@code "default"}
 * conversation.
 *
 * <p>Every tool answers text: a command's exit code and its output, each stream cut to the
 * output limit with a marker giving its full length; a failure (a file that is not there, a
 * command over its time, a sandbox that could not be made) as a line starting {@code error:}, so
 * the model can act on it and the conversation goes on. Egress is whatever the client's sandboxes
 * get: nothing at all on the local runtime unless {@link Builder#allowOut} says otherwise.
 */
public final class SandboxTools implements AutoCloseable {
  /** The memory id of calls made without one. */
  public static final String DEFAULT_CONVERSATION = "default";

  private final SandboxClient client;
  private final @Nullable String template;
  private final Duration sandboxTimeout;
  private final Duration commandTimeout;
  private final int outputLimit;
  private final List<String> allowOut;
  private final Map<Object, LiveSandbox> sandboxes = new ConcurrentHashMap<>();
  private final AtomicBoolean closed = new AtomicBoolean();

  private SandboxTools(Builder b) {
    this.client = b.client;
    this.template = b.template;
    this.sandboxTimeout = b.sandboxTimeout;
    this.commandTimeout = b.commandTimeout;
    this.outputLimit = b.outputLimit;
    this.allowOut = List.copyOf(b.allowOut);
  }

  /**
   * Starts tools whose sandboxes the given client makes; the client stays the caller's to close.
   *
   * @param client where the sandboxes run ({@code Sandboxes.local()}, {@code Sandboxes.e2b()}, ...)
   * @return a builder
   */
  public static Builder builder(SandboxClient client) {
    return new Builder(Objects.requireNonNull(client, "client"));
  }

  /**
   * Runs a bash command line in the conversation's sandbox.
   *
   * @param memoryId the conversation
   * @param command the command line
   * @return the exit code and the output, or an {@code error:} line
   */
  @Tool(name = "run_command", value = "Runs a bash command line in your own Linux sandbox (kept for this conversation: files "
      + "you write stay there) and returns its exit code, stdout and stderr. Long outputs are cut in the middle.")
  public String runCommand(@ToolMemoryId @Nullable Object memoryId, @P(name = "command", value = "the bash command line to run") String command) {
    return guarded(() -> ToolText.result(sandbox(memoryId).exec(command, options()), outputLimit));
  }

  /**
   * Runs a Python 3 program in the conversation's sandbox.
   *
   * @param memoryId the conversation
   * @param code the program's source
   * @return the exit code and the output, or an {@code error:} line
   */
  @Tool(name = "run_python", value = "Runs a Python 3 program in your own Linux sandbox and returns its exit code, stdout "
      + "and stderr. Print what you want to see.")
  public String runPython(@ToolMemoryId @Nullable Object memoryId, @P(name = "code", value = "the Python 3 source code") String code) {
    return guarded(() -> ToolText.result(python(memoryId, code), outputLimit));
  }

  /** Runs a Python program from a file of its own, removed after; failures are exceptions. */
  ExecResult python(@Nullable Object memoryId, String code) {
    LiveSandbox s = sandbox(memoryId);
    String path = "/tmp/tool-" + UUID.randomUUID() + ".py";
    s.writeBytes(path, code.getBytes(StandardCharsets.UTF_8));
    return s.exec("python3 " + path + "; status=$?; rm -f " + path + "; exit $status", options());
  }

  int outputLimit() {
    return outputLimit;
  }

  /**
   * Reads a text file from the conversation's sandbox.
   *
   * @param memoryId the conversation
   * @param path the file's absolute path, or one relative to the user's home
   * @return the file's text, cut to the output limit, or an {@code error:} line
   */
  @Tool(name = "read_file", value = "Reads a text file from your sandbox. Long files are cut in the middle.")
  public String readFile(@ToolMemoryId @Nullable Object memoryId, @P(name = "path", value = "the file's path") String path) {
    return guarded(() -> ToolText.bounded(sandbox(memoryId).readFile(path), outputLimit));
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
    return guarded(() -> {
      byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
      sandbox(memoryId).writeBytes(path, bytes);
      return "wrote " + bytes.length + " bytes to " + path;
    });
  }

  /**
   * Lists a folder of the conversation's sandbox.
   *
   * @param memoryId the conversation
   * @param path the folder's path
   * @return one line per entry (name, and a trailing slash for folders, or its size), or an
   *     {@code error:} line
   */
  @Tool(name = "list_folder", value = "Lists a folder of your sandbox: one line per entry, folders end with a slash.")
  public String listFolder(@ToolMemoryId @Nullable Object memoryId, @P(name = "path", value = "the folder's path") String path) {
    return guarded(() -> {
      List<String> lines = new ArrayList<>();
      for (DirEntry e : sandbox(memoryId).readDir(path)) {
        lines.add(e.type() == DirEntry.Type.DIRECTORY ? e.name() + "/" : e.size() == null ? e.name() : e.name() + " (" + e.size() + " bytes)");
      }
      return lines.isEmpty() ? "(empty)" : ToolText.bounded(String.join("\n", lines), outputLimit);
    });
  }

  /**
   * Kills the conversation's sandbox, if it has one; its next tool call makes a new one.
   *
   * @param memoryId the conversation
   * @return whether it had one
   */
  public boolean release(@Nullable Object memoryId) {
    LiveSandbox s = sandboxes.remove(key(memoryId));
    if (s == null) {
      return false;
    }
    s.close();
    return true;
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
   * deleted, as {@code AiServices}' {@code evictChatMemory} and {@code ChatMemory.clear()} do;
   * everything else goes to {@code store}.
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
    return List.copyOf(sandboxes.keySet());
  }

  /**
   * The sandbox id of a conversation, if it has one: for a caller that wants to look inside.
   *
   * @param memoryId the conversation
   * @return its sandbox's id, or null
   */
  public @Nullable String sandboxId(@Nullable Object memoryId) {
    LiveSandbox s = sandboxes.get(key(memoryId));
    return s == null ? null : s.id();
  }

  /** Kills every conversation's sandbox; tool calls after this answer an {@code error:} line. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      RuntimeException first = null;
      for (Object id : List.copyOf(sandboxes.keySet())) {
        try {
          release(id);
        } catch (RuntimeException e) {
          if (first == null) {
            first = e;
          }
        }
      }
      if (first != null) {
        throw first;
      }
    }
  }

  private ExecOptions options() {
    return ExecOptions.defaults().withTimeout(commandTimeout);
  }

  private static Object key(@Nullable Object memoryId) {
    return memoryId == null ? DEFAULT_CONVERSATION : memoryId;
  }

  private LiveSandbox sandbox(@Nullable Object memoryId) {
    if (closed.get()) {
      throw new SandboxException("these sandbox tools are closed");
    }
    LiveSandbox s = sandboxes.computeIfAbsent(key(memoryId), k -> {
      SandboxRequest r = client.sandbox().timeout(sandboxTimeout).metadata("conversation", String.valueOf(k));
      if (template != null) {
        r = r.template(template);
      }
      if (!allowOut.isEmpty()) {
        r = r.allowOut(allowOut.toArray(String[]::new));
      }
      return r.create();
    });
    if (closed.get()) { // closed while this one was made: it must not outlive close()
      release(memoryId);
      throw new SandboxException("these sandbox tools are closed");
    }
    return s;
  }

  private String guarded(java.util.function.Supplier<String> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return ToolText.failure(e, outputLimit);
    }
  }

  /** Settings of {@link SandboxTools}. */
  public static final class Builder {
    private final SandboxClient client;
    private @Nullable String template;
    private Duration sandboxTimeout = Duration.ofMinutes(30);
    private Duration commandTimeout = Duration.ofSeconds(60);
    private int outputLimit = 4_000;
    private final List<String> allowOut = new ArrayList<>();

    private Builder(SandboxClient client) {
      this.client = client;
    }

    /**
     * The template each conversation's sandbox is made from; the provider's default by default.
     *
     * @param template a template name or id
     * @return this
     */
    public Builder template(String template) {
      this.template = Objects.requireNonNull(template, "template");
      return this;
    }

    /**
     * How long a conversation's sandbox lives without being released; 30 minutes by default.
     *
     * @param timeout positive
     * @return this
     */
    public Builder sandboxTimeout(Duration timeout) {
      this.sandboxTimeout = positive(timeout, "sandboxTimeout");
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
      this.commandTimeout = positive(timeout, "commandTimeout");
      return this;
    }

    /**
     * The most characters of each output stream or file a tool answers with; the rest is cut in
     * the middle, with a marker giving the full length. 4,000 by default.
     *
     * @param characters at least 100
     * @return this
     */
    public Builder outputLimit(int characters) {
      if (characters < 100) {
        throw new IllegalArgumentException("outputLimit must be at least 100 characters, got " + characters);
      }
      this.outputLimit = characters;
      return this;
    }

    /**
     * Destinations the sandboxes may reach (host names, addresses or CIDR ranges, as {@link
     * SandboxRequest#allowOut} takes them); none by default.
     *
     * @param destinations what to allow
     * @return this
     */
    public Builder allowOut(String... destinations) {
      allowOut.addAll(List.of(destinations));
      return this;
    }

    /**
     * The tools so configured.
     *
     * @return new tools, with no sandbox made yet
     */
    public SandboxTools build() {
      return new SandboxTools(this);
    }

    private static Duration positive(Duration d, String what) {
      Objects.requireNonNull(d, what);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be positive, got " + d);
      }
      return d;
    }
  }
}
