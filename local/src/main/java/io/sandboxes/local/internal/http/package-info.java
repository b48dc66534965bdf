/** Implementation of the local runtime. Not API. */
@NullMarked
package io.sandboxes.local.internal.http;

import org.jspecify.annotations.NullMarked;
