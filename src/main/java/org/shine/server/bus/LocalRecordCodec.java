package org.shine.server.bus;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;
import java.util.List;

/**
 * The one codec for command and result records inside a node: passes the immutable record by reference. Records
 * never cross the cluster (sends of them are local-only); what crosses nodes is JSON text.
 */
public final class LocalRecordCodec<T> implements MessageCodec<T, T> {
  private static final String REGISTERED = "shine.local-codecs";
  private final String name;

  private LocalRecordCodec(Class<T> type) {
    this.name = "local:" + type.getName();
  }

  /**
   * Registers the codec as the default for each of {@code types}, once per Vert.x instance: a second call on the same
   * instance (another node started in the same JVM on it) changes nothing.
   */
  public static void registerOnce(Vertx vertx, List<Class<?>> types) {
    if (vertx.sharedData().getLocalMap(REGISTERED).putIfAbsent(REGISTERED, Boolean.TRUE) != null) {
      return;
    }
    for (Class<?> type : types) {
      register(vertx, type);
    }
  }

  private static <T> void register(Vertx vertx, Class<T> type) {
    vertx.eventBus().registerDefaultCodec(type, new LocalRecordCodec<>(type));
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
