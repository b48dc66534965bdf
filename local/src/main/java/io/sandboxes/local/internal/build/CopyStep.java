package io.sandboxes.local.internal.build;

import io.sandboxes.local.internal.runtime.BuildRuntime;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import org.jspecify.annotations.Nullable;

/**
 * A COPY step: its uploaded context checked against its hash and re-packed ({@link CopyArchive},
 * on the CPU pool), put into a step and placed there by {@link #COPY_SCRIPT}.
 */
final class CopyStep {
  /** Where COPY stages its files in the step before placing them. */
  static final String STAGE = "/.sandboxes-copy";

  /**
   * Places staged COPY files ({@code $0} user, {@code $1} mode, then the targets): owned by the
   * user (and given the mode), directories COPY has to make owned by the user too, existing ones
   * left as they are, and the stage removed.
   */
  static final String COPY_SCRIPT = String.join("\n",
      "u=\"$0\"; m=\"$1\"; shift",
      "mk() { [ -e \"$1\" ] || { mk \"$(dirname \"$1\")\" && mkdir \"$1\" && chown \"$u\": \"$1\"; }; }",
      "chown -R \"$u\": " + STAGE + " && { [ -z \"$m\" ] || chmod -R \"$m\" " + STAGE + "; } || exit 1",
      "for t in \"$@\"; do",
      "  s=\"" + STAGE + "$t\"",
      "  mk \"$(dirname \"$t\")\" || exit 1",
      "  if [ -d \"$s\" ] && [ ! -L \"$s\" ]; then mk \"$t\" && cp -a \"$s/.\" \"$t/\" || exit 1",
      "  else cp -a \"$s\" \"$t\" || exit 1; fi",
      "done",
      "rm -rf " + STAGE);

  private final BuildRuntime runtime;
  private final BuildUploads uploads;
  private final StepRunner steps;
  /**
   * Where the builds' CPU-heavy work runs (decompressing, hashing and re-packing COPY archives): a
   * few platform threads, so a build busy with it never holds the carriers of the virtual threads
   * that serve requests, and several builds at once queue here rather than take every core.
   */
  private final ExecutorService cpu;

  CopyStep(BuildRuntime runtime, BuildUploads uploads, StepRunner steps, ExecutorService cpu) {
    this.runtime = runtime;
    this.uploads = uploads;
    this.steps = steps;
    this.cpu = cpu;
  }

  /**
   * COPY {@code src dest [user] [mode]}: the files of {@code src} from the uploaded context,
   * re-packed under {@code dest} (a {@code dest} ending in {@code /}, or a directory {@code src},
   * receives the contents), owned by the user. A path outside the context is refused; so is an
   * upload that is not what its hash says (it is removed), and one that expands past the build's
   * budget. The CPU-heavy part runs on {@link #cpu}.
   */
  void copy(Build b, BuildState st, StepRunner.Heading h, List<String> args, @Nullable String hash, boolean force, Instant deadline)
      throws StepFailed, IOException, InterruptedException {
    String name = h.step();
    if (args.size() < 2) {
      throw new StepFailed(name, "COPY needs a source and a destination");
    }
    String src = args.get(0);
    String dest = args.get(1);
    String user = args.size() > 2 && !args.get(2).isEmpty() ? args.get(2) : st.user;
    String mode = args.size() > 3 ? args.get(3) : "";
    String rel = CopyArchive.normalizeSource(name, src);
    if (SafeTar.utf8Length(dest) > SafeTar.MAX_NAME) {
      throw new StepFailed(name, "COPY destination '" + SafeTar.abbreviate(dest) + "' is longer than " + SafeTar.MAX_NAME + " bytes");
    }
    String destPath = dest.startsWith("/") ? dest : CopyArchive.stripTrailingSlashes(st.workdir) + "/" + dest;
    if (destPath.contains("\0") || Path.of(destPath).normalize().toString().contains("..")) {
      throw new StepFailed(name, "COPY destination '" + SafeTar.abbreviate(dest) + "' is not a plain path");
    }
    if (!BuildRunner.USER.matcher(user).matches() || !mode.matches("^[0-7]{0,4}$")) {
      throw new StepFailed(name, "COPY user or mode is malformed");
    }
    if (hash == null || !BuildRunner.HASH.matcher(hash).matches()) {
      throw new StepFailed(name, "COPY needs the filesHash of its uploaded files");
    }
    Path tar;
    try {
      tar = uploads.acquire(hash);
    } catch (java.nio.file.NoSuchFileException e) {
      throw new StepFailed(name, "the files of COPY " + SafeTar.abbreviate(src) + " were not uploaded (hash " + hash + ")");
    }
    Path repacked = null;
    try {
      repacked = uploads.temp("copy-");
      Path out = repacked;
      CopyArchive.Step what = new CopyArchive.Step(name, src, dest, rel, destPath, hash);
      boolean verify = !uploads.verified(hash, src, dest);
      List<String> targets = onCpu(name, () -> CopyArchive.repack(what, tar, out, b.budget, verify));
      if (verify) {
        uploads.markVerified(hash, src, dest);
      }
      if (targets.isEmpty()) {
        throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + ": no files of that path were uploaded");
      }
      List<String> cmd = new ArrayList<>(List.of("/bin/sh", "-c", COPY_SCRIPT, user, mode));
      cmd.addAll(targets);
      steps.runStep(b, st, h, cmd, "root", "/", id -> {
        try {
          runtime.putArchive(id, out);
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }, deadline, StepRunner.cacheKey(st, "COPY", List.of(rel, destPath, user, mode), hash), force);
    } catch (CopyArchive.Mismatch e) {
      uploads.refuse(hash, "not what its hash says");
      throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + ": " + e.getMessage());
    } catch (SafeTar.Refused e) {
      uploads.refuse(hash, "refused: " + e.getMessage());
      throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + ": the uploaded files are refused: " + e.getMessage()
          + " (the upload is removed)");
    } catch (SafeTar.TooLarge e) {
      throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + ": the build's COPY steps expand their uploaded files to more"
          + " than its budget of " + b.budget.describe() + "; a build's budget is the server's disk size per sandbox"
          + " (--disk-mb), unless LocalServer.builder().templateBuildBudgetMB sets it apart");
    } catch (java.util.zip.ZipException | java.io.EOFException e) {
      uploads.refuse(hash, "unreadable: " + e.getMessage());
      throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + ": the uploaded files are not a readable tar or tar.gz ("
          + e.getMessage() + "); the upload is removed");
    } catch (java.io.UncheckedIOException e) {
      throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + " could not be put into the image: " + e.getCause().getMessage());
    } finally {
      uploads.release(hash);
      if (repacked != null) {
        uploads.deleteTemp(repacked);
      }
    }
  }

  /** Work that takes CPU rather than waits. */
  @FunctionalInterface
  private interface CpuWork<T> {
    T run() throws StepFailed, IOException;
  }

  /** Runs CPU-heavy work on {@link #cpu} and waits for it (a virtual thread waiting holds no carrier). */
  private <T> T onCpu(String name, CpuWork<T> work) throws StepFailed, IOException, InterruptedException {
    java.util.concurrent.Future<T> f = cpu.submit(work::run);
    try {
      return f.get();
    } catch (InterruptedException e) {
      f.cancel(true);
      throw e;
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof StepFailed sf) {
        throw sf;
      }
      if (c instanceof IOException io) {
        throw io;
      }
      if (c instanceof RuntimeException r) {
        throw r;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new StepFailed(name, "step " + name + " failed: " + c);
    }
  }
}
