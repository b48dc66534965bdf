/**
 * The seam between the server's sandbox side and what runs sandboxes: the operations the
 * collaborators of the sandbox table perform on a sandbox's instance and on the captured images
 * forks start from, in terms any runtime can give (an instance, its state, a captured image).
 * Docker is the one implementation today ({@code internal.docker}); nothing here may name a
 * container, a mount or a socket, and this package depends on no other package of the server.
 */
@org.jspecify.annotations.NullMarked
package io.sandboxes.local.internal.runtime;
