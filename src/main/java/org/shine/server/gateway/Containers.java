package org.shine.server.gateway;

import org.shine.server.protocol.Fields;
import org.shine.server.protocol.ProtocolErrors;

/** The container limit of PROTOCOL §2, applied to every {@code ...BlobB64} field before it is decoded. */
final class Containers {
  /** 70 KiB of container is at most this many base64 characters. */
  static final int MAX_CONTAINER_BYTES = 70 * 1024;
  private static final int MAX_CONTAINER_B64 = (MAX_CONTAINER_BYTES + 2) / 3 * 4;

  private Containers() {
  }

  /** The decoded container in field {@code name}; 413 beyond the limit. */
  static byte[] field(Fields fields, String name) {
    if (fields.textLength(name) > MAX_CONTAINER_B64) {
      throw ProtocolErrors.containerTooLarge(name + " exceeds the container limit of " + MAX_CONTAINER_BYTES
          + " bytes");
    }
    return fields.base64(name, -1);
  }
}
