package org.shine.server.dm;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.bouncycastle.math.ec.rfc8032.Ed25519;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Ed25519 verification of one signed container (200-byte body, 246 signed bytes), one thread: the providers
 * called directly (BouncyCastle, ACCP, the JDK's SunEC) and the project's verifiers as the server calls them.
 * Run with {@code mvn -B -q -Pjmh test-compile exec:exec -Djmh.args="Ed25519VerifyBenchmark -f 1 -wi 3 -i 5"}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class Ed25519VerifyBenchmark {
  private static final int KEYS = 16;
  private byte[] bytes;
  private int signedLength;
  private Ed25519.PublicPoint bcPoint;
  private PublicKey jcaKey;
  private final PublicKey[] jcaKeys = new PublicKey[KEYS];
  private final byte[][] rotatingBytes = new byte[KEYS][];
  private Signature accp;
  private Signature sunEc;
  private Ed25519Signer.PublicKey projectKey;
  private byte[] rawKey;
  private byte[] tampered;
  private AccpEd25519 accpVerifier;
  private final BouncyCastleEd25519 bcVerifier = new BouncyCastleEd25519();
  private int next;

  @Setup
  public void setUp() throws GeneralSecurityException {
    DmContainer container = Ed25519AgreementTest.container(200);
    bytes = container.bytes();
    signedLength = container.signedLength();
    rawKey = Ed25519Signer.publicKeyOf(
        HexFormat.of().parseHex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"));
    bcPoint = Ed25519.validatePublicKeyPartialExport(rawKey, 0);
    jcaKey = jcaKey(rawKey);
    for (int i = 0; i < KEYS; i++) {
      Ed25519Signer.KeyPair pair = Ed25519Signer.generate();
      jcaKeys[i] = jcaKey(pair.publicKey());
      rotatingBytes[i] = DmCodec.sign(DmKind.OUTGOING, 1, i, 0, "alice", "bob", "", new byte[200], pair.privateKey())
          .bytes();
    }
    accp = Signature.getInstance("Ed25519", Ed25519Verifiers.loadAccp());
    sunEc = Signature.getInstance("Ed25519", "SunEC");
    projectKey = Ed25519Signer.publicKey(rawKey);
    accpVerifier = new AccpEd25519(Ed25519Verifiers.loadAccp(), bcVerifier);
    tampered = bytes.clone();
    tampered[40] ^= 1;
    if (!bouncyCastle() || !accp() || !sunEc() || !projectAccp() || !projectBouncyCastle() || projectAccpRejects()) {
      throw new IllegalStateException("a verifier gives the wrong answer");
    }
  }

  /** Today's server path: BouncyCastle with the key decoded once. */
  @Benchmark
  public boolean bouncyCastle() {
    return Ed25519.verify(bytes, signedLength, bcPoint, bytes, 0, signedLength);
  }

  @Benchmark
  public boolean accp() throws GeneralSecurityException {
    return verify(accp, jcaKey, bytes);
  }

  /** ACCP with a different key object each time: its native key is rebuilt on every initVerify. */
  @Benchmark
  public boolean accpRotatingKeys() throws GeneralSecurityException {
    int i = next++ & (KEYS - 1);
    return verify(accp, jcaKeys[i], rotatingBytes[i]);
  }

  @Benchmark
  public boolean sunEc() throws GeneralSecurityException {
    return verify(sunEc, jcaKey, bytes);
  }

  /** The project's verification (rules, then ACCP) of a container with a key decoded once. */
  @Benchmark
  public boolean projectAccp() {
    return projectKey.verify(accpVerifier, bytes, 0, signedLength, bytes, signedLength);
  }

  /** The same forced onto BouncyCastle ({@code -Dshine.ed25519=bc}). */
  @Benchmark
  public boolean projectBouncyCastle() {
    return projectKey.verify(bcVerifier, bytes, 0, signedLength, bytes, signedLength);
  }

  /** A container whose signature fails: ACCP rejects, BouncyCastle confirms. */
  @Benchmark
  public boolean projectAccpRejects() {
    return projectKey.verify(accpVerifier, tampered, 0, signedLength, tampered, signedLength);
  }

  /** A raw key, decoded for this one verification (logins, cards). */
  @Benchmark
  public boolean projectAccpRawKey() {
    return Ed25519Signer.publicKey(rawKey).verify(accpVerifier, bytes, 0, signedLength, bytes, signedLength);
  }

  private boolean verify(Signature signature, PublicKey key, byte[] container) throws GeneralSecurityException {
    signature.initVerify(key);
    signature.update(container, 0, signedLength);
    return signature.verify(container, signedLength, Ed25519Signer.SIGNATURE_SIZE);
  }

  private static PublicKey jcaKey(byte[] raw) throws GeneralSecurityException {
    byte[] spki = Arrays.copyOf(HexFormat.of().parseHex("302a300506032b6570032100"), 44);
    System.arraycopy(raw, 0, spki, 12, 32);
    return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(spki));
  }
}
