/** Implementation of the local runtime. Not API. */
@NullMarked
package io.sandboxes.local.internal.docker;

import org.jspecify.annotations.NullMarked;
