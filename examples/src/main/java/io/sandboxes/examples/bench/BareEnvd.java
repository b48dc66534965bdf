package io.sandboxes.examples.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The thinnest client of one envd call, as a yardstick for what a real client adds: the request's
 * bytes built once, written on a kept-alive loopback socket, and the answer read to its last byte
 * with no JSON parsing and no threads. Its round trip is the server's time for the call plus the
 * loopback, so a real client's time minus this one is that client's own cost.
 */
final class BareEnvd implements AutoCloseable {
  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;
  private final byte[] request;
  private final java.net.http.HttpRequest httpRequest;

  /**
   * @param sandboxUrl the server's envd address ({@code LocalServer#sandboxUrl()})
   * @param sandboxId the sandbox the call goes to
   * @param accessToken the sandbox's envd access token
   * @param command the command {@code process.Process/Start} runs, in a login shell as E2B's {@code commands.run} does
   */
  BareEnvd(URI sandboxUrl, String sandboxId, String accessToken, String command) throws IOException {
    ObjectMapper json = new ObjectMapper();
    ObjectNode body = json.createObjectNode();
    ObjectNode process = body.putObject("process").put("cmd", "/bin/bash");
    process.putArray("args").add("-l").add("-c").add(command);
    body.put("stdin", false);
    byte[] payload = json.writeValueAsBytes(body);
    byte[] envelope = ByteBuffer.allocate(5 + payload.length).put((byte) 0).putInt(payload.length).put(payload).array();
    String head = "POST /process.Process/Start HTTP/1.1\r\n"
        + "Host: " + sandboxUrl.getHost() + ":" + sandboxUrl.getPort() + "\r\n"
        + "Content-Type: application/connect+json\r\n"
        + "Connect-Protocol-Version: 1\r\n"
        + "Connect-Timeout-Ms: 60000\r\n"
        + "E2b-Sandbox-Id: " + sandboxId + "\r\n"
        + "E2b-Sandbox-Port: 49983\r\n"
        + "X-Access-Token: " + accessToken + "\r\n"
        + "Content-Length: " + envelope.length + "\r\n\r\n";
    ByteArrayOutputStream req = new ByteArrayOutputStream();
    req.write(head.getBytes(StandardCharsets.US_ASCII));
    req.write(envelope);
    this.request = req.toByteArray();
    this.httpRequest = java.net.http.HttpRequest.newBuilder(sandboxUrl.resolve("/process.Process/Start"))
        .header("Content-Type", "application/connect+json").header("Connect-Protocol-Version", "1")
        .header("Connect-Timeout-Ms", "60000").header("E2b-Sandbox-Id", sandboxId).header("E2b-Sandbox-Port", "49983")
        .header("X-Access-Token", accessToken).POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(envelope)).build();
    this.socket = new Socket(sandboxUrl.getHost(), sandboxUrl.getPort());
    socket.setTcpNoDelay(true);
    this.in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
    this.out = socket.getOutputStream();
  }

  /** The same request for {@code java.net.http}, to tell its share of a client's cost from the rest. */
  java.net.http.HttpRequest httpRequest() {
    return httpRequest;
  }

  /** One call: the answer's body (the Connect envelopes), checked to be a 200. */
  byte[] call() throws IOException {
    out.write(request);
    out.flush();
    String status = line();
    if (!status.startsWith("HTTP/1.1 200")) {
      throw new IOException("the server answered " + status);
    }
    boolean chunked = false;
    long length = -1;
    for (String h = line(); !h.isEmpty(); h = line()) {
      String lower = h.toLowerCase(java.util.Locale.ROOT);
      if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
        chunked = true;
      } else if (lower.startsWith("content-length:")) {
        length = Long.parseLong(lower.substring(15).strip());
      }
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (chunked) {
      for (int size = Integer.parseInt(line().split(";")[0].strip(), 16); size > 0;
          size = Integer.parseInt(line().split(";")[0].strip(), 16)) {
        body.write(in.readNBytes(size));
        line();
      }
      while (!line().isEmpty()) {
        // trailers
      }
    } else if (length >= 0) {
      body.write(in.readNBytes((int) length));
    } else {
      throw new IOException("an answer with neither a length nor chunks cannot be read on a kept-alive connection");
    }
    return body.toByteArray();
  }

  private String line() throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        throw new EOFException("the server closed the connection");
      }
      if (c != '\r') {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.US_ASCII);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
