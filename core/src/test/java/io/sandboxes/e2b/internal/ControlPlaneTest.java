package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class ControlPlaneTest {

  @Test
  @DisplayName("the metadata filter is encoded in E2B's layers, and three decodes give the pairs back")
  void metadataEncoding() {
    Map<String, String> meta = new LinkedHashMap<>();
    meta.put("user", "a b");
    meta.put("odd&key", "x=y%z");
    String wire = ControlPlane.enc(ControlPlane.encodeMetadata(meta));
    assertThat(wire).startsWith("user%3Da%252B");
    String once = URLDecoder.decode(wire, StandardCharsets.UTF_8);
    String form = URLDecoder.decode(once, StandardCharsets.UTF_8);
    Map<String, String> back = new LinkedHashMap<>();
    for (String pair : form.split("&")) {
      String[] kv = pair.split("=");
      assertThat(kv).hasSize(2);
      back.put(URLDecoder.decode(kv[0], StandardCharsets.UTF_8), URLDecoder.decode(kv[1], StandardCharsets.UTF_8));
    }
    assertThat(back).isEqualTo(meta);
  }
}
