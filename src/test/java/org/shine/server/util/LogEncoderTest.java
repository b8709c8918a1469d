package org.shine.server.util;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** {@link LogEncoder}: the text line of today, or one JSON object per line with {@code SHINE_LOG_FORMAT=json}. */
class LogEncoderTest {
  private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();

  @Test
  @DisplayName("json: one JSON object per line with level, logger, thread and the formatted message with its keys")
  void jsonLines() throws Exception {
    String line = encode("json");

    assertThat(line).endsWith("\n");
    assertThat(line.strip()).doesNotContain("\n");
    JsonNode event = Json.MAPPER.readTree(line);
    assertThat(event.path("level").asText()).isEqualTo("INFO");
    assertThat(event.path("loggerName").asText()).isEqualTo("org.shine.server.delivery.DeliveryEngine");
    assertThat(event.path("threadName").asText()).isNotEmpty();
    assertThat(event.path("timestamp").asLong()).isPositive();
    assertThat(event.path("formattedMessage").asText()).isEqualTo("delivered [outgoingKey: a|b|1|2|2]");
  }

  @Test
  @DisplayName("text (the default, and any unknown value): the one-line format with keys in brackets")
  void textLines() {
    for (String format : new String[] {"text", "", "xml"}) {
      String line = encode(format);

      assertThat(line).matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  \\[main\\] o\\.s\\.s\\.d\\.DeliveryEngine"
          + " - delivered \\[outgoingKey: a\\|b\\|1\\|2\\|2\\]\\n");
    }
  }

  private String encode(String format) {
    LogEncoder encoder = new LogEncoder();
    encoder.setContext(context);
    encoder.setFormat(format);
    encoder.start();
    LoggingEvent event = new LoggingEvent("org.slf4j.Logger", context.getLogger(
        "org.shine.server.delivery.DeliveryEngine"), Level.INFO, "delivered [outgoingKey: {}]", null,
        new Object[] {"a|b|1|2|2"});
    event.setThreadName("main");
    return new String(encoder.encode(event), StandardCharsets.UTF_8);
  }
}
