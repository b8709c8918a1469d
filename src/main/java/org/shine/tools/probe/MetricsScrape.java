package org.shine.tools.probe;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.net.URI;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The {@code shine_*} counters a server serves at {@code GET /metrics} (Prometheus text format) on the HTTP origin of
 * its WebSocket URL, and the number of SQL statements its pools have run ({@value #SQL_STATEMENTS}: the count of the
 * Vert.x SQL client's {@code vertx_sql_processing_time_seconds} over every pool). A server without the endpoint (404,
 * refused, unreadable) yields no counters, silently.
 */
public final class MetricsScrape {
  /** The key of the statements count: one per statement (or batch) the server's SQL clients sent. */
  static final String SQL_STATEMENTS = "sql_statements";
  private static final String SQL_PROCESSED = "vertx_sql_processing_time_seconds_count";
  private static final long TIMEOUT_MS = 5_000;
  private final HttpClient http;

  public MetricsScrape(Vertx vertx) {
    this.http = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout((int) TIMEOUT_MS));
  }

  /**
   * Every {@code shine_*} counter sample of the server at {@code wsUrl}, keyed {@code name{labels}}, and
   * {@value #SQL_STATEMENTS}.
   */
  public Future<Map<String, Double>> counters(String wsUrl) {
    URI uri = URI.create(wsUrl);
    boolean secure = "wss".equals(uri.getScheme());
    RequestOptions request = new RequestOptions().setMethod(HttpMethod.GET).setHost(uri.getHost())
        .setPort(uri.getPort() > 0 ? uri.getPort() : (secure ? 443 : 80)).setSsl(secure).setURI("/metrics")
        .setIdleTimeout(TIMEOUT_MS);
    return http.request(request)
        .compose(req -> req.send())
        .compose(response -> response.statusCode() == 200 ? response.body().map(body -> parse(body.toString()))
            : response.body().map(ignored -> Map.<String, Double>of()))
        .otherwise(Map.of());
  }

  public Future<Void> close() {
    return http.close();
  }

  /**
   * The samples of counter families named {@code shine_*}: those a {@code # TYPE} line declares {@code counter}, the
   * {@code _count} of those it declares {@code histogram} (how many were observed), and samples ending
   * {@code _total} where no {@code # TYPE} line says otherwise; and the SQL clients' statements summed
   * over their pools as {@value #SQL_STATEMENTS} (absent when the page has none).
   */
  public static Map<String, Double> parse(String text) {
    Set<String> counterFamilies = new HashSet<>();
    Set<String> typed = new HashSet<>();
    Map<String, Double> samples = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      if (line.startsWith("# TYPE ")) {
        String[] parts = line.trim().split("\\s+");
        if (parts.length >= 4) {
          typed.add(parts[2]);
          if (parts[3].equals("counter")) {
            counterFamilies.add(parts[2]);
          } else if (parts[3].equals("histogram")) {
            // how many were observed is a counter: calls made, each by outcome
            counterFamilies.add(parts[2] + "_count");
          }
        }
        continue;
      }
      if (line.startsWith(SQL_PROCESSED + "{") || line.startsWith(SQL_PROCESSED + " ")) {
        int labelsEnd = line.charAt(SQL_PROCESSED.length()) == '{' ? line.lastIndexOf('}') + 1 : SQL_PROCESSED.length();
        Double value = sampleValue(line.substring(labelsEnd));
        if (value != null) {
          samples.merge(SQL_STATEMENTS, value, Double::sum);
        }
        continue;
      }
      if (!line.startsWith("shine_")) {
        continue;
      }
      int brace = line.indexOf('{');
      int nameEnd = brace >= 0 ? brace : line.indexOf(' ');
      int valueStart = brace >= 0 ? line.indexOf('}', brace) + 1 : nameEnd;
      if (nameEnd <= 0 || valueStart <= 0) {
        continue;
      }
      String name = line.substring(0, nameEnd);
      String family = name.endsWith("_total") ? name.substring(0, name.length() - "_total".length()) : name;
      boolean counter = counterFamilies.contains(name) || counterFamilies.contains(family)
          || (name.endsWith("_total") && !typed.contains(name) && !typed.contains(family));
      if (!counter) {
        continue;
      }
      Double value = sampleValue(line.substring(valueStart));
      if (value != null) {
        samples.put(line.substring(0, valueStart), value);
      }
    }
    return samples;
  }

  /** The value of a sample line's rest (value, then an optional timestamp), or null when it is not a number. */
  private static Double sampleValue(String rest) {
    String[] parts = rest.trim().split("\\s+");
    try {
      return Double.parseDouble(parts[0]);
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
