package io.sandboxes.local.internal.egress;

import java.io.ByteArrayInputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * This server's certificate authority for the egress gateway: an ECDSA P-256 key made at server
 * start and held only in this object (never written anywhere: a restarted server makes a new one
 * and writes its certificate into every sandbox it takes back), its self-signed certificate, and
 * the leaves it signs for the destinations that have header rules. Certificates are written with
 * the JDK's public API ({@link Der}, {@link Signature}); no certificate library is needed for
 * these few fields. Leaves carry what strict verifiers (Python 3.13's default) ask for: subject
 * alternative name, key usage, extended key usage server auth, and key identifiers.
 */
public final class GatewayCa {
  private static final String SIG_OID = "1.2.840.10045.4.3.2"; // ecdsa-with-SHA256
  /** Leaves this CA keeps signed at once, the oldest dropped first. */
  static final int MAX_LEAVES = 256;

  private final KeyPair caKeys;
  private final X509Certificate certificate;
  private final KeyPair leafKeys;
  private final SecureRandom random = new SecureRandom();
  private final Map<String, X509Certificate> leaves = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, X509Certificate> eldest) {
      return size() > MAX_LEAVES;
    }
  };

  private GatewayCa(KeyPair caKeys, KeyPair leafKeys, String name) throws GeneralSecurityException {
    this.caKeys = caKeys;
    this.leafKeys = leafKeys;
    ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
    byte[] ski = keyId(caKeys.getPublic());
    byte[] extensions = Der.concat(
        extension("2.5.29.19", true, Der.sequence(Der.bool(true))),
        extension("2.5.29.15", true, Der.bits(1, new byte[] {0x06})), // keyCertSign, cRLSign
        extension("2.5.29.14", false, Der.octets(ski)));
    this.certificate = sign(name(name), name(name), now.minusHours(1), now.plusYears(10), caKeys.getPublic(), extensions);
  }

  /**
   * Makes a new CA.
   *
   * @param name its common name, which a person reading a sandbox's trust store sees
   */
  public static GatewayCa create(String name) {
    try {
      return new GatewayCa(ecKeys(), ecKeys(), name);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the egress gateway's CA could not be made: " + e.getMessage(), e);
    }
  }

  private static KeyPair ecKeys() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    return g.generateKeyPair();
  }

  /** @return the CA's certificate */
  public X509Certificate certificate() {
    return certificate;
  }

  /** @return the key every leaf certifies (one for all leaves; it never leaves the server either) */
  public PrivateKey leafKey() {
    return leafKeys.getPrivate();
  }

  /**
   * A leaf for {@code host} (a name, or an IP literal), signed by this CA, valid for 30 days;
   * kept, and signed again when fewer than two days are left.
   */
  public synchronized X509Certificate leaf(String host) {
    X509Certificate known = leaves.get(host);
    ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
    if (known != null && known.getNotAfter().toInstant().isAfter(now.plusDays(2).toInstant())) {
      return known;
    }
    try {
      byte[] san = Destinations.v4(host) != null || host.indexOf(':') >= 0
          ? Der.tlv(0x87, InetAddress.getByName(host).getAddress())
          : Der.tlv(0x82, host.getBytes(StandardCharsets.US_ASCII));
      byte[] extensions = Der.concat(
          extension("2.5.29.19", true, Der.sequence()),
          extension("2.5.29.15", true, Der.bits(7, new byte[] {(byte) 0x80})), // digitalSignature
          extension("2.5.29.37", false, Der.sequence(Der.oid("1.3.6.1.5.5.7.3.1"))), // serverAuth
          extension("2.5.29.17", false, Der.sequence(san)),
          extension("2.5.29.14", false, Der.octets(keyId(leafKeys.getPublic()))),
          extension("2.5.29.35", false, Der.sequence(Der.tlv(0x80, keyId(caKeys.getPublic())))));
      X509Certificate leaf = sign(name(host), name(certificate.getSubjectX500Principal().getName().replaceFirst("^CN=", "")),
          now.minusHours(1), now.plusDays(30), leafKeys.getPublic(), extensions);
      leaves.put(host, leaf);
      return leaf;
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new IllegalStateException("no certificate could be signed for " + host + ": " + e.getMessage(), e);
    }
  }

  private X509Certificate sign(byte[] subject, byte[] issuer, ZonedDateTime from, ZonedDateTime to, PublicKey key,
      byte[] extensions) throws GeneralSecurityException {
    byte[] alg = Der.sequence(Der.oid(SIG_OID));
    byte[] tbs = Der.sequence(
        Der.explicit(0, Der.integer(BigInteger.TWO)),
        Der.integer(new BigInteger(127, random).add(BigInteger.ONE)),
        alg, issuer,
        Der.sequence(Der.time(from), Der.time(to)),
        subject,
        key.getEncoded(),
        Der.explicit(3, Der.sequence(extensions)));
    Signature s = Signature.getInstance("SHA256withECDSA");
    s.initSign(caKeys.getPrivate());
    s.update(tbs);
    byte[] der = Der.sequence(tbs, alg, Der.bits(0, s.sign()));
    X509Certificate cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der));
    cert.verify(caKeys.getPublic());
    return cert;
  }

  private static byte[] name(String cn) {
    return Der.sequence(Der.set(Der.sequence(Der.oid("2.5.4.3"), Der.utf8(cn))));
  }

  private static byte[] extension(String oid, boolean critical, byte[] value) {
    return critical ? Der.sequence(Der.oid(oid), Der.bool(true), Der.octets(value)) : Der.sequence(Der.oid(oid), Der.octets(value));
  }

  private static byte[] keyId(PublicKey key) throws GeneralSecurityException {
    return java.util.Arrays.copyOf(MessageDigest.getInstance("SHA-1").digest(key.getEncoded()), 20);
  }

  /** @return a certificate as PEM text, ending with a newline */
  public static String pem(X509Certificate cert) {
    try {
      return "-----BEGIN CERTIFICATE-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(cert.getEncoded())
          + "\n-----END CERTIFICATE-----\n";
    } catch (java.security.cert.CertificateEncodingException e) {
      throw new IllegalStateException(e);
    }
  }
}
