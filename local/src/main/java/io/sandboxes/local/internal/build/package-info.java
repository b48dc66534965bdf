/**
 * Templates built through E2B's v2 build protocol: build requests and tags, the store of uploaded
 * COPY contexts, the step runner and its cache, COPY archive repacking, registration of a
 * finished build, the catalogue of built templates (list, lookup, tags, delete, sweep), and the
 * start and ready commands a template gives its sandboxes.
 *
 * <p>Owns the images and step containers of builds (the labels in {@link
 * io.sandboxes.local.internal.build.TemplateService}); must not touch sandboxes' containers,
 * snapshots (the {@code Templates} catalogue's) or the HTTP layer. Not API.
 */
@NullMarked
package io.sandboxes.local.internal.build;

import org.jspecify.annotations.NullMarked;
