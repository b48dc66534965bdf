package io.sandboxes.local.internal.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.KeyStore;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The gateway's CA and its leaves as a TLS client judges them, and which destinations rules name. */
class GatewayCaTest {

  @Test
  @DisplayName("a leaf chains to the CA, names its host (DNS or IP), is for server auth, and passes the JDK's server check; another CA's does not")
  void leavesVerify() throws Exception {
    GatewayCa ca = GatewayCa.create("test CA");
    X509Certificate leaf = ca.leaf("api.example.com");
    PKIXParameters params = new PKIXParameters(Set.of(new TrustAnchor(ca.certificate(), null)));
    params.setRevocationEnabled(false);
    CertPathValidator.getInstance("PKIX").validate(CertificateFactory.getInstance("X.509").generateCertPath(List.of(leaf)), params);
    assertThat(leaf.getSubjectAlternativeNames()).containsExactly(List.of(2, "api.example.com"));
    assertThat(leaf.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.1");
    assertThat(leaf.getBasicConstraints()).isEqualTo(-1);
    assertThat(ca.certificate().getBasicConstraints()).isGreaterThanOrEqualTo(0);
    assertThat(ca.leaf("10.1.2.3").getSubjectAlternativeNames()).containsExactly(List.of(7, "10.1.2.3"));
    assertThat(ca.leaf("api.example.com")).as("kept").isSameAs(leaf);

    X509TrustManager trusting = trustManager(ca.certificate());
    trusting.checkServerTrusted(new X509Certificate[] {leaf, ca.certificate()}, "ECDHE_ECDSA");
    X509TrustManager other = trustManager(GatewayCa.create("other CA").certificate());
    assertThatThrownBy(() -> other.checkServerTrusted(new X509Certificate[] {leaf, ca.certificate()}, "ECDHE_ECDSA"))
        .isInstanceOf(java.security.cert.CertificateException.class);
    assertThat(GatewayCa.pem(leaf)).startsWith("-----BEGIN CERTIFICATE-----\n").endsWith("-----END CERTIFICATE-----\n");
  }

  @Test
  @DisplayName("the leaves kept are bounded: a sandbox asking for many names costs at most the cap")
  void leavesBounded() {
    GatewayCa ca = GatewayCa.create("test CA");
    X509Certificate first = ca.leaf("n0.example.com");
    for (int i = 1; i <= GatewayCa.MAX_LEAVES; i++) {
      ca.leaf("n" + i + ".example.com");
    }
    assertThat(ca.leaf("n0.example.com")).as("the eldest was dropped and signed again").isNotSameAs(first);
  }

  @Test
  @DisplayName("rules name a destination exactly, by the longest *. wildcard, by IP or CIDR; nothing else is intercepted")
  void matching() {
    HeaderRules rules = HeaderRules.of(Map.of(
        "api.example.com", List.of(Map.of("X-A", "1"), Map.of("x-a", "2")),
        "*.example.com", List.of(Map.of("X-B", "w")),
        "*.deep.example.com", List.of(Map.of("X-C", "d")),
        "10.0.0.0/8", List.of(Map.of("X-D", "net")),
        "empty.example.org", List.of(Map.of())));
    assertThat(rules.headersFor("API.example.com.")).containsExactly(Map.entry("X-A", "2"));
    assertThat(rules.headersFor("x.example.com")).containsExactly(Map.entry("X-B", "w"));
    assertThat(rules.headersFor("a.deep.example.com")).containsExactly(Map.entry("X-C", "d"));
    assertThat(rules.headersFor("example.com")).isNull();
    assertThat(rules.headersFor("evil-example.com")).isNull();
    assertThat(rules.headersFor("10.2.3.4")).containsExactly(Map.entry("X-D", "net"));
    assertThat(rules.headersFor("11.2.3.4")).isNull();
    assertThat(rules.headersFor("empty.example.org")).as("a rule that sets nothing intercepts nothing").isNull();
    assertThat(HeaderRules.NONE.headersFor("api.example.com")).isNull();
  }

  @Test
  @DisplayName("secrets are filled in at send; a missing one or one with a line break stops the request without naming it")
  void filling() {
    Map<String, String> store = Map.of("key", "v1", "bad", "a\r\nX-Evil: 1");
    assertThat(HeaderRules.fill("Bearer ${e2b.secrets.KEY} ${e2b.secrets.key}", store::get)).isEqualTo("Bearer v1 v1");
    assertThatThrownBy(() -> HeaderRules.fill("${e2b.secrets.gone}", store::get)).hasMessageNotContaining("gone")
        .hasMessageContaining("no longer exists");
    assertThatThrownBy(() -> HeaderRules.fill("${e2b.secrets.bad}", store::get)).hasMessageContaining("line break")
        .hasMessageNotContaining("X-Evil");
    assertThat(HeaderRules.of(Map.of("a.example.com", List.of(Map.of("X", "${e2b.secrets.One} ${e2b.secrets.two}")))).secretNames())
        .containsExactly("one", "two");
  }

  private static X509TrustManager trustManager(X509Certificate anchor) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    ks.setCertificateEntry("a", anchor);
    TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
    tmf.init(ks);
    return (X509TrustManager) tmf.getTrustManagers()[0];
  }
}
