package io.sandboxes;

/**
 * A live subscription; closing it stops it. Idempotent.
 *
 * @since 0.1
 */
@FunctionalInterface
public interface Subscription extends AutoCloseable {
  @Override
  void close();
}
