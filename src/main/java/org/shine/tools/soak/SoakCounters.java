package org.shine.tools.soak;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.shine.server.client.ShineClientException;

/** What the soak's parts did and what failed, by kind (operations, hub polls, answers other than 200). */
final class SoakCounters {
  private final Map<String, LongAdder> ops = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();

  void op(String kind) {
    ops.computeIfAbsent(kind, k -> new LongAdder()).increment();
  }

  void error(String code) {
    errors.computeIfAbsent(code, k -> new LongAdder()).increment();
  }

  /** A failed operation of {@code kind}, by the server's status and code or the failure's class. */
  void error(String kind, Throwable failure) {
    String code = failure instanceof ShineClientException answer
        ? (answer.status() == 0 ? answer.code() : answer.status() + " " + answer.code())
        : failure.getClass().getSimpleName();
    error(kind + ": " + code);
  }

  String ops() {
    return sorted(ops);
  }

  String errors() {
    return sorted(errors);
  }

  private static String sorted(Map<String, LongAdder> counters) {
    Map<String, Long> sorted = new TreeMap<>();
    counters.forEach((k, v) -> sorted.put(k, v.sum()));
    return sorted.toString();
  }
}
