/**
 * Templates built through E2B's v2 build API: a {@link io.sandboxes.template.Template} describes
 * an image (a base, then COPY, ENV, RUN, WORKDIR and USER steps, start and ready commands), and
 * {@link io.sandboxes.e2b.E2BApi#buildTemplate} builds it under an alias, streaming the build's
 * log, so sandboxes can be created from it by that alias.
 */
@NullMarked
package io.sandboxes.template;

import org.jspecify.annotations.NullMarked;
