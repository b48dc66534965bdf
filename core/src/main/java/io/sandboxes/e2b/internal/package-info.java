/** Implementation details of the E2B client. Not API: may change in any release. */
@NullMarked
package io.sandboxes.e2b.internal;

import org.jspecify.annotations.NullMarked;
