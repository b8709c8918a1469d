package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.VertxException;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.net.ConnectException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.shine.server.bus.Failures;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;

/** Which failures the wire calls storage unavailable (503), overloaded (429) or internal (500). */
class StorageErrorsTest {

  @ParameterizedTest
  @ValueSource(strings = {"55000", "57P01", "57P02", "57P03", "57014", "08000", "08006", "08001", "53300", "53100"})
  @DisplayName("SQLSTATEs of a database that refuses, drops or cuts work are storage unavailable: 503")
  void unavailableStates(String state) {
    PgException failure = new PgException("refused", "FATAL", state, null);

    assertThat(StorageErrors.isUnavailable(failure)).isTrue();
    assertUnavailable(failure);
  }

  @ParameterizedTest
  @ValueSource(strings = {"23505", "23514", "42601", "22P02", "40001"})
  @DisplayName("constraint, syntax and data errors are not storage trouble: 500")
  void otherStates(String state) {
    PgException failure = new PgException("bad", "ERROR", state, null);

    assertThat(StorageErrors.isUnavailable(failure)).isFalse();
    assertThat(Failures.classify(failure).status()).isEqualTo(500);
  }

  @ParameterizedTest
  @ValueSource(strings = {"Connection is not active now, current status: CLOSED",
      "Pending requests failed to be sent due to connection has been closed.", "Timeout waiting for connection",
      "Pool closed"})
  @DisplayName("the pool's words for a connection that died under it are storage unavailable: 503")
  void poolMessages(String message) {
    assertUnavailable(new VertxException(message, true));
    assertUnavailable(new RuntimeException("wrapped", new VertxException(message, true)));
  }

  @Test
  @DisplayName("refused, cut and lost connections are storage unavailable; another VertxException is not")
  void connections() {
    assertUnavailable(new ConnectException("Connection refused"));
    assertUnavailable(ClosedConnectionException.INSTANCE);
    assertThat(StorageErrors.isUnavailable(new VertxException("something else", true))).isFalse();
  }

  @Test
  @DisplayName("a full pool wait queue is 429 OVERLOADED: nothing ran")
  void poolBusy() {
    ProtocolException error = Failures.classify(new ConnectionPoolTooBusyException("queue full"));

    assertThat(error.status()).isEqualTo(429);
    assertThat(error.code()).isEqualTo(ErrorCode.OVERLOADED);
  }

  private static void assertUnavailable(Throwable failure) {
    ProtocolException error = Failures.classify(failure);
    assertThat(error.status()).as("%s", failure).isEqualTo(503);
    assertThat(error.code()).isEqualTo(ErrorCode.STORAGE_UNAVAILABLE);
  }
}
