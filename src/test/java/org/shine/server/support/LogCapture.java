package org.shine.server.support;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.shine.server.util.LogEncoder;
import org.slf4j.LoggerFactory;

/**
 * What one logger (and the loggers under it) writes while a test runs, in the server's own text format, at a level
 * the test chooses; {@link #close()} puts the logger back as it was.
 */
public final class LogCapture implements AutoCloseable {
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final Logger logger;
  private final Level before;
  private final OutputStreamAppender<ILoggingEvent> appender = new OutputStreamAppender<>();

  private LogCapture(String name, Level level) {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    logger = context.getLogger(name);
    before = logger.getLevel();
    LogEncoder encoder = new LogEncoder();
    encoder.setContext(context);
    encoder.start();
    appender.setContext(context);
    appender.setEncoder(encoder);
    appender.setOutputStream(bytes);
    appender.start();
    logger.addAppender(appender);
    logger.setLevel(level);
  }

  /** Captures {@code name} (e.g. {@code org.shine}) from now on, at {@code level} and above. */
  public static LogCapture of(String name, Level level) {
    return new LogCapture(name, level);
  }

  /** Everything captured so far. */
  public String text() {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
    logger.setLevel(before);
    appender.stop();
  }
}
