/**
 * Templates built through E2B's v2 build protocol: build requests and tags, the store of uploaded
 * COPY contexts, the step runner and its cache, COPY archive repacking, registration of a
 * finished build, the catalogue of built templates (list, lookup, tags, delete, sweep), and the
 * start and ready commands a template gives its sandboxes.
 *
 * <p>Owns the images and steps of builds (the names in {@link BuildLabels}). Everything it asks of
 * the runtime goes through {@link io.sandboxes.local.internal.runtime.BuildRuntime} (Docker's is
 * {@code internal.docker.DockerBuildRuntime}): nothing here may assume containers, mounts or a
 * unix socket. Must not touch sandboxes, snapshots (the {@code Templates} catalogue's) or the
 * HTTP layer. {@link TemplateService} is the coordinator the rest of the server calls. Not API.
 */
@NullMarked
package io.sandboxes.local.internal.build;

import org.jspecify.annotations.NullMarked;
