package io.sandboxes.local.internal.build;

import io.sandboxes.local.internal.common.RpcError;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A build's start as its request asks for it: the base (an image or a template, exactly one of
 * them, checked by {@link TemplateService#start}), whether an image registry was named (which the
 * local runtime refuses), the steps, whether the step cache is bypassed, and the commands a
 * sandbox from the template runs at its start.
 *
 * @param fromImage the base image, or null
 * @param fromTemplate the base template, or null
 * @param fromImageRegistry whether the request named a registry to pull the base image from
 * @param steps the steps, in order
 * @param force whether every step bypasses the cache
 * @param startCmd the command a sandbox from the template starts, or null
 * @param readyCmd the command that says such a sandbox is ready, or null
 */
public record BuildStart(@Nullable String fromImage, @Nullable String fromTemplate, boolean fromImageRegistry, List<Step> steps,
    boolean force, @Nullable String startCmd, @Nullable String readyCmd) {

  /**
   * One step.
   *
   * @param type COPY, ENV, RUN, WORKDIR or USER (anything else is refused at the start); null when not given
   * @param args its arguments, as text
   * @param filesHash a COPY's uploaded files, or null
   * @param force whether this step bypasses the cache
   */
  public record Step(@Nullable String type, List<String> args, @Nullable String filesHash, boolean force) {}

  /**
   * Reads a start request once its build is known to be requested: an unknown build is not found
   * whatever its body, and the body's shape is refused after that.
   */
  @FunctionalInterface
  public interface Reader {
    /**
     * @return the start request
     * @throws RpcError invalid_argument for a body that does not fit
     */
    BuildStart read() throws RpcError;
  }
}
