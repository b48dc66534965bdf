/**
 * The provider-neutral sandbox API: {@link io.sandboxes.Sandbox}, its results and its exceptions.
 */
@NullMarked
package io.sandboxes;

import org.jspecify.annotations.NullMarked;
