/** The JUnit 5 extension: {@link io.sandboxes.junit.E2BSandbox}. */
@NullMarked
package io.sandboxes.junit;

import org.jspecify.annotations.NullMarked;
