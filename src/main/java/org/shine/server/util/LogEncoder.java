package org.shine.server.util;

import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.encoder.EncoderBase;
import java.util.Locale;

/**
 * The log format of a node, chosen once at start by {@code SHINE_LOG_FORMAT} (logback.xml passes it as
 * {@code format}): {@code text} (the default: one line per event, keys in brackets) or {@code json} (one JSON object
 * per line for log shippers, through Logback's own {@link JsonEncoder}: timestamp, level, thread, logger, the
 * formatted message and the throwable). An unknown value logs as text and says so once.
 */
public final class LogEncoder extends EncoderBase<ILoggingEvent> {
  private String format = "text";
  private String pattern = "%d{HH:mm:ss.SSS} %-5level [%thread] %logger{24} - %msg%n";
  private Encoder<ILoggingEvent> delegate;

  /** {@code text} or {@code json}. */
  public void setFormat(String format) {
    this.format = format == null ? "" : format.trim().toLowerCase(Locale.ROOT);
  }

  /** The pattern of the text format. */
  public void setPattern(String pattern) {
    this.pattern = pattern;
  }

  @Override
  public void start() {
    if (format.equals("json")) {
      JsonEncoder json = new JsonEncoder();
      json.setWithSequenceNumber(false);
      json.setWithNanoseconds(false);
      json.setWithContext(false);
      // the parameterised message and its arguments would repeat what the formatted message says
      json.setWithMessage(false);
      json.setWithArguments(false);
      json.setWithFormattedMessage(true);
      delegate = json;
    } else {
      if (!format.equals("text") && !format.isEmpty()) {
        addWarn("SHINE_LOG_FORMAT " + format + " is neither text nor json: logging as text");
      }
      PatternLayoutEncoder text = new PatternLayoutEncoder();
      text.setPattern(pattern);
      delegate = text;
    }
    delegate.setContext(getContext());
    delegate.start();
    super.start();
  }

  @Override
  public void stop() {
    if (delegate != null) {
      delegate.stop();
    }
    super.stop();
  }

  @Override
  public byte[] headerBytes() {
    return delegate.headerBytes();
  }

  @Override
  public byte[] encode(ILoggingEvent event) {
    return delegate.encode(event);
  }

  @Override
  public byte[] footerBytes() {
    return delegate.footerBytes();
  }
}
