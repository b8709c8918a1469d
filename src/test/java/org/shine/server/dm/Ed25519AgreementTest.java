package org.shine.server.dm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.shine.server.dm.EdwardsMath.BASE;
import static org.shine.server.dm.EdwardsMath.L;
import static org.shine.server.dm.EdwardsMath.challenge;
import static org.shine.server.dm.EdwardsMath.hex;
import static org.shine.server.dm.EdwardsMath.signature;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.bouncycastle.math.ec.rfc8032.Ed25519;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * ACCP and BouncyCastle, as the project calls them, on every class of input an honest signer, a careless one or
 * an attacker can send: they must give the same answer and never throw. The raw providers are compared too, to
 * pin down the classes on which they differ — those the project's rules and its BouncyCastle confirmation exist
 * for (docs/BENCHMARKS.md, "Ed25519 verification").
 */
class Ed25519AgreementTest {
  /** RFC 8032 §7.1 TEST 1..3: key, message, signature. */
  private static final String[][] RFC8032 = {
      {"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
          "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0"
              + "595bbe24655141438e7a100b"},
      {"3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
          "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eae"
              + "b4302aeeb00d291612bb0c00"},
      {"fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
          "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9"
              + "716ed28dc027beceea1ec40a"}};
  private static final byte[] ALICE_PRIVATE =
      hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
  private static final byte[] X509_PREFIX = hex("302a300506032b6570032100");

  /** The classes on which ACCP and BouncyCastle, called directly, give different answers. */
  private static final Set<String> RAW_DISAGREEMENTS = Set.of(
      "small-order key",
      "mixed-order key, cofactored equation only",
      "mixed-order R",
      "small-order R",
      "message above ACCP's 1 MiB");

  private static AccpEd25519 accp;
  private static final BouncyCastleEd25519 BC = new BouncyCastleEd25519();
  private static List<Case> cases;

  /** One input and what the project's rule answers for it. */
  private record Case(String category, byte[] key, byte[] message, byte[] signature, boolean expected) {
    @Override
    public String toString() {
      return category + " [key " + HexFormat.of().formatHex(key) + ", " + message.length + "-byte message]";
    }
  }

  @BeforeAll
  static void setUp() {
    boolean accpPlatform = System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux")
        && List.of("amd64", "x86_64").contains(System.getProperty("os.arch"));
    Ed25519Verifiers.Choice choice = Ed25519Verifiers.choose("auto", Ed25519Verifiers::loadAccp);
    if (accpPlatform) {
      // where the shipped ACCP jar has its native library, it must load: else the fast path silently rots
      assertThat(choice.verifier()).as(choice.reason()).isInstanceOf(AccpEd25519.class);
    }
    assumeThat(choice.verifier()).as(choice.reason()).isInstanceOf(AccpEd25519.class);
    accp = (AccpEd25519) choice.verifier();
    cases = allCases();
  }

  @Test
  @DisplayName("both verification paths give the same answer on every input, the project's rule's answer, and never throw")
  void bothPathsAgree() {
    Map<String, int[]> counts = new TreeMap<>();
    for (Case c : cases) {
      Ed25519Signer.PublicKey key = Ed25519Signer.publicKey(c.key());
      boolean byAccp = key.verify(accp, c.message(), 0, c.message().length, c.signature(), 0);
      boolean byBc = key.verify(BC, c.message(), 0, c.message().length, c.signature(), 0);

      assertThat(byAccp).as("ACCP path against BouncyCastle path on %s", c).isEqualTo(byBc);
      assertThat(byAccp).as("answer on %s", c).isEqualTo(c.expected());
      counts.computeIfAbsent(c.category(), k -> new int[1])[0]++;
    }
    assertThat(counts).hasSizeGreaterThanOrEqualTo(20);
  }

