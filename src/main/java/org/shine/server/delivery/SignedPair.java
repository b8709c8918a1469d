package org.shine.server.delivery;

import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;
import org.shine.server.dm.DmKind;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;

/** Both copies of one logical message, parsed and checked to agree (PROTOCOL §5, SendMessagePair checks). */
record SignedPair(DmContainer incoming, DmContainer outgoing) {

  static SignedPair parse(byte[] incomingBlob, byte[] outgoingBlob) {
    DmContainer incoming = parseContainer(incomingBlob, "incomingBlobB64");
    DmContainer outgoing = parseContainer(outgoingBlob, "outgoingBlobB64");
    if (incoming.kind() != DmKind.INCOMING || outgoing.kind() != DmKind.OUTGOING) {
      throw ProtocolException.badRequest(ErrorCode.WRONG_KIND,
          "incomingBlobB64 must be kind 1 (INCOMING) and outgoingBlobB64 kind 2 (OUTGOING)");
    }
    if (!incoming.from().equals(outgoing.from()) || !incoming.to().equals(outgoing.to())
        || incoming.createdAtMs() != outgoing.createdAtMs() || incoming.nonce() != outgoing.nonce()
        || incoming.revision() != outgoing.revision()) {
      throw ProtocolException.badRequest(ErrorCode.PAIR_MISMATCH,
          "the two copies must agree on from, to, createdAtMs, nonce and revision");
    }
    if (outgoing.to().equals(outgoing.from())) {
      throw ProtocolErrors.selfMessage();
    }
    return new SignedPair(incoming, outgoing);
  }

  static DmContainer parseContainer(byte[] blob, String field) {
    try {
      return DmCodec.parse(blob);
    } catch (DmFormatException e) {
      if (e.tooLarge()) {
        throw ProtocolErrors.containerTooLarge(field + ": " + e.getMessage());
      }
      throw ProtocolException.badRequest(ErrorCode.BAD_CONTAINER, field + ": " + e.getMessage());
    }
  }

  String baseKey() {
    return outgoing.baseKey();
  }

  String from() {
    return outgoing.from();
  }

  String to() {
    return outgoing.to();
  }

  long revision() {
    return outgoing.revision();
  }
}
