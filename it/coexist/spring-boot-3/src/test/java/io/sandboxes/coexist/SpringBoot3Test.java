package io.sandboxes.coexist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.PackageVersion;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The application's context starts with Sandboxes on its class path, and its Jackson is the one
 * Spring Boot 3.5 manages, in the same JVM as the sandboxes of {@link CoexistenceChecks}.
 */
@SpringBootTest
class SpringBoot3Test extends CoexistenceChecks {

  @Autowired
  ObjectMapper mapper;

  @Test
  void theApplicationKeepsTheJacksonItsParentChose() throws Exception {
    assertThat(PackageVersion.VERSION.toString()).isEqualTo(System.getProperty("coexist.jackson"));
    assertThat(mapper.writeValueAsString(Map.of("coexists", true))).isEqualTo("{\"coexists\":true}");
  }
}
