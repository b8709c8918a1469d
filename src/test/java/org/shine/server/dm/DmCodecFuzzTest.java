package org.shine.server.dm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import org.shine.server.support.FuzzTries;

/**
 * Property-based tests of the SHiNE_DM codec (PROTOCOL §3), without a server: whatever bytes arrive, the parser
 * either refuses them with a {@link DmFormatException} or returns a container that re-encodes to exactly those
 * bytes; a mutated container never verifies; a signed container parses back to its fields.
 */
@AddLifecycleHook(FuzzTries.class)
class DmCodecFuzzTest {
  private static final Ed25519Signer.KeyPair AUTHOR = Ed25519Signer.generate();
  private static final String LOGIN_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_.-";
  /** Offsets after the fixed head: magic 8, version, kind, createdAtMs 8, nonce 8, revision 4. */
  private static final int FROM_LENGTH_OFFSET = 8 + 1 + 1 + 8 + 8 + 4;

  /** A valid container's fields. */
  record Fields(DmKind kind, long createdAtMs, long nonce, long revision, String from, String to, String ref,
      byte[] body) {
    DmContainer sign() {
      return DmCodec.sign(kind, createdAtMs, nonce, revision, from, to, ref, body, AUTHOR.privateKey());
    }
  }

  /** One change to a container's bytes; {@code position} and {@code value} are taken modulo what fits. */
  record ByteMutation(Kind kind, int position, int value) {
    enum Kind { FLIP_BIT, SET_BYTE, INSERT, DELETE, TRUNCATE, APPEND, LENGTH_FIELD, SWAP }

    byte[] apply(byte[] in) {
      int at = in.length == 0 ? 0 : Math.floorMod(position, in.length);
      return switch (kind) {
        case FLIP_BIT -> with(in, at, (byte) (in[at] ^ (1 << Math.floorMod(value, 8))));
        case SET_BYTE -> with(in, at, (byte) value);
        case INSERT -> insert(in, at, (byte) value);
        case DELETE -> delete(in, at);
        case TRUNCATE -> Arrays.copyOf(in, at);
        case APPEND -> insert(in, in.length, (byte) value);
        case LENGTH_FIELD -> lengthField(in);
        case SWAP -> swap(in, at, Math.floorMod(value, in.length));
      };
    }

    /**
     * Writes {@code value} over one of the four length prefixes (from, to, ref, body) where the earlier prefixes
     * say they are; a container an earlier mutation made too short for that prefix is left as it is.
     */
    private byte[] lengthField(byte[] in) {
      int[] offsets = new int[4];
      offsets[0] = FROM_LENGTH_OFFSET;
      offsets[1] = offsets[0] + 1 + (offsets[0] < in.length ? Byte.toUnsignedInt(in[offsets[0]]) : 0);
      offsets[2] = offsets[1] + 1 + (offsets[1] < in.length ? Byte.toUnsignedInt(in[offsets[1]]) : 0);
      offsets[3] = offsets[2] + 2 + (offsets[2] + 2 <= in.length
          ? Short.toUnsignedInt(ByteBuffer.wrap(in).getShort(offsets[2])) : 0);
      int field = Math.floorMod(position, 4);
      int width = field < 2 ? 1 : field == 2 ? 2 : 4;
      if (offsets[field] + width > in.length) {
        return in;
      }
      byte[] out = in.clone();
      ByteBuffer buffer = ByteBuffer.wrap(out);
      switch (width) {
        case 1 -> out[offsets[field]] = (byte) value;
        case 2 -> buffer.putShort(offsets[field], (short) value);
        default -> buffer.putInt(offsets[field], value);
      }
      return out;
    }

    private static byte[] with(byte[] in, int at, byte b) {
      byte[] out = in.clone();
      out[at] = b;
      return out;
    }

    private static byte[] insert(byte[] in, int at, byte b) {
      byte[] out = new byte[in.length + 1];
      System.arraycopy(in, 0, out, 0, at);
      out[at] = b;
      System.arraycopy(in, at, out, at + 1, in.length - at);
      return out;
    }

    private static byte[] delete(byte[] in, int at) {
      byte[] out = new byte[in.length - 1];
      System.arraycopy(in, 0, out, 0, at);
      System.arraycopy(in, at + 1, out, at, in.length - at - 1);
      return out;
    }

    private static byte[] swap(byte[] in, int a, int b) {
      byte[] out = in.clone();
      out[a] = in[b];
      out[b] = in[a];
      return out;
    }
  }

  @Property(tries = 2_000)
  @Label("any bytes: a DmFormatException or a container that re-encodes to exactly those bytes")
  void anyBytesParseExactlyOrFail(@ForAll("anyBytes") byte[] bytes) {
    assertParsesExactlyOrRefuses(bytes, DmCodec.DEFAULT_MAX_BODY);
  }

  @Property(tries = 2_000)
  @Label("a mutated valid container is refused, or parses exactly and then verifies only if unchanged")
  void mutatedContainersNeverVerify(@ForAll("validFields") Fields fields,
      @ForAll("byteMutations") List<ByteMutation> mutations) {
    byte[] original = fields.sign().bytes();
    byte[] mutated = original;
    for (ByteMutation mutation : mutations) {
      if (mutated.length > DmCodec.MIN_SIZE) {
        mutated = mutation.apply(mutated);
      }
    }
    DmContainer parsed = assertParsesExactlyOrRefuses(mutated, DmCodec.DEFAULT_MAX_BODY);
    if (parsed != null) {
      assertThat(parsed.verifySignature(AUTHOR.publicKey())).as("signature of the mutated bytes")
          .isEqualTo(Arrays.equals(mutated, original));
    }
  }