  @Test
  @DisplayName("whatever ACCP alone accepts, BouncyCastle accepts: so ACCP's true needs no confirmation")
  void accpAcceptsOnlyWhatBouncyCastleAccepts() {
    for (Case c : cases) {
      Ed25519Signer.PublicKey key = Ed25519Signer.publicKey(c.key());
      if (Ed25519Rules.acceptsKey(c.key()) && Ed25519Rules.acceptsSignature(c.signature(), 0)
          && accp.accepts(key, c.message(), 0, c.message().length, c.signature(), 0)) {
        assertThat(BC.verify(key, c.message(), 0, c.message().length, c.signature(), 0)).as("%s", c).isTrue();
      }
    }
  }

  @Test
  @DisplayName("called directly, ACCP and BouncyCastle differ on small-order keys, cofactored-only signatures and long messages")
  void rawProvidersDifferOnKnownClasses() throws Exception {
    Set<String> disagreeing = new TreeSet<>();
    Signature accpSignature = Signature.getInstance("Ed25519", Ed25519Verifiers.loadAccp());
    for (Case c : cases) {
      if (rawAccp(c, accpSignature) != rawBouncyCastle(c)) {
        disagreeing.add(c.category());
      }
    }
    assertThat(disagreeing).containsExactlyInAnyOrderElementsOf(RAW_DISAGREEMENTS);
  }

  @Test
  @DisplayName("the rules turn away exactly BouncyCastle's rejected key encodings: non-canonical and small-order")
  void keyRulesMatchBouncyCastle() {
    List<byte[]> keys = new ArrayList<>(EdwardsMath.smallOrderEncodings());
    keys.addAll(EdwardsMath.nonCanonicalEncodings());
    Random random = new Random(7);
    for (int i = 0; i < 200; i++) {
      keys.add(Ed25519Signer.generate().publicKey());
      byte[] noise = new byte[32];
      random.nextBytes(noise);
      keys.add(noise);
    }
    for (byte[] key : keys) {
      boolean bcAccepts = Ed25519.validatePublicKeyPartial(key, 0);
      boolean onCurve = EdwardsMath.decode(key, false) != null;
      assertThat(Ed25519Rules.acceptsKey(key) && onCurve).as(HexFormat.of().formatHex(key)).isEqualTo(bcAccepts);
    }
  }

  // ---- the raw providers, each exception a rejection ----

