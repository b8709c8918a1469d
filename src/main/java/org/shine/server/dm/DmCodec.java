package org.shine.server.dm;

import java.io.ByteArrayOutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Strict parser and encoder of the binary SHiNE_DM container (PROTOCOL §3); all integers big-endian. */
public final class DmCodec {
  public static final byte[] MAGIC = "SHiNE_DM".getBytes(StandardCharsets.US_ASCII);
  public static final int VERSION = 1;
  public static final int DEFAULT_MAX_BODY = 64 * 1024;
  public static final int MAX_REF = 65_535;
  /** magic + version + kind + createdAtMs + nonce + revision + 3 length prefixes + signature. */
  public static final int MIN_SIZE = 8 + 1 + 1 + 8 + 8 + 4 + 1 + 1 + 2 + 4 + Ed25519Signer.SIGNATURE_SIZE;

  private DmCodec() {
  }

  public static DmContainer parse(byte[] bytes) throws DmFormatException {
    return parse(bytes, DEFAULT_MAX_BODY);
  }

  /** Parses exactly one container; anything else (short, long, bad field) throws with the reason. */
  public static DmContainer parse(byte[] bytes, int maxBodyBytes) throws DmFormatException {
    try {
      return parseChecked(bytes, maxBodyBytes);
    } catch (BufferUnderflowException e) {
      throw new DmFormatException("truncated container");
    }
  }

