package io.sandboxes.template;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A package install for {@link Template#install(PackageInstall)}, with the options of E2B's
 * {@code aptInstall(packages, {noInstallRecommends, fixMissing})},
 * {@code pipInstall(packages?, {g})}, {@code npmInstall(packages?, {g, dev})} and
 * {@code bunInstall(packages?, {g, dev})}. Each is one RUN step, made into the same command E2B's
 * SDK makes: as {@code root} when the install is system-wide, else as the user in effect. An option
 * a package manager does not have is refused, never dropped.
 *
 * {@snippet :
 * Template t = Template.fromTemplate("base")
 *     .install(PackageInstall.apt("curl").noInstallRecommends())
 *     .install(PackageInstall.pip("requests").user())        // pip install --user, as the user in effect
 *     .install(PackageInstall.npm("typescript").global())    // npm install -g, as root
 *     .install(PackageInstall.bun().dev());                  // bun install --dev in the workdir
 * }
 *
 * <p>Immutable.
 *
 * @since 0.1
 */
public final class PackageInstall {
  private enum Manager { APT, PIP, NPM, BUN }

  private final Manager manager;
  private final @Nullable String packages;
  private final List<String> flags;
  private final boolean root;

  private PackageInstall(Manager manager, @Nullable String packages, List<String> flags, boolean root) {
    this.manager = manager;
    this.packages = packages;
    this.flags = List.copyOf(flags);
    this.root = root;
  }

  /**
   * Debian packages: {@code apt-get update}, then a non-interactive {@code apt-get install -y}, as root.
   *
   * @param packages one or more package names ({@code name=version} too)
   * @return the install
   */
  public static PackageInstall apt(String... packages) {
    return new PackageInstall(Manager.APT, Checks.packageList(packages), List.of(), true);
  }

  /**
   * Python packages with {@code pip install}, system-wide as root (E2B's default {@code g: true});
   * no packages installs the project in the workdir ({@code pip install .}).
   *
   * @param packages requirement specifiers, or none
   * @return the install
   */
  public static PackageInstall pip(String... packages) {
    return new PackageInstall(Manager.PIP, orNone(packages), List.of(), true);
  }

  /**
   * Node packages with {@code npm install}, into the workdir as the user in effect (E2B's default
   * {@code g: false}); no packages installs the project's dependencies.
   *
   * @param packages package names, or none
   * @return the install
   */
  public static PackageInstall npm(String... packages) {
    return new PackageInstall(Manager.NPM, orNone(packages), List.of(), false);
  }

  /**
   * Packages with {@code bun install}, into the workdir as the user in effect; no packages installs
   * the project's dependencies.
   *
   * @param packages package names, or none
   * @return the install
   */
  public static PackageInstall bun(String... packages) {
    return new PackageInstall(Manager.BUN, orNone(packages), List.of(), false);
  }

  /**
   * apt only: {@code --no-install-recommends}.
   *
   * @return a copy with it
   * @throws IllegalArgumentException for another package manager
   */
  public PackageInstall noInstallRecommends() {
    return flag(Manager.APT, "--no-install-recommends", "noInstallRecommends", root);
  }

  /**
   * apt only: {@code --fix-missing}.
   *
   * @return a copy with it
   * @throws IllegalArgumentException for another package manager
   */
  public PackageInstall fixMissing() {
    return flag(Manager.APT, "--fix-missing", "fixMissing", root);
  }

  /**
   * pip only, E2B's {@code g: false}: {@code pip install --user}, as the user in effect.
   *
   * @return a copy with it
   * @throws IllegalArgumentException for another package manager
   */
  public PackageInstall user() {
    return flag(Manager.PIP, "--user", "user", false);
  }

  /**
   * npm and bun, E2B's {@code g: true}: {@code -g}, as root.
   *
   * @return a copy with it
   * @throws IllegalArgumentException for apt or pip (pip is system-wide unless {@link #user()})
   */
  public PackageInstall global() {
    return flag(manager == Manager.BUN ? Manager.BUN : Manager.NPM, "-g", "global", true);
  }

  /**
   * npm and bun, E2B's {@code dev: true}: {@code --save-dev} for npm, {@code --dev} for bun.
   *
   * @return a copy with it
   * @throws IllegalArgumentException for apt or pip
   */
  public PackageInstall dev() {
    return manager == Manager.BUN ? flag(Manager.BUN, "--dev", "dev", root) : flag(Manager.NPM, "--save-dev", "dev", root);
  }

  /** The RUN command, as E2B's SDK writes it. */
  String command() {
    String opts = flags.isEmpty() ? "" : String.join(" ", flags) + " ";
    return switch (manager) {
      case APT -> "apt-get update && DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y " + opts + packages;
      case PIP -> "pip install " + opts + (packages == null ? "." : packages);
      case NPM -> ("npm install " + opts + (packages == null ? "" : packages)).strip();
      case BUN -> ("bun install " + opts + (packages == null ? "" : packages)).strip();
    };
  }

  /** The user the step runs as: root, or null for the user in effect. */
  @Nullable String runAs() {
    return root ? "root" : null;
  }

  private PackageInstall flag(Manager only, String flag, String option, boolean asRoot) {
    if (manager != only) {
      throw new IllegalArgumentException(option + " is not an option of " + manager.name().toLowerCase(java.util.Locale.ROOT)
          + " installs");
    }
    if (flags.contains(flag)) {
      return this;
    }
    List<String> f = new ArrayList<>(flags);
    f.add(flag);
    return new PackageInstall(manager, packages, f, asRoot);
  }

  private static @Nullable String orNone(String[] packages) {
    return Objects.requireNonNull(packages, "packages").length == 0 ? null : Checks.packageList(packages);
  }

  @Override
  public String toString() {
    return "PackageInstall[" + command() + (root ? " as root" : "") + "]";
  }
}
