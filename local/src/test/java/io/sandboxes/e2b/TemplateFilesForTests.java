package io.sandboxes.e2b;

import java.io.IOException;
import java.nio.file.Path;

/** The Java SDK's COPY files (found, hashed and packed as it uploads them), for the local server's tests. */
public final class TemplateFilesForTests {
  private TemplateFilesForTests() {}

  /** @return the files hash the SDK gives a COPY of {@code src} (in {@code context}) to {@code dest} */
  public static String hash(Path context, String src, String dest) {
    return TemplateFiles.hash(src, dest, TemplateFiles.collect(context, src));
  }

  /** One entry of a COPY as the SDK finds it. */
  public record Item(String relative, int mode, long size, String kind, String linkTarget, Path path) {}

  /** @return what a COPY of {@code src} takes, in the order the hash and the upload have it */
  public static java.util.List<Item> items(Path context, String src) {
    return TemplateFiles.collect(context, src).stream()
        .map(e -> new Item(e.relative(), e.mode(), e.size(), e.kind().name(), e.linkTarget(), e.path())).toList();
  }

  /** @return the gzipped tar the SDK uploads for a COPY of {@code src}; the caller deletes it */
  public static Path pack(Path context, String src) throws IOException {
    return TemplateFiles.pack(TemplateFiles.collect(context, src));
  }
}
