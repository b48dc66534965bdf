/** The fluent entry point, {@link io.sandboxes.dsl.Sandboxes}. */
@NullMarked
package io.sandboxes.dsl;

import org.jspecify.annotations.NullMarked;
