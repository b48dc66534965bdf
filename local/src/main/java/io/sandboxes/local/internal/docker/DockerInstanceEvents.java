package io.sandboxes.local.internal.docker;

import io.sandboxes.local.internal.runtime.InstanceLabels;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Event;
import com.github.dockerjava.api.model.EventType;
import io.sandboxes.local.internal.runtime.InstanceEvents;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows Docker's event stream for the containers of one server (those labelled as the local
 * runtime's and as this server's; other servers on the same engine are never looked at) and
 * reports every container that died or was removed, and every one paused or unpaused. The stream is opened again whenever it drops,
 * and every (re)opening is followed by a re-sync, so what happened while it was down is still
 * seen. An event only says "look again": the receiver decides from what Docker shows now.
 */
final class DockerInstanceEvents implements InstanceEvents.Subscription {
  private static final Logger LOG = LoggerFactory.getLogger(DockerInstanceEvents.class);
  /** Container actions after which a container may have stopped running or be gone. */
  private static final java.util.Set<String> ENDS = java.util.Set.of("die", "destroy");
  /** Container actions after which a container may have been frozen or thawed. */
  private static final java.util.Set<String> FREEZES = java.util.Set.of("pause", "unpause");
  private static final String[] ACTIONS = {"die", "destroy", "pause", "unpause"};
  private static final Duration FIRST_RETRY = Duration.ofMillis(200);
  private static final Duration LAST_RETRY = Duration.ofSeconds(5);
  /** How long an opening waits for Docker's answer before re-syncing anyway. */
  private static final Duration STARTED = Duration.ofSeconds(2);

  private final DockerRuntime docker;
  private final String serverId;
  private final InstanceEvents receiver;
  private final Thread follower;
  private volatile boolean closed;
  private volatile @Nullable Stream current;
  private final Object suspension = new Object();
  private boolean suspended;

  /**
   * Starts following.
   *
   * @param receiver gets the id of a container that died or was removed ({@link InstanceEvents#ended}), of one
   *     paused or unpaused by anyone ({@link InstanceEvents#freezeChanged}), and a {@link InstanceEvents#resync}
   *     after every (re)opening of the stream: look at every container again
   */
  DockerInstanceEvents(DockerRuntime docker, String serverId, InstanceEvents receiver) {
    this.docker = docker;
    this.serverId = serverId;
    this.receiver = receiver;
    this.follower = Thread.ofVirtual().name("sandboxes-docker-events").start(this::follow);
  }

  private void follow() {
    Duration retry = FIRST_RETRY;
    while (!closed) {
      try {
        awaitNotSuspended();
      } catch (InterruptedException e) {
        return;
      }
      Stream stream = new Stream();
      current = stream;
      try {
        docker.client().eventsCmd()
            .withEventTypeFilter(EventType.CONTAINER)
            .withEventFilter(ACTIONS)
            .withLabelFilter(Map.of(InstanceLabels.OURS, "true", InstanceLabels.SERVER, serverId))
            .exec(stream);
        boolean answered = stream.started.await(STARTED.toMillis(), TimeUnit.MILLISECONDS);
        if (closed) {
          stream.close();
          return;
        }
        // once the request is in, Docker queues every later event for it: what came before is re-read
        receiver.resync();
        if (answered) {
          retry = FIRST_RETRY;
        }
        stream.done.await();
      } catch (InterruptedException e) {
        stream.close();
        return;
      } catch (RuntimeException e) {
        stream.failure = e;
      }
      stream.close();
      if (closed) {
        return;
      }
      LOG.warn("Docker's event stream for server {} ended ({}); opening it again in {} ms", serverId,
          stream.failure == null ? "closed by Docker" : stream.failure.toString(), retry.toMillis());
      try {
        Thread.sleep(retry);
      } catch (InterruptedException e) {
        return;
      }
      retry = retry.multipliedBy(2).compareTo(LAST_RETRY) > 0 ? LAST_RETRY : retry.multipliedBy(2);
    }
  }

  private void awaitNotSuspended() throws InterruptedException {
    synchronized (suspension) {
      while (suspended && !closed) {
        suspension.wait();
      }
    }
  }

  /**
   * For tests: drops the stream as Docker dropping it would, and keeps it closed until the
   * returned handle is closed; then it is opened again (and re-synced) as after any drop.
   */
  @Override
  public AutoCloseable suspend() {
    synchronized (suspension) {
      suspended = true;
    }
    Stream s = current;
    if (s != null) {
      s.close();
    }
    return () -> {
      synchronized (suspension) {
        suspended = false;
        suspension.notifyAll();
      }
    };
  }

  /** One opening of the stream. */
  private final class Stream implements ResultCallback<Event> {
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch done = new CountDownLatch(1);
    private volatile @Nullable Closeable closeable;
    volatile @Nullable Throwable failure;

    @Override
    public void onStart(Closeable closeable) {
      this.closeable = closeable;
      started.countDown();
      if (closed || done.getCount() == 0) {
        close(); // closed before Docker answered
      }
    }

    @Override
    public void onNext(Event event) {
      String id = event.getId() != null ? event.getId() : event.getActor() == null ? null : event.getActor().getId();
      if (id == null || closed) {
        return;
      }
      LOG.debug("Docker event {} for container {}", event.getAction(), id);
      String action = String.valueOf(event.getAction());
      try {
        if (FREEZES.contains(action)) {
          receiver.freezeChanged(id);
        } else if (ENDS.contains(action)) {
          receiver.ended(id);
        }
      } catch (RuntimeException e) {
        LOG.warn("handling Docker's {} event for container {} failed: {}", event.getAction(), id, e.toString());
      }
    }

    @Override
    public void onError(Throwable throwable) {
      failure = throwable;
      started.countDown();
      done.countDown();
    }

    @Override
    public void onComplete() {
      started.countDown();
      done.countDown();
    }

    @Override
    public void close() {
      Closeable c = closeable;
      if (c != null) {
        try {
          c.close();
        } catch (IOException | RuntimeException ignored) {
          // the stream is going away anyway
        }
      }
      done.countDown();
    }
  }

  /** Stops following. */
  @Override
  public void close() {
    closed = true;
    synchronized (suspension) {
      suspension.notifyAll();
    }
    Stream s = current;
    if (s != null) {
      s.close();
    }
    follower.interrupt();
    try {
      follower.join(Duration.ofSeconds(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
