package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class Base64WarmupTest {
  /**
   * A tier-4 (C2) compilation of the encoder's or the decoder's entry or body (C2 may inline the
   * body into the entry), as -XX:+PrintCompilation prints it: only C2 code calls the vector stubs.
   */
  private static final Pattern TOP_TIER = Pattern.compile("\\s4\\s+java\\.util\\.Base64\\$(Encoder::encode0?|Decoder::decode0?) ");

  /**
   * The child JVM: starts the warm-up and waits for it; run with compilation in the foreground
   * (-Xbatch), so every compilation the warm-up asked for is done, and printed, when it exits.
   */
  public static final class Child {
    public static void main(String[] args) throws Exception {
      Base64Warmup.start();
      Thread t = Base64Warmup.thread;
      if (t != null) {
        t.join();
      }
    }
  }

  @Test
  @DisplayName("the warm-up round-trips every byte it encodes")
  void roundTrips() {
    assertThat(Base64Warmup.run()).isEqualTo(Base64Warmup.CALLS / 3L * (192 + 193 + 194));
  }

  @Test
  @DisplayName("in a fresh JVM the warm-up gets both halves of the codec compiled at the top tier, which the protocol's few large calls never do")
  void compilesTheCodecAtTheTopTier() throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process child = new ProcessBuilder(java.toString(), "-Xbatch", "-XX:+PrintCompilation", "-cp", System.getProperty("java.class.path"),
        Child.class.getName()).redirectErrorStream(true).start();
    List<String> seen = new ArrayList<>();
    try {
      CompletableFuture<Boolean> both = CompletableFuture.supplyAsync(() -> {
        boolean encoder = false;
        boolean decoder = false;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
          String line;
          while (!(encoder && decoder) && (line = out.readLine()) != null) {
            if (TOP_TIER.matcher(line).find()) {
              seen.add(line.trim());
              encoder |= line.contains("Encoder::");
              decoder |= line.contains("Decoder::");
            }
          }
        } catch (java.io.IOException e) {
          return false;
        }
        return encoder && decoder;
      });
      // generous for a loaded machine: on a quiet one the child is done within a second
      assertThat(both.get(60, TimeUnit.SECONDS)).as("top-tier compilations seen: %s", seen).isTrue();
    } finally {
      child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }
}
