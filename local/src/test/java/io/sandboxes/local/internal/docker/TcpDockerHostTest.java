package io.sandboxes.local.internal.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A Docker engine reached over plain {@code tcp://}: this machine's engine behind a TCP relay on
 * loopback, which also counts the connections, so the test knows the traffic went that way.
 */
class TcpDockerHostTest {

  /** Relays each TCP connection to the Docker socket, passing half-closes on. */
  private static final class Relay implements AutoCloseable {
    final ServerSocket server;
    final AtomicInteger connections = new AtomicInteger();

    Relay(Path socket) throws IOException {
      server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread.ofVirtual().start(() -> {
        while (!server.isClosed()) {
          try {
            Socket tcp = server.accept();
            connections.incrementAndGet();
            SocketChannel unix = SocketChannel.open(UnixDomainSocketAddress.of(socket));
            Thread.ofVirtual().start(() -> pump(tcp, unix, true));
            Thread.ofVirtual().start(() -> pump(tcp, unix, false));
          } catch (IOException e) {
            return;
          }
        }
      });
    }

    private static void pump(Socket tcp, SocketChannel unix, boolean up) {
      try {
        if (up) {
          tcp.getInputStream().transferTo(Channels.newOutputStream(unix));
          unix.shutdownOutput();
        } else {
          ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
          while (unix.read(buf) >= 0) {
            tcp.getOutputStream().write(buf.array(), 0, buf.position());
            buf.clear();
          }
          tcp.shutdownOutput();
        }
      } catch (IOException e) {
        // one side went away; closing both ends the other pump
        try {
          tcp.close();
          unix.close();
        } catch (IOException ignored) {
          // already closed
        }
      }
    }

    int port() {
      return server.getLocalPort();
    }

    @Override
    public void close() throws IOException {
      server.close();
    }
  }

  @Test
  @DisplayName("DOCKER_HOST=tcp://: docker-java calls and the raw exec (stdin to EOF, output back) both go over TCP")
  void tcp() throws Exception {
    Path socket = Path.of("/var/run/docker.sock");
    assumeTrue(Files.exists(socket), "needs Docker on its default socket");
    try (Relay relay = new Relay(socket)) {
      Map<String, String> vars = Map.of("DOCKER_HOST", "tcp://127.0.0.1:" + relay.port());
      Path home = Files.createTempDirectory("tcp-docker-home");
      DockerLocator.Environment env = new DockerLocator.Environment(vars::get, home, home, OptionalInt.empty());
      try (DockerRuntime docker = DockerRuntime.connect(env)) {
        assertThat(docker.engine().host()).isEqualTo(URI.create("tcp://127.0.0.1:" + relay.port()));
        String image = BaseImage.ensure(docker, line -> System.err.println("[base image] " + line));
        String id = docker.createAndStart(new DockerRuntime.ContainerSpec(image, "sandboxes-tcp-test-" + ProcessHandle.current().pid(),
            Map.of("io.sandboxes.test", "tcp"), List.of(), "tcp", 1, 256L << 20, 64, Map.of(), null));
        try {
          int before = relay.connections.get();
          DockerRuntime.Completed done = docker.run(id, "root", List.of("sh", "-c", "cat; echo done >&2"),
              new ByteArrayInputStream("over tcp".getBytes(StandardCharsets.UTF_8)));
          assertThat(done.stdoutText()).isEqualTo("over tcp");
          assertThat(done.stderrText()).isEqualTo("done");
          assertThat(done.exitCode()).isZero();
          assertThat(relay.connections.get()).as("the exec's own connection went through the relay").isGreaterThan(before);
        } finally {
          docker.remove(id);
        }
      }
      assertThat(relay.connections.get()).isGreaterThanOrEqualTo(2);
    }
  }
}
