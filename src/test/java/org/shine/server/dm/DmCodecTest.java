package org.shine.server.dm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class DmCodecTest {
  private static final HexFormat HEX = HexFormat.of();
  /** RFC 8032 §7.1 TEST 1: a fixed key makes every signature (and so every container) reproducible. */
  private static final byte[] ALICE_PRIVATE =
      HEX.parseHex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
  private static final byte[] ALICE_PUBLIC =
      HEX.parseHex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  private static final Ed25519Signer.KeyPair MALLORY = Ed25519Signer.generate();

  private static final long CREATED_AT = 1_774_700_000_123L;
  private static final long NONCE = 123_456_789L;
  private static final String BASE_KEY = "alice|bob|1774700000123|123456789";
  private static final byte[] BODY = "hello, bob — привет".getBytes(StandardCharsets.UTF_8);

  /** The four kinds as the protocol uses them: a pair with empty ref, a receipt naming a baseKey, a tombstone naming a messageKey. */
  static Stream<Arguments> kinds() {
    return Stream.of(
        Arguments.of(DmKind.INCOMING, ""),
        Arguments.of(DmKind.OUTGOING, ""),
        Arguments.of(DmKind.READ_RECEIPT, "bob|alice|1774699999000|42"),
        Arguments.of(DmKind.TOMBSTONE, BASE_KEY + "|2"));
  }

  private static DmContainer signed(DmKind kind, String ref) {
    return DmCodec.sign(kind, CREATED_AT, NONCE, 7, "alice", "bob", ref, BODY, ALICE_PRIVATE);
  }

  /**
   * The unsigned bytes of PROTOCOL §3 built field by field, independent of DmCodec, so that every field can be set
   * to a value the encoder would refuse.
   */
  private static byte[] layout(int version, int kindCode, long createdAtMs, long nonce, long revision, byte[] from,
      byte[] to, byte[] ref, byte[] body) {
    ByteBuffer out = ByteBuffer.allocate(8 + 1 + 1 + 8 + 8 + 4 + 1 + from.length + 1 + to.length + 2 + ref.length
        + 4 + body.length);
    out.put("SHiNE_DM".getBytes(StandardCharsets.US_ASCII));
    out.put((byte) version);
    out.put((byte) kindCode);
    out.putLong(createdAtMs);
    out.putLong(nonce);
    out.putInt((int) revision);
    out.put((byte) from.length).put(from);
    out.put((byte) to.length).put(to);
    out.putShort((short) ref.length).put(ref);
    out.putInt(body.length).put(body);
    assertThat(out.remaining()).isZero();
    return out.array();
  }

  private static byte[] withSignature(byte[] unsigned) {
    byte[] signature = Ed25519Signer.sign(ALICE_PRIVATE, unsigned);
    byte[] bytes = Arrays.copyOf(unsigned, unsigned.length + signature.length);
    System.arraycopy(signature, 0, bytes, unsigned.length, signature.length);
    return bytes;
  }

  /** A correctly signed container whose content is given field by field. */
  private static byte[] raw(int version, int kindCode, long createdAtMs, long nonce, String from, String to, String ref,
      byte[] body) {
    return withSignature(layout(version, kindCode, createdAtMs, nonce, 0, utf8(from), utf8(to), utf8(ref), body));
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static DmFormatException rejected(byte[] bytes) {
    DmFormatException e = catchThrowableOfType(DmFormatException.class, () -> DmCodec.parse(bytes));
    assertThat(e).as("parse must reject with DmFormatException").isNotNull();
    return e;
  }

  // ---- round trip and layout ----

  @ParameterizedTest(name = "{0} with ref \"{1}\"")
  @MethodSource("kinds")
  @DisplayName("a signed container parses back to the same fields and the exact same bytes")
  void signParseRoundTrip(DmKind kind, String ref) throws DmFormatException {
    DmContainer signed = signed(kind, ref);

    DmContainer parsed = DmCodec.parse(signed.bytes().clone());

    assertThat(parsed.kind()).isEqualTo(kind);
    assertThat(parsed.createdAtMs()).isEqualTo(CREATED_AT);
    assertThat(parsed.nonce()).isEqualTo(NONCE);
    assertThat(parsed.revision()).isEqualTo(7);
    assertThat(parsed.from()).isEqualTo("alice");
    assertThat(parsed.to()).isEqualTo("bob");
    assertThat(parsed.ref()).isEqualTo(ref);
    assertThat(parsed.body()).isEqualTo(BODY);
    assertThat(parsed.bytes()).isEqualTo(signed.bytes());
    assertThat(parsed.signedLength()).isEqualTo(signed.bytes().length - 64);
    assertThat(parsed.baseKey()).isEqualTo(BASE_KEY);
    assertThat(parsed.messageKey()).isEqualTo(BASE_KEY + "|" + kind.code());
    assertThat(parsed.verifySignature(ALICE_PUBLIC)).isTrue();
    // the fields of the container sign() answers agree with what was encoded
    assertThat(signed.kind()).isEqualTo(kind);
    assertThat(signed.ref()).isEqualTo(ref);
    assertThat(signed.body()).isEqualTo(BODY);
    assertThat(signed.revision()).isEqualTo(7);
    // Ed25519 is deterministic: signing the same content again gives identical bytes
    assertThat(signed(kind, ref).bytes()).isEqualTo(signed.bytes());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("kinds")
  @DisplayName("the unsigned bytes follow the PROTOCOL §3 table byte for byte and the signature covers exactly them")
  void byteLayoutMatchesProtocolTable(DmKind kind, String ref) {
    byte[] expected = layout(1, kind.code(), CREATED_AT, NONCE, 7, utf8("alice"), utf8("bob"), utf8(ref), BODY);

    byte[] unsigned = DmCodec.encodeUnsigned(kind, CREATED_AT, NONCE, 7, "alice", "bob", ref, BODY);
    byte[] signed = signed(kind, ref).bytes();

    assertThat(unsigned).isEqualTo(expected);
    assertThat(Arrays.copyOf(signed, unsigned.length)).isEqualTo(expected);
    assertThat(signed).hasSize(unsigned.length + 64);
    assertThat(Ed25519Signer.verify(ALICE_PUBLIC, unsigned, Arrays.copyOfRange(signed, unsigned.length, signed.length)))
        .isTrue();
  }

  @Test
  @DisplayName("the layout is big-endian with the magic, version 1 and the kind at fixed offsets")
  void fixedOffsets() {
    byte[] bytes = DmCodec.encodeUnsigned(DmKind.OUTGOING, 0x0102030405060708L, 0x1112131415161718L, 0x21222324L,
        "a", "bc", "", new byte[] {(byte) 0xEE});

    assertThat(HEX.formatHex(bytes)).isEqualTo(
        "5348694e455f444d" // "SHiNE_DM"
            + "01" + "02" // version, kind
            + "0102030405060708" // createdAtMs
            + "1112131415161718" // nonce
            + "21222324" // revision
            + "01" + "61" // from "a"
            + "02" + "6263" // to "bc"
            + "0000" // ref length 0
            + "00000001" + "ee"); // body
  }

  @Test
  @DisplayName("extreme field values survive the round trip: u32 revision, max i64 times, 32-char logins, u16 ref, 64 KiB body")
  void extremeValuesRoundTrip() throws DmFormatException {
    String longLogin = "a".repeat(32);
    String ref = "é".repeat(300); // 600 UTF-8 bytes: the u16 prefix counts bytes, not chars
    byte[] body = new byte[DmCodec.DEFAULT_MAX_BODY];
    Arrays.fill(body, (byte) 0xA5);

    DmContainer signed = DmCodec.sign(DmKind.READ_RECEIPT, Long.MAX_VALUE, Long.MAX_VALUE, 0xFFFF_FFFFL, longLogin,
        "z_9.-", ref, body, ALICE_PRIVATE);
    DmContainer parsed = DmCodec.parse(signed.bytes());

    assertThat(parsed.revision()).isEqualTo(0xFFFF_FFFFL);
    assertThat(parsed.createdAtMs()).isEqualTo(Long.MAX_VALUE);
    assertThat(parsed.nonce()).isEqualTo(Long.MAX_VALUE);
    assertThat(parsed.from()).isEqualTo(longLogin);
    assertThat(parsed.to()).isEqualTo("z_9.-");
    assertThat(parsed.ref()).isEqualTo(ref);
    assertThat(parsed.body()).isEqualTo(body);
    assertThat(parsed.verifySignature(ALICE_PUBLIC)).isTrue();
    int refOffset = 8 + 1 + 1 + 8 + 8 + 4 + 1 + 32 + 1 + 5;
    assertThat(ByteBuffer.wrap(signed.bytes(), refOffset, 2).getShort()).isEqualTo((short) 600);
  }

  @Test
  @DisplayName("zero values and an empty body are a valid container")
  void zeroValuesRoundTrip() throws DmFormatException {
    DmContainer signed = DmCodec.sign(DmKind.INCOMING, 0, 0, 0, "a", "b", "", new byte[0], ALICE_PRIVATE);

    DmContainer parsed = DmCodec.parse(signed.bytes());

    assertThat(signed.bytes()).hasSize(DmCodec.MIN_SIZE + 2);
    assertThat(parsed.body()).isEmpty();
    assertThat(parsed.messageKey()).isEqualTo("a|b|0|0|1");
    assertThat(parsed.verifySignature(ALICE_PUBLIC)).isTrue();
  }

  // ---- truncation, trailing bytes, bit flips ----

  @ParameterizedTest(name = "{0}")
  @MethodSource("kinds")
  @DisplayName("every proper prefix of a container is rejected as malformed")
  void everyTruncationIsRejected(DmKind kind, String ref) {
    byte[] bytes = signed(kind, ref).bytes();

    for (int length = 0; length < bytes.length; length++) {
      byte[] prefix = Arrays.copyOf(bytes, length);
      DmFormatException e = catchThrowableOfType(DmFormatException.class, () -> DmCodec.parse(prefix));
      assertThat(e).as("prefix of %d of %d bytes", length, bytes.length).isNotNull();
      assertThat(e.tooLarge()).as("prefix of %d bytes", length).isFalse();
    }
  }

  @Test
  @DisplayName("null is rejected as malformed")
  void nullIsRejected() {
    assertThatThrownBy(() -> DmCodec.parse(null)).isInstanceOf(DmFormatException.class);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("kinds")
  @DisplayName("bytes after the signature are rejected")
  void trailingBytesAreRejected(DmKind kind, String ref) {
    byte[] bytes = signed(kind, ref).bytes();

    rejected(Arrays.copyOf(bytes, bytes.length + 1));
    byte[] withSecondSignature = Arrays.copyOf(bytes, bytes.length + 64);
    System.arraycopy(bytes, bytes.length - 64, withSecondSignature, bytes.length, 64);
    rejected(withSecondSignature);
    byte[] twoContainers = Arrays.copyOf(bytes, bytes.length * 2);
    System.arraycopy(bytes, 0, twoContainers, bytes.length, bytes.length);
    rejected(twoContainers);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("kinds")
  @DisplayName("no single-byte change of a signed container is ever accepted as valid")
  void everySingleByteChangeIsRejected(DmKind kind, String ref) {
    byte[] original = signed(kind, ref).bytes();
    int[] masks = {0x01, 0x80, 0xFF};
    int parseRejections = 0;
    int signatureRejections = 0;

    for (int position = 0; position < original.length; position++) {
      for (int mask : masks) {
        byte[] changed = original.clone();
        changed[position] ^= (byte) mask;
        DmContainer parsed;
        try {
          parsed = DmCodec.parse(changed);
        } catch (DmFormatException e) {
          parseRejections++;
          continue;
        }
        assertThat(parsed.verifySignature(ALICE_PUBLIC))
            .as("byte %d of %d XOR 0x%02x must not verify", position, original.length, mask)
            .isFalse();
        signatureRejections++;
      }
    }

    assertThat(parseRejections + signatureRejections).isEqualTo(original.length * masks.length);
    // both defences are exercised: structural fields fail parsing, content and signature fail verification
    assertThat(parseRejections).isPositive();
    assertThat(signatureRejections).isPositive();
  }

  // ---- field validation ----

  @ParameterizedTest(name = "version {0}")
  @ValueSource(ints = {0, 2, 255})
  @DisplayName("an unknown version is rejected")
  void unknownVersion(int version) {
    DmFormatException e = rejected(raw(version, 2, CREATED_AT, NONCE, "alice", "bob", "", BODY));
    assertThat(e.tooLarge()).isFalse();
  }

  @ParameterizedTest(name = "kind {0}")
  @ValueSource(ints = {0, 5, 127, 255})
  @DisplayName("an unknown kind is rejected")
  void unknownKind(int kind) {
    rejected(raw(1, kind, CREATED_AT, NONCE, "alice", "bob", "", BODY));
    rejected(raw(1, kind, CREATED_AT, NONCE, "alice", "bob", BASE_KEY, BODY));
  }

  @Test
  @DisplayName("a wrong magic is rejected")
  void wrongMagic() {
    byte[] bytes = raw(1, 2, CREATED_AT, NONCE, "alice", "bob", "", BODY);
    bytes[0] = 's';
    rejected(withSignature(Arrays.copyOf(bytes, bytes.length - 64)));
  }

  @ParameterizedTest(name = "createdAtMs {0}")
  @ValueSource(longs = {-1, Long.MIN_VALUE})
  @DisplayName("a negative createdAtMs is rejected")
  void negativeCreatedAt(long createdAtMs) {
    rejected(raw(1, 2, createdAtMs, NONCE, "alice", "bob", "", BODY));
  }

  @ParameterizedTest(name = "nonce {0}")
  @ValueSource(longs = {-1, Long.MIN_VALUE})
  @DisplayName("a negative nonce is rejected")
  void negativeNonce(long nonce) {
    rejected(raw(1, 2, CREATED_AT, nonce, "alice", "bob", "", BODY));
  }

  @ParameterizedTest(name = "\"{0}\"")
  // the last one is 33 characters long
  @ValueSource(strings = {"Alice", "ALICE", "al|ce", "", "a b", "é", "alice\n", "abcdefghijklmnopqrstuvwxyz0123456"})
  @DisplayName("an invalid login in from or in to is rejected")
  void invalidLogin(String login) {
    rejected(raw(1, 2, CREATED_AT, NONCE, login, "bob", "", BODY));
    rejected(raw(1, 2, CREATED_AT, NONCE, "alice", login, "", BODY));
  }

  @Test
  @DisplayName("a 32-character login is accepted in from and in to")
  void longestLoginAccepted() throws DmFormatException {
    String login = "abcdefghijklmnopqrstuvwxyz012345";

    DmContainer parsed = DmCodec.parse(raw(1, 2, CREATED_AT, NONCE, login, login, "", BODY));

    assertThat(parsed.from()).isEqualTo(login).hasSize(32);
    assertThat(parsed.to()).isEqualTo(login);
  }

  static Stream<Arguments> invalidUtf8() {
    return Stream.of(
        Arguments.of("truncated two-byte sequence", new byte[] {(byte) 0xC3, 0x28}),
        Arguments.of("lone continuation byte", new byte[] {(byte) 0x80}),
        Arguments.of("overlong encoding of '/'", new byte[] {(byte) 0xC0, (byte) 0xAF}),
        Arguments.of("UTF-16 surrogate", new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80}),
        Arguments.of("0xFF", new byte[] {'a', (byte) 0xFF}));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidUtf8")
  @DisplayName("invalid UTF-8 in from, to or ref is rejected")
  void invalidUtf8Rejected(String description, byte[] invalid) {
    byte[] alice = utf8("alice");
    byte[] bob = utf8("bob");
    byte[] ref = utf8(BASE_KEY);

    rejected(withSignature(layout(1, 2, CREATED_AT, NONCE, 0, invalid, bob, new byte[0], BODY)));
    rejected(withSignature(layout(1, 2, CREATED_AT, NONCE, 0, alice, invalid, new byte[0], BODY)));
    rejected(withSignature(layout(1, 3, CREATED_AT, NONCE, 0, alice, bob, invalid, BODY)));
    byte[] refWithInvalidTail = Arrays.copyOf(ref, ref.length + invalid.length);
    System.arraycopy(invalid, 0, refWithInvalidTail, ref.length, invalid.length);
    rejected(withSignature(layout(1, 4, CREATED_AT, NONCE, 0, alice, bob, refWithInvalidTail, BODY)));
  }

  @ParameterizedTest(name = "kind {0}")
  @ValueSource(ints = {1, 2})
  @DisplayName("kinds 1 and 2 reject a non-empty ref")
  void pairKindsRejectRef(int kind) {
    rejected(raw(1, kind, CREATED_AT, NONCE, "alice", "bob", BASE_KEY, BODY));
    rejected(raw(1, kind, CREATED_AT, NONCE, "alice", "bob", "x", BODY));
  }

  @ParameterizedTest(name = "kind {0}")
  @ValueSource(ints = {3, 4})
  @DisplayName("kinds 3 and 4 reject an empty ref")
  void referringKindsRequireRef(int kind) {
    rejected(raw(1, kind, CREATED_AT, NONCE, "alice", "bob", "", BODY));
  }

  @Test
  @DisplayName("a body over 64 KiB is rejected as too large; exactly 64 KiB is accepted")
  void bodyLimit() throws DmFormatException {
    byte[] atLimit = new byte[64 * 1024];
    byte[] overLimit = new byte[64 * 1024 + 1];

    assertThat(DmCodec.parse(raw(1, 2, CREATED_AT, NONCE, "alice", "bob", "", atLimit)).body()).hasSize(65_536);
    assertThat(rejected(raw(1, 2, CREATED_AT, NONCE, "alice", "bob", "", overLimit)).tooLarge()).isTrue();
  }

  @Test
  @DisplayName("a body length prefix far beyond the limit is too large even before the body bytes are present")
  void hugeBodyLengthPrefix() {
    byte[] bytes = raw(1, 2, CREATED_AT, NONCE, "alice", "bob", "", new byte[0]);
    int bodyLengthOffset = bytes.length - 64 - 4;
    ByteBuffer.wrap(bytes).putInt(bodyLengthOffset, 0xFFFF_FFFF);

    assertThat(rejected(bytes).tooLarge()).isTrue();
  }

  @Test
  @DisplayName("the body limit is configurable per parse call")
  void configurableBodyLimit() throws DmFormatException {
    byte[] bytes = raw(1, 2, CREATED_AT, NONCE, "alice", "bob", "", new byte[101]);

    assertThat(DmCodec.parse(bytes, 101).body()).hasSize(101);
    DmFormatException e = catchThrowableOfType(DmFormatException.class, () -> DmCodec.parse(bytes, 100));
    assertThat(e).isNotNull();
    assertThat(e.tooLarge()).isTrue();
  }

  @Test
  @DisplayName("malformed-but-not-large containers do not claim to be too large")
  void otherErrorsAreNotTooLarge() {
    List<byte[]> malformed = new ArrayList<>();
    malformed.add(raw(9, 2, CREATED_AT, NONCE, "alice", "bob", "", BODY));
    malformed.add(raw(1, 9, CREATED_AT, NONCE, "alice", "bob", "", BODY));
    malformed.add(raw(1, 2, -1, NONCE, "alice", "bob", "", BODY));
    malformed.add(raw(1, 2, CREATED_AT, NONCE, "Alice", "bob", "", BODY));
    malformed.add(raw(1, 3, CREATED_AT, NONCE, "alice", "bob", "", BODY));

    for (byte[] bytes : malformed) {
      assertThat(rejected(bytes).tooLarge()).isFalse();
    }
  }

  @Test
  @DisplayName("the encoder refuses invalid logins and a revision outside u32")
  void encoderRejectsInvalidInput() {
    assertThatThrownBy(() -> DmCodec.encodeUnsigned(DmKind.OUTGOING, 1, 1, 0, "Alice", "bob", "", BODY))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> DmCodec.encodeUnsigned(DmKind.OUTGOING, 1, 1, 0, "alice", "a|b", "", BODY))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> DmCodec.encodeUnsigned(DmKind.OUTGOING, 1, 1, -1, "alice", "bob", "", BODY))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> DmCodec.encodeUnsigned(DmKind.OUTGOING, 1, 1, 0x1_0000_0000L, "alice", "bob", "", BODY))
        .isInstanceOf(IllegalArgumentException.class);
  }

  // ---- keys ----

  @Test
  @DisplayName("keys follow the protocol example exactly")
  void keysMatchProtocolExample() {
    DmContainer outgoing = DmCodec.sign(DmKind.OUTGOING, CREATED_AT, NONCE, 0, "alice", "bob", "", BODY, ALICE_PRIVATE);
    DmContainer incoming = DmCodec.sign(DmKind.INCOMING, CREATED_AT, NONCE, 0, "alice", "bob", "", BODY, ALICE_PRIVATE);

    assertThat(DmKeys.baseKey("alice", "bob", 1774700000123L, 123456789L)).isEqualTo("alice|bob|1774700000123|123456789");
    assertThat(DmKeys.outgoingKey(BASE_KEY)).isEqualTo("alice|bob|1774700000123|123456789|2");
    assertThat(DmKeys.incomingKey(BASE_KEY)).isEqualTo("alice|bob|1774700000123|123456789|1");
    assertThat(DmKeys.messageKey(BASE_KEY, DmKind.READ_RECEIPT)).isEqualTo(BASE_KEY + "|3");
    assertThat(DmKeys.messageKey(BASE_KEY, DmKind.TOMBSTONE)).isEqualTo(BASE_KEY + "|4");
    assertThat(outgoing.baseKey()).isEqualTo(BASE_KEY);
    assertThat(incoming.baseKey()).isEqualTo(BASE_KEY);
    assertThat(outgoing.messageKey()).isEqualTo(BASE_KEY + "|2");
    assertThat(incoming.messageKey()).isEqualTo(BASE_KEY + "|1");
  }

  @ParameterizedTest
  @EnumSource(DmKind.class)
  @DisplayName("each kind's wire code round-trips through fromCode")
  void kindCodes(DmKind kind) {
    assertThat(DmKind.fromCode(kind.code())).isSameAs(kind);
    assertThat(kind.code()).isEqualTo(kind.ordinal() + 1);
  }

  // ---- Ed25519 and logins ----

  @Test
  @DisplayName("Ed25519 matches RFC 8032 test vector 1")
  void rfc8032Vector() {
    byte[] signature = Ed25519Signer.sign(ALICE_PRIVATE, new byte[0]);

    assertThat(Ed25519Signer.publicKeyOf(ALICE_PRIVATE)).isEqualTo(ALICE_PUBLIC);
    assertThat(HEX.formatHex(signature)).isEqualTo("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555"
        + "fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
    assertThat(Ed25519Signer.verify(ALICE_PUBLIC, new byte[0], signature)).isTrue();
  }

  @Test
  @DisplayName("a signature verifies with the signer's key and fails with any other key or message")
  void signVerifyWrongKey() {
    Ed25519Signer.KeyPair pair = Ed25519Signer.generate();
    byte[] message = utf8("the signed bytes");

    byte[] signature = Ed25519Signer.sign(pair.privateKey(), message);

    assertThat(pair.publicKey()).hasSize(32).isEqualTo(Ed25519Signer.publicKeyOf(pair.privateKey()));
    assertThat(signature).hasSize(64);
    assertThat(Ed25519Signer.verify(pair.publicKey(), message, signature)).isTrue();
    assertThat(Ed25519Signer.verify(MALLORY.publicKey(), message, signature)).isFalse();
    assertThat(Ed25519Signer.verify(pair.publicKey(), utf8("the signed byteS"), signature)).isFalse();
    assertThat(Ed25519Signer.verify(pair.publicKey(), message, 0, message.length - 1, signature, 0)).isFalse();
  }

  @Test
  @DisplayName("a container signed by alice does not verify with another user's key, nor one signed by another key with alice's")
  void containerWithWrongKey() {
    DmContainer byAlice = signed(DmKind.OUTGOING, "");
    DmContainer byMallory = DmCodec.sign(DmKind.OUTGOING, CREATED_AT, NONCE, 7, "alice", "bob", "", BODY,
        MALLORY.privateKey());

    assertThat(byAlice.verifySignature(ALICE_PUBLIC)).isTrue();
    assertThat(byAlice.verifySignature(MALLORY.publicKey())).isFalse();
    assertThat(byMallory.verifySignature(ALICE_PUBLIC)).isFalse();
    assertThat(byMallory.verifySignature(MALLORY.publicKey())).isTrue();
  }

  @Test
  @DisplayName("malformed keys and signatures make verification false rather than throw")
  void malformedKeysDoNotThrow() {
    byte[] message = utf8("m");
    byte[] signature = Ed25519Signer.sign(ALICE_PRIVATE, message);
    DmContainer container = signed(DmKind.OUTGOING, "");

    assertThat(Ed25519Signer.verify(null, message, signature)).isFalse();
    assertThat(Ed25519Signer.verify(new byte[31], message, signature)).isFalse();
    assertThat(Ed25519Signer.verify(ALICE_PUBLIC, message, Arrays.copyOf(signature, 63))).isFalse();
    assertThat(Ed25519Signer.verify(ALICE_PUBLIC, message, null)).isFalse();
    assertThat(container.verifySignature((byte[]) null)).isFalse();
    assertThat(container.verifySignature(new byte[33])).isFalse();
    assertThat(container.verifySignature(Ed25519Signer.publicKey(null))).isFalse();
    assertThat(container.verifySignature(Ed25519Signer.publicKey(new byte[33]))).isFalse();
    assertThat(container.verifySignature(Ed25519Signer.publicKey(ALICE_PUBLIC))).isTrue();
    assertThatThrownBy(() -> Ed25519Signer.sign(new byte[31], message)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Ed25519Signer.publicKeyOf(null)).isInstanceOf(IllegalArgumentException.class);
  }

  @ParameterizedTest(name = "\"{0}\"")
  @ValueSource(strings = {"a", "z", "0", "_", ".", "-", "alice", "s1", "a.b-c_9", "abcdefghijklmnopqrstuvwxyz012345"})
  @DisplayName("logins of [a-z0-9_.-]{1,32} are valid")
  void validLogins(String login) {
    assertThat(Logins.isValid(login)).isTrue();
  }

  @ParameterizedTest(name = "\"{0}\"")
  @ValueSource(strings = {"", "A", "Alice", "a|b", "|", "a b", " a", "a\n", "é", "a/b", "a:b",
      "abcdefghijklmnopqrstuvwxyz0123456"})
  @DisplayName("anything else is not a login")
  void invalidLogins(String login) {
    assertThat(Logins.isValid(login)).isFalse();
    assertThat(Logins.isValid(null)).isFalse();
  }

  @Test
  @DisplayName("peekParties reads from and to off the head of a container, and answers null for a head that holds no"
      + " two valid logins, without throwing")
  void peekParties() {
    byte[] bytes = signed(DmKind.INCOMING, "").bytes();
    assertThat(DmCodec.peekParties(bytes)).isEqualTo(new DmCodec.Parties("alice", "bob"));

    byte[] badMagic = bytes.clone();
    badMagic[0] = 'X';
    byte[] badLogin = layout(1, 1, CREATED_AT, NONCE, 0, "Alice!".getBytes(StandardCharsets.UTF_8),
        "bob".getBytes(StandardCharsets.UTF_8), new byte[0], BODY);
    byte[] longFrom = bytes.clone();
    longFrom[8 + 1 + 1 + 8 + 8 + 4] = (byte) 0xff;
    assertThat(DmCodec.peekParties(badMagic)).isNull();
    assertThat(DmCodec.peekParties(Arrays.copyOf(badLogin, badLogin.length + 64))).isNull();
    assertThat(DmCodec.peekParties(longFrom)).as("a from length past the end").isNull();
    assertThat(DmCodec.peekParties(Arrays.copyOf(bytes, 20))).isNull();
    assertThat(DmCodec.peekParties(null)).isNull();
  }
}