  private static boolean rawAccp(Case c, Signature accpSignature) {
    try {
      byte[] spki = Arrays.copyOf(X509_PREFIX, 44);
      System.arraycopy(c.key(), 0, spki, 12, Math.min(32, c.key().length));
      accpSignature.initVerify(KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(spki)));
      accpSignature.update(c.message());
      return accpSignature.verify(c.signature());
    } catch (Exception e) {
      return false;
    }
  }

  private static boolean rawBouncyCastle(Case c) {
    try {
      return Ed25519.verify(c.signature(), 0, c.key(), 0, c.message(), 0, c.message().length);
    } catch (RuntimeException e) {
      return false;
    }
  }

  // ---- the inputs ----

  private static List<Case> allCases() {
    List<Case> all = new ArrayList<>();
    Random random = new Random(20_260_101);
    List<byte[][]> valid = validVectors();
    for (byte[][] v : valid) {
      byte[] key = v[0];
      byte[] message = v[1];
      byte[] sig = v[2];
      all.add(new Case("valid", key, message, sig, true));
      for (int length = 0; length < 64; length++) {
        all.add(new Case("truncated signature", key, message, Arrays.copyOf(sig, length), false));
      }
      for (int bit = 0; bit < 512; bit++) {
        all.add(new Case("signature bit flip", key, message, flip(sig, bit / 8, 1 << (bit % 8)), false));
      }
      for (int i = 0; i < 64; i++) {
        all.add(new Case("signature byte flip", key, message, flip(sig, i, 0xFF), false));
      }
      for (int i : messagePositions(message.length)) {
        for (int bit = 0; bit < 8; bit++) {
          all.add(new Case("message bit flip", key, flip(message, i, 1 << bit), sig, false));
        }
        all.add(new Case("message byte flip", key, flip(message, i, 0xFF), sig, false));
      }
      all.add(new Case("message extended", key, Arrays.copyOf(message, message.length + 1), sig, false));
      if (message.length > 0) {
        all.add(new Case("message truncated", key, Arrays.copyOf(message, message.length - 1), sig, false));
      }
      all.add(new Case("signature under another key", Ed25519Signer.generate().publicKey(), message, sig, false));
      BigInteger s = EdwardsMath.scalarOf(sig);
      byte[] r = Arrays.copyOf(sig, 32);
      for (BigInteger nonCanonical = s.add(L); nonCanonical.bitLength() <= 256; nonCanonical = nonCanonical.add(L)) {
        all.add(new Case("non-canonical S (S + nL)", key, message, signature(r, nonCanonical), false));
      }
      all.add(new Case("S = L", key, message, signature(r, L), false));
      all.add(new Case("S = 2^256 - 1", key, message, signature(r, BigInteger.TWO.pow(256).subtract(BigInteger.ONE)),
          false));
      for (int seed = 2; seed < 40; seed += 9) {
        byte[] offCurve = EdwardsMath.offCurveEncoding(seed + random.nextInt(1000));
        all.add(new Case("R not on the curve", key, message, withR(sig, offCurve), false));
        all.add(new Case("R not on the curve", key, message, withR(sig, flip(offCurve, 31, 0x80)), false));
      }
      for (byte[] nonCanonicalR : EdwardsMath.nonCanonicalEncodings()) {
        all.add(new Case("non-canonical R (y >= p)", key, message, withR(sig, nonCanonicalR), false));
      }
      all.add(new Case("all-zero signature", key, message, new byte[64], false));
      all.add(new Case("all-zero key", new byte[32], message, sig, false));
    }
    all.add(new Case("all-zero key and signature", new byte[32], new byte[0], new byte[64], false));
    all.add(new Case("all-zero key and signature", new byte[32], "m".getBytes(StandardCharsets.UTF_8), new byte[64],
        false));

    byte[] message = container(200).bytes();
    message = Arrays.copyOf(message, message.length - 64);
    byte[] honestSig = Ed25519Signer.sign(ALICE_PRIVATE, message);
    addKeyClasses(all, message, honestSig, random);
    addCofactorClasses(all, message, random);

    byte[] huge = new byte[AccpEd25519.MAX_MESSAGE + 1];
    random.nextBytes(huge);
    byte[] alicePublic = Ed25519Signer.publicKeyOf(ALICE_PRIVATE);
    byte[] hugeSig = Ed25519Signer.sign(ALICE_PRIVATE, huge);
    all.add(new Case("message above ACCP's 1 MiB", alicePublic, huge, hugeSig, true));
    all.add(new Case("message above ACCP's 1 MiB, changed", alicePublic, flip(huge, huge.length / 2, 1), hugeSig, false));
    return all;
  }

  /** Small-order, non-canonical and off-curve keys, each with forged, foreign and zero signatures. */
  private static void addKeyClasses(List<Case> all, byte[] message, byte[] honestSig, Random random) {
    for (byte[] smallOrder : EdwardsMath.smallOrderEncodings()) {
      byte[] forged = forgeUnderSmallOrderKey(smallOrder, message, random);
      all.add(new Case("small-order key", smallOrder, message, forged, false));
      all.add(new Case("small-order key", smallOrder, message, honestSig, false));
      all.add(new Case("small-order key", smallOrder, message, new byte[64], false));
    }
    // the non-canonical encodings of small-order points are among those above; the others name points of large
    // order, for which nobody knows a discrete log, so no signature of theirs can be forged
    for (byte[] nonCanonical : EdwardsMath.nonCanonicalEncodings()) {
      all.add(new Case("non-canonical key (y >= p)", nonCanonical, message, honestSig, false));
    }
    for (int seed = 3; seed < 60; seed += 11) {
      byte[] offCurve = EdwardsMath.offCurveEncoding(seed);
      all.add(new Case("key not on the curve", offCurve, message, honestSig, false));
      all.add(new Case("key not on the curve", flip(offCurve, 31, 0x80), message, honestSig, false));
    }
  }

  /**
   * Signatures that only the key owner can make and no honest signer does: a key or an R with a small-order
   * component. BouncyCastle's cofactored equation accepts them, ACCP's cofactorless one only when the component
   * cancels; the project answers as BouncyCastle does.
   */
  private static void addCofactorClasses(List<Case> all, byte[] message, Random random) {
    BigInteger a = EdwardsMath.secretScalar(ALICE_PRIVATE);
    EdwardsMath.Point publicPoint = BASE.times(a);
    byte[] publicKey = publicPoint.encode();
    List<EdwardsMath.Point> torsion = EdwardsMath.torsion();
    for (int t = 1; t < 8; t++) {
      EdwardsMath.Point torsionPoint = torsion.get(t);
      byte[] mixedKey = publicPoint.add(torsionPoint).encode();
      // R = rB, S = r + ka: [S]B - [k]A' = R - [k]T, which is R only when [k]T is the identity
      for (int found = 0; found < 2; ) {
        BigInteger r = new BigInteger(252, random);
        byte[] rBytes = BASE.times(r).encode();
        BigInteger k = challenge(rBytes, mixedKey, message);
        byte[] sig = signature(rBytes, r.add(k.multiply(a)).mod(L));
        boolean cofactorless = torsionPoint.times(k).isIdentity();
        all.add(new Case(cofactorless ? "mixed-order key, both equations" : "mixed-order key, cofactored equation only",
            mixedKey, message, sig, true));
        found += cofactorless ? 0 : 1;
      }
      // R = rB - [k]T, guessing [k]T before k is known: valid under both equations
      for (int tries = 0; tries < 400; tries++) {
        BigInteger r = new BigInteger(252, random);
        EdwardsMath.Point guess = torsion.get(random.nextInt(8));
        byte[] rBytes = BASE.times(r).add(guess.negate()).encode();
        BigInteger k = challenge(rBytes, mixedKey, message);
        if (torsionPoint.times(k).equals(guess)) {
          all.add(new Case("mixed-order key, both equations", mixedKey, message,
              signature(rBytes, r.add(k.multiply(a)).mod(L)), true));
          break;
        }
      }
      // R = rB + T: [S]B - [k]A = rB, off R by T
      BigInteger r = new BigInteger(252, random);
      byte[] mixedR = BASE.times(r).add(torsionPoint).encode();
      BigInteger k = challenge(mixedR, publicKey, message);
      all.add(new Case("mixed-order R", publicKey, message, signature(mixedR, r.add(k.multiply(a)).mod(L)), true));
    }
    for (int t = 0; t < 8; t++) {
      // R = T, S = ka: [S]B - [k]A is the identity, which is R only for T the identity
      byte[] smallR = torsion.get(t).encode();
      BigInteger k = challenge(smallR, publicKey, message);
      all.add(new Case(t == 0 ? "R the identity" : "small-order R", publicKey, message,
          signature(smallR, k.multiply(a).mod(L)), true));
    }
    for (byte[] smallR : EdwardsMath.smallOrderEncodings()) {
      if (EdwardsMath.decode(smallR, false) == null) {
        // y >= p, or x = 0 with the sign bit: R must be canonical, so every provider rejects it
        BigInteger k = challenge(smallR, publicKey, message);
        all.add(new Case("non-canonical small-order R", publicKey, message,
            signature(smallR, k.multiply(a).mod(L)), false));
      }
    }
  }

  /**
   * A signature of anybody's choosing that the cofactorless equation accepts under a small-order key A (as a lenient
   * decoder reads it): R = [s]B - [k]A, guessing [k]A among the eight small-order points before k is known.
   */
  private static byte[] forgeUnderSmallOrderKey(byte[] encodedKey, byte[] message, Random random) {
    EdwardsMath.Point key = EdwardsMath.decode(encodedKey, true);
    assertThat(key.times(8).isIdentity()).isTrue();
    List<EdwardsMath.Point> torsion = EdwardsMath.torsion();
    for (int tries = 0; tries < 1000; tries++) {
      BigInteger s = new BigInteger(252, random);
      EdwardsMath.Point guess = torsion.get(random.nextInt(8));
      byte[] r = BASE.times(s).add(guess.negate()).encode();
      if (key.times(challenge(r, encodedKey, message)).equals(guess)) {
        return signature(r, s);
      }
    }
    throw new AssertionError("no forgery found");
  }

  /** key, message, signature: the RFC 8032 vectors and the project's containers, each under ALICE and a fresh key. */
  private static List<byte[][]> validVectors() {
    List<byte[][]> vectors = new ArrayList<>();
    for (String[] v : RFC8032) {
      vectors.add(new byte[][] {hex(v[0]), hex(v[1]), hex(v[2])});
    }
    List<DmContainer> containers = new ArrayList<>();
    for (DmKind kind : DmKind.values()) {
      String ref = switch (kind) {
        case INCOMING, OUTGOING -> "";
        case READ_RECEIPT -> "bob|alice|1774699999000|42";
        case TOMBSTONE -> "alice|bob|1774700000123|123456789|2";
      };
      containers.add(DmCodec.sign(kind, 1_774_700_000_123L, 123_456_789L, 7, "alice", "bob", ref,
          "hello, bob — привет".getBytes(StandardCharsets.UTF_8), ALICE_PRIVATE));
    }
    containers.add(DmCodec.sign(DmKind.INCOMING, 0, 0, 0, "a", "b", "", new byte[0], ALICE_PRIVATE));
    byte[] maxBody = new byte[DmCodec.DEFAULT_MAX_BODY];
    Arrays.fill(maxBody, (byte) 0xA5);
    containers.add(DmCodec.sign(DmKind.READ_RECEIPT, Long.MAX_VALUE, Long.MAX_VALUE, 0xFFFF_FFFFL, "a".repeat(32),
        "z_9.-", "é".repeat(300), maxBody, ALICE_PRIVATE));
    containers.add(container(200));
    for (DmContainer c : containers) {
      byte[] signed = Arrays.copyOf(c.bytes(), c.signedLength());
      byte[] sig = Arrays.copyOfRange(c.bytes(), c.signedLength(), c.bytes().length);
      vectors.add(new byte[][] {Ed25519Signer.publicKeyOf(ALICE_PRIVATE), signed, sig});
    }
    Ed25519Signer.KeyPair other = Ed25519Signer.generate();
    byte[] challenge = "SHiNE_AUTH|s1|challenge".getBytes(StandardCharsets.UTF_8);
    vectors.add(new byte[][] {other.publicKey(), challenge, Ed25519Signer.sign(other.privateKey(), challenge)});
    byte[] signed = Arrays.copyOf(container(200).bytes(), container(200).signedLength());
    vectors.add(new byte[][] {other.publicKey(), signed, Ed25519Signer.sign(other.privateKey(), signed)});
    return vectors;
  }

  /** A signed OUTGOING container with a body of {@code bodyBytes}, the size the benchmark uses. */
  static DmContainer container(int bodyBytes) {
    byte[] body = new byte[bodyBytes];
    new Random(bodyBytes).nextBytes(body);
    return DmCodec.sign(DmKind.OUTGOING, 1_774_700_000_123L, 42, 0, "alice", "bob", "", body, ALICE_PRIVATE);
  }

  /**
   * Every byte of a message up to 128 bytes; of a longer one its first and last 64 bytes and 64 more spread over the
   * middle. The message only enters through SHA-512, so each further position would test the same thing again.
   */
  private static List<Integer> messagePositions(int length) {
    List<Integer> positions = new ArrayList<>();
    int stride = Math.max(1, length / 64);
    for (int i = 0; i < length; i++) {
      if (length <= 128 || i < 64 || i >= length - 64 || i % stride == 0) {
        positions.add(i);
      }
    }
    return positions;
  }

  private static byte[] flip(byte[] bytes, int index, int mask) {
    byte[] copy = bytes.clone();
    copy[index] ^= (byte) mask;
    return copy;
  }

  private static byte[] withR(byte[] sig, byte[] r) {
    byte[] copy = sig.clone();
    System.arraycopy(r, 0, copy, 0, 32);
    return copy;
  }
}
