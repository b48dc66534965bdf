package io.sandboxes.local.internal.build;

/**
 * The names builds leave on Docker objects: the repositories a template's tags and builds are
 * tagged in, and the labels of its images, step images and step containers. The catalogue reads
 * a template back from them alone, so a restarted server finds what an earlier one built.
 */
public final class BuildLabels {
  private BuildLabels() {}

  /** Marks every image of the local runtime's making (the key the sandbox side marks its own with). */
  public static final String LABEL_OURS = "io.sandboxes.local";

  /**
   * A template's tags are its image's tags here: {@code <repository>:<template id>} is its {@code default}
   * tag, {@code <repository>:<template id>.<tag>} any other; each is moved by a build or an assignment
   * of that tag, removed by a delete. An image with none of them is no template's any more.
   */
  public static final String REPOSITORY = "sandboxes-local/template";
  /** Every finished build's image is also tagged here by its build id, so taking the registration tag off never waits on layer removal. */
  public static final String BUILD_REPOSITORY = "sandboxes-local/template-build";
  public static final String LABEL_TEMPLATE_ID = "io.sandboxes.template-id";
  public static final String LABEL_TEMPLATE_NAME = "io.sandboxes.template-name";
  public static final String LABEL_TEMPLATE_BUILD = "io.sandboxes.template-build";
  public static final String LABEL_TEMPLATE_CREATED = "io.sandboxes.template-created";
  /** A build's {@code <cpuCount>/<memoryMB>}. */
  public static final String LABEL_TEMPLATE_RESOURCES = "io.sandboxes.template-resources";
  /** The template's defaults for its sandboxes: {@code {env, workdir, user, startCmd, readyCmd}} as JSON. */
  public static final String LABEL_TEMPLATE_DEFAULTS = "io.sandboxes.template-defaults";
  public static final String LABEL_CACHE_KEY = "io.sandboxes.template-cache";
  /** The template whose build committed a step's image: removed with that template, or at once when the build fails. */
  public static final String LABEL_STEP_OF = "io.sandboxes.template-step-of";
  /** The server whose build committed a step's image: its next start removes those nothing is built on. */
  public static final String LABEL_STEP_SERVER = "io.sandboxes.template-step-server";
  /** The server that built a template's build (a test run removes what its servers built). */
  public static final String LABEL_BUILT_BY = "io.sandboxes.template-built-by";
  /** Marks a build step's container with the server that runs it; a restarted server removes its leftovers. */
  public static final String LABEL_BUILD_CONTAINER = "io.sandboxes.template-build-of";
}
