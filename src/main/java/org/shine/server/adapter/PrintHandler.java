package org.shine.server.adapter;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintStream;
import java.util.Objects;

/** Prints each event as one JSON line. */
public final class PrintHandler implements EventHandler {
  private final PrintStream out;

  public PrintHandler(PrintStream out) {
    this.out = Objects.requireNonNull(out);
  }

  @Override
  public void handle(JsonNode event) {
    synchronized (out) {
      out.println(event.toString());
      out.flush();
    }
  }
}