  @Property(tries = 1_000)
  @Label("a signed container parses back to its fields and keys; a smaller body limit refuses it as too large")
  void signedContainersRoundTrip(@ForAll("validFields") Fields fields, @ForAll("bodyLimits") int maxBody)
      throws DmFormatException {
    DmContainer signed = fields.sign();
    DmContainer parsed = DmCodec.parse(signed.bytes());

    assertThat(parsed.kind()).isEqualTo(fields.kind());
    assertThat(parsed.createdAtMs()).isEqualTo(fields.createdAtMs());
    assertThat(parsed.nonce()).isEqualTo(fields.nonce());
    assertThat(parsed.revision()).isEqualTo(fields.revision());
    assertThat(parsed.from()).isEqualTo(fields.from());
    assertThat(parsed.to()).isEqualTo(fields.to());
    assertThat(parsed.ref()).isEqualTo(fields.ref());
    assertThat(parsed.body()).isEqualTo(fields.body());
    assertThat(parsed.verifySignature(AUTHOR.publicKey())).isTrue();
    assertThat(parsed.messageKey()).isEqualTo(fields.from() + "|" + fields.to() + "|" + fields.createdAtMs() + "|"
        + fields.nonce() + "|" + fields.kind().code());
    try {
      DmCodec.parse(signed.bytes(), maxBody);
      assertThat(fields.body().length).as("body within the limit").isLessThanOrEqualTo(maxBody);
    } catch (DmFormatException e) {
      assertThat(e.tooLarge()).as(e.getMessage()).isTrue();
      assertThat(fields.body().length).isGreaterThan(maxBody);
    }
  }

  /** Parses {@code bytes}; on success the parse must be exact (same bytes, same encoding). */
  private static DmContainer assertParsesExactlyOrRefuses(byte[] bytes, int maxBody) {
    DmContainer parsed;
    try {
      parsed = DmCodec.parse(bytes, maxBody);
    } catch (DmFormatException e) {
      assertThat(e.getMessage()).isNotBlank();
      return null;
    }
    assertThat(parsed.bytes()).isEqualTo(bytes);
    assertThat(parsed.body().length).isLessThanOrEqualTo(maxBody);
    byte[] unsigned = DmCodec.encodeUnsigned(parsed.kind(), parsed.createdAtMs(), parsed.nonce(), parsed.revision(),
        parsed.from(), parsed.to(), parsed.ref(), parsed.body());
    assertThat(unsigned).as("re-encoded fields").isEqualTo(Arrays.copyOf(bytes, parsed.signedLength()));
    return parsed;
  }

  @Provide
  Arbitrary<byte[]> anyBytes() {
    Arbitrary<byte[]> random = Arbitraries.bytes().array(byte[].class).ofMaxSize(400);
    Arbitrary<byte[]> afterMagic = Combinators.combine(Arbitraries.integers().between(0, 6),
        Arbitraries.bytes().array(byte[].class).ofMinSize(DmCodec.MIN_SIZE - 10).ofMaxSize(400))
        .as((kind, rest) -> {
          byte[] out = Arrays.copyOf(DmCodec.MAGIC, DmCodec.MAGIC.length + 2 + rest.length);
          out[DmCodec.MAGIC.length] = 1;
          out[DmCodec.MAGIC.length + 1] = kind.byteValue();
          System.arraycopy(rest, 0, out, DmCodec.MAGIC.length + 2, rest.length);
          return out;
        });
    return Arbitraries.oneOf(random, afterMagic);
  }

  @Provide
  Arbitrary<Fields> validFields() {
    Arbitrary<String> login = Arbitraries.strings().withChars(LOGIN_CHARS).ofMinLength(1).ofMaxLength(32);
    Arbitrary<String> ref = Arbitraries.oneOf(Arbitraries.strings().all().ofMaxLength(200),
        Arbitraries.strings().withChars("é|ш\u0301\u202E0123456789").ofMaxLength(300))
        .filter(text -> !text.isEmpty() && new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8)
            .equals(text));
    Arbitrary<byte[]> body = Arbitraries.oneOf(Arbitraries.bytes().array(byte[].class).ofMaxSize(300),
        Arbitraries.integers().between(DmCodec.DEFAULT_MAX_BODY - 2, DmCodec.DEFAULT_MAX_BODY).map(byte[]::new));
    return Combinators.combine(Arbitraries.of(DmKind.class), Arbitraries.longs().greaterOrEqual(0),
        Arbitraries.longs().greaterOrEqual(0), Arbitraries.longs().between(0, 0xFFFF_FFFFL), login, login, ref, body)
        .as((kind, createdAtMs, nonce, revision, from, to, someRef, someBody) -> new Fields(kind, createdAtMs, nonce,
            revision, from, to, kind == DmKind.INCOMING || kind == DmKind.OUTGOING ? "" : someRef, someBody));
  }

  @Provide
  Arbitrary<List<ByteMutation>> byteMutations() {
    return Combinators.combine(Arbitraries.of(ByteMutation.Kind.class), Arbitraries.integers(),
        Arbitraries.integers()).as(ByteMutation::new).list().ofMinSize(1).ofMaxSize(4);
  }

  @Provide
  Arbitrary<Integer> bodyLimits() {
    return Arbitraries.oneOf(Arbitraries.integers().between(0, 400),
        Arbitraries.just(DmCodec.DEFAULT_MAX_BODY), Arbitraries.just(DmCodec.DEFAULT_MAX_BODY - 1));
  }
}