  /**
   * The author ({@code from}) and counterpart ({@code to}) of a container, read from its head without parsing or
   * checking the rest; null when the head does not hold two valid logins. For limits that must act before a
   * container is parsed in full and verified; whatever is read here is checked again by {@link #parse}.
   */
  public static Parties peekParties(byte[] bytes) {
    int headBytes = MAGIC.length + 1 + 1 + 8 + 8 + 4;
    if (bytes == null || bytes.length < MIN_SIZE
        || !Arrays.equals(bytes, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
      return null;
    }
    ByteBuffer in = ByteBuffer.wrap(bytes).position(headBytes);
    try {
      return new Parties(readLogin(in, "from"), readLogin(in, "to"));
    } catch (DmFormatException | BufferUnderflowException e) {
      return null;
    }
  }

  /** The two logins a container names. */
  public record Parties(String from, String to) {
  }

  private static DmContainer parseChecked(byte[] bytes, int maxBodyBytes) throws DmFormatException {
    if (bytes == null || bytes.length < MIN_SIZE) {
      throw new DmFormatException("container shorter than the minimum of " + MIN_SIZE + " bytes");
    }
    ByteBuffer in = ByteBuffer.wrap(bytes);
    byte[] magic = new byte[MAGIC.length];
    in.get(magic);
    if (!Arrays.equals(magic, MAGIC)) {
      throw new DmFormatException("bad magic");
    }
    int version = Byte.toUnsignedInt(in.get());
    if (version != VERSION) {
      throw new DmFormatException("unsupported version " + version);
    }
    DmKind kind = DmKind.fromCode(Byte.toUnsignedInt(in.get()));
    if (kind == null) {
      throw new DmFormatException("unknown kind");
    }
    long createdAtMs = in.getLong();
    if (createdAtMs < 0) {
      throw new DmFormatException("createdAtMs is negative");
    }
    long nonce = in.getLong();
    if (nonce < 0) {
      throw new DmFormatException("nonce is negative");
    }
    long revision = Integer.toUnsignedLong(in.getInt());
    String from = readLogin(in, "from");
    String to = readLogin(in, "to");
    int refLength = Short.toUnsignedInt(in.getShort());
    String ref = readUtf8(in, refLength, "ref");
    if ((kind == DmKind.INCOMING || kind == DmKind.OUTGOING) != ref.isEmpty()) {
      throw new DmFormatException(ref.isEmpty() ? "ref is required for kind " + kind : "ref must be empty for kind " + kind);
    }
    requireRemaining(in, 4, "body length");
    long bodyLength = Integer.toUnsignedLong(in.getInt());
    if (bodyLength > maxBodyBytes) {
      throw new DmFormatException("body of " + bodyLength + " bytes exceeds the limit of " + maxBodyBytes, true);
    }
    requireRemaining(in, (int) bodyLength, "body");
    byte[] body = new byte[(int) bodyLength];
    in.get(body);
    if (in.remaining() != Ed25519Signer.SIGNATURE_SIZE) {
      throw new DmFormatException(in.remaining() < Ed25519Signer.SIGNATURE_SIZE
          ? "truncated signature" : "trailing bytes after the signature");
    }
    return new DmContainer(kind, createdAtMs, nonce, revision, from, to, ref, body, bytes);
  }

  /** Encodes and signs a container; the author's private key must belong to {@code from}. */
  public static DmContainer sign(DmKind kind, long createdAtMs, long nonce, long revision, String from, String to,
      String ref, byte[] body, byte[] authorPrivateKey) {
    byte[] unsigned = encodeUnsigned(kind, createdAtMs, nonce, revision, from, to, ref, body);
    byte[] signature = Ed25519Signer.sign(authorPrivateKey, unsigned);
    byte[] bytes = Arrays.copyOf(unsigned, unsigned.length + signature.length);
    System.arraycopy(signature, 0, bytes, unsigned.length, signature.length);
    return new DmContainer(kind, createdAtMs, nonce, revision, from, to, ref, body.clone(), bytes);
  }

  /** The bytes the signature covers. */
  public static byte[] encodeUnsigned(DmKind kind, long createdAtMs, long nonce, long revision, String from, String to,
      String ref, byte[] body) {
    if (!Logins.isValid(from) || !Logins.isValid(to)) {
      throw new IllegalArgumentException("invalid login");
    }
    if (revision < 0 || revision > 0xFFFF_FFFFL) {
      throw new IllegalArgumentException("revision out of u32 range");
    }
    byte[] fromBytes = from.getBytes(StandardCharsets.UTF_8);
    byte[] toBytes = to.getBytes(StandardCharsets.UTF_8);
    byte[] refBytes = ref.getBytes(StandardCharsets.UTF_8);
    if (refBytes.length > MAX_REF) {
      throw new IllegalArgumentException("ref too long");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(MIN_SIZE + fromBytes.length + toBytes.length
        + refBytes.length + body.length);
    ByteBuffer head = ByteBuffer.allocate(8 + 1 + 1 + 8 + 8 + 4);
    head.put(MAGIC).put((byte) VERSION).put((byte) kind.code()).putLong(createdAtMs).putLong(nonce)
        .putInt((int) revision);
    out.writeBytes(head.array());
    out.write(fromBytes.length);
    out.writeBytes(fromBytes);
    out.write(toBytes.length);
    out.writeBytes(toBytes);
    out.write(refBytes.length >>> 8);
    out.write(refBytes.length);
    out.writeBytes(refBytes);
    out.writeBytes(ByteBuffer.allocate(4).putInt(body.length).array());
    out.writeBytes(body);
    return out.toByteArray();
  }

  private static String readLogin(ByteBuffer in, String field) throws DmFormatException {
    int length = Byte.toUnsignedInt(in.get());
    String login = readUtf8(in, length, field);
    if (!Logins.isValid(login)) {
      throw new DmFormatException(field + " is not a valid login");
    }
    return login;
  }

  private static String readUtf8(ByteBuffer in, int length, String field) throws DmFormatException {
    requireRemaining(in, length, field);
    ByteBuffer slice = in.slice();
    slice.limit(length);
    in.position(in.position() + length);
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    try {
      CharBuffer chars = decoder.decode(slice);
      return chars.toString();
    } catch (CharacterCodingException e) {
      throw new DmFormatException(field + " is not valid UTF-8");
    }
  }

  private static void requireRemaining(ByteBuffer in, int needed, String field) throws DmFormatException {
    // the signature must still follow whatever field is read here
    if (in.remaining() < (long) needed + Ed25519Signer.SIGNATURE_SIZE) {
      throw new DmFormatException("truncated " + field);
    }
  }
}
