package org.shine.server.bus;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;

/**
 * The one codec for command and result records inside a node: passes the immutable record by reference. Records
 * never cross the cluster (sends of them are local-only); what crosses nodes is JSON text.
 */
public final class LocalRecordCodec<T> implements MessageCodec<T, T> {
  private final String name;

  private LocalRecordCodec(Class<T> type) {
    this.name = "local:" + type.getName();
  }

  /**
   * Registers the codec as the default for each record type; a type already registered on this Vertx (another
   * instance of the same verticle, or a verticle that serves the same records) is left as it is.
   */
  public static void register(Vertx vertx, Class<?>... types) {
    for (Class<?> type : types) {
      register(vertx, type);
    }
  }

  private static <T> void register(Vertx vertx, Class<T> type) {
    try {
      vertx.eventBus().registerDefaultCodec(type, new LocalRecordCodec<>(type));
    } catch (IllegalStateException alreadyRegistered) {
      // registered by an earlier deployment on this Vertx: the same codec
    }
  }

  @Override
  public void encodeToWire(Buffer buffer, T value) {
    throw new UnsupportedOperationException(name + " is local-only");
  }

  @Override
  public T decodeFromWire(int pos, Buffer buffer) {
    throw new UnsupportedOperationException(name + " is local-only");
  }

  @Override
  public T transform(T value) {
    return value;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public byte systemCodecID() {
    return -1;
  }
}
