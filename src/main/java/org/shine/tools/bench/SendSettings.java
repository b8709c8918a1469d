package org.shine.tools.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.shine.server.cli.CliFailure;

/** The settings of one {@code bench send} run, from its command line ({@link SendOptions}), checked. */
record SendSettings(String url, List<String> recipientUrls, String senderSibling, int clients, long rate,
    int seconds, int warmup, int window, int body, String tag, boolean offerCompression, boolean recipientsOnline,
    boolean freeOnArrival, long slotTimeoutMs, int graceS, List<String> serverPids, List<String> dbNames,
    boolean metrics, String scenario, long floodRate, boolean floodAnswers, String floodHost, String recipientNode,
    List<Map.Entry<String, String>> deadRoutes) {
  /** A server's default per-user write rate (limits.sendsPerUserPerS): no sender can be accepted faster. */
  private static final int SENDS_PER_USER_PER_S = 200;

  static SendSettings from(SendOptions options) {
    String recipients = options.recipients;
    String compression = options.compression;
    String metrics = options.metrics;
    requireOneOf("recipients", recipients, "online", "offline");
    requireOneOf("compression", compression, "offer", "none");
    requireOneOf("metrics", metrics, "on", "off");
    boolean online = recipients.equals("online");
    String freeOn = options.freeOn != null ? options.freeOn : online ? "arrival" : "answer";
    requireOneOf("free-on", freeOn, "arrival", "answer");
    if (freeOn.equals("arrival") && !online) {
      throw CliFailure.usage("--free-on arrival needs --recipients online");
    }
    SendSettings settings = new SendSettings(options.server, List.copyOf(options.recipientServers),
        options.senderSibling, options.clients, options.rate, options.seconds, options.warmup, options.window,
        options.body, options.tag != null ? options.tag : Long.toString(System.currentTimeMillis() % 1_000_000, 36),
        compression.equals("offer"), online, freeOn.equals("arrival"), options.slotTimeoutMs, options.grace,
        List.copyOf(options.serverPids), List.copyOf(options.dbNames), metrics.equals("on"), options.scenario,
        options.floodRate, options.floodPeer.equals("answering"), options.floodHost, options.recipientNode,
        deadRoutes(options));
    requireOneOf("flood-peer", options.floodPeer, "tarpit", "answering", "dead");
    if (options.floodPeer.equals("dead") != !settings.deadRoutes.isEmpty()) {
      throw CliFailure.usage("--flood-peer dead needs --dead-route LOGIN=URL, and --dead-route needs --flood-peer"
          + " dead");
    }
    if (options.floodRate < 0 || !options.floodHost.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}")) {
      throw CliFailure.usage("--flood-rate must not be negative and --flood-host must be a 127.x.y.z address"
          + " (a benchmark never makes a server dial beyond loopback)");
    }
    if (settings.clients < 1 || settings.window < 1 || settings.seconds < 1 || settings.warmup < 0
        || settings.rate < 0 || settings.body < 0 || settings.recipientUrls.size() > 2) {
      throw CliFailure.usage("bench send: --clients, --window and --seconds must be at least 1, --warmup, --rate and"
          + " --body not negative, --recipient-server at most twice");
    }
    return settings;
  }

  /** The --dead-route values as serverLogin → URL, each a loopback URL (a benchmark never dials beyond it). */
  private static List<Map.Entry<String, String>> deadRoutes(SendOptions options) {
    List<Map.Entry<String, String>> routes = new ArrayList<>();
    for (String value : options.deadRoutes) {
      int eq = value.indexOf('=');
      String url = eq < 0 ? "" : value.substring(eq + 1);
      if (eq < 1 || !url.matches("wss?://127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}:\\d{1,5}/.*")) {
        throw CliFailure.usage("--dead-route must be LOGIN=URL with a loopback URL such as ws://127.0.0.1:7314/ws,"
            + " not " + value);
      }
      routes.add(Map.entry(value.substring(0, eq), url));
    }
    return List.copyOf(routes);
  }

  private static void requireOneOf(String name, String value, String... allowed) {
    if (!Arrays.asList(allowed).contains(value)) {
      throw CliFailure.usage("--" + name + " must be one of " + String.join(", ", allowed));
    }
  }

  String recipientSessionUrl() {
    if (recipientNode != null) {
      return recipientNode;
    }
    return recipientUrls.isEmpty() ? url : recipientUrls.get(0);
  }

  boolean openLoop() {
    return rate > 0;
  }

  /** Pairs to sign before the run per sender: what the run can use, two spare for round-robin rounding. */
  long pairsPerSender() {
    long total = seconds + warmup;
    return 2 + (openLoop() ? (rate * total + clients - 1) / clients : SENDS_PER_USER_PER_S * (total + 1));
  }
}
