package org.shine.server.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One Prometheus scrape of a test server's {@code /metrics}, read series by name and labels (in any order). */
public final class Scrape {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
  private final String text;

  private Scrape(String text) {
    this.text = text;
  }

  /** Scrapes {@code server} now (asserting nothing about the answer but that it is 200). */
  public static Scrape of(TestServer server) {
    try {
      HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + server.port() + "/metrics")).timeout(Duration.ofSeconds(20)).GET()
          .build(), HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new AssertionError("GET /metrics answered " + response.statusCode());
      }
      return new Scrape(response.body());
    } catch (IOException e) {
      throw new AssertionError("GET /metrics failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** The whole text. */
  public String text() {
    return text;
  }

  /** The value of the series {@code name} whose labels are exactly {@code labels} (k1, v1, k2, v2, ...). */
  public OptionalDouble find(String name, String... labels) {
    Map<String, String> wanted = new LinkedHashMap<>();
    for (int i = 0; i < labels.length; i += 2) {
      wanted.put(labels[i], labels[i + 1]);
    }
    for (String line : text.split("\n")) {
      Matcher m = LINE.matcher(line);
      if (!m.matches() || !m.group(1).equals(name)) {
        continue;
      }
      Map<String, String> found = new LinkedHashMap<>();
      if (m.group(2) != null) {
        Matcher label = LABEL.matcher(m.group(2));
        while (label.find()) {
          found.put(label.group(1), label.group(2));
        }
      }
      if (found.equals(wanted)) {
        return OptionalDouble.of(Double.parseDouble(m.group(3)));
      }
    }
    return OptionalDouble.empty();
  }

  /** As {@link #find} for a series that must be there. */
  public double value(String name, String... labels) {
    return find(name, labels).orElseThrow(() -> new AssertionError(name + " " + String.join(",", labels)
        + " is not in the scrape:\n" + text));
  }

  /** As {@link #value}, 0 for a series not (yet) in the scrape: a counter that was never incremented. */
  public double count(String name, String... labels) {
    return find(name, labels).orElse(0);
  }
}
