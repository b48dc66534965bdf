/** Service-provider interfaces between the SDK's modules. */
@NullMarked
package io.sandboxes.spi;

import org.jspecify.annotations.NullMarked;
