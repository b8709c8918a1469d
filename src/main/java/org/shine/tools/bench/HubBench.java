package org.shine.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.shine.server.adapter.HubAdapter;
import org.shine.server.adapter.Inbox;
import org.shine.server.cli.CliContext;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.KeyFile;
import org.shine.server.util.Json;
import org.shine.tools.support.Progress;
import org.shine.tools.support.Registrar;

/**
 * Hub benchmarks against a running server: {@code hub-throughput} (events/s through the server and the reference
 * adapter end to end) and {@code hub-polls} (many concurrent long polls held, and the wake-up latency from a send
 * to the poll's 200).
 */
final class HubBench {
  private HubBench() {
  }

  static int throughput(String ws, int events, CliContext context) throws Exception {
    String http = ws.replaceFirst("^ws", "http").replaceAll("/ws$", "");
    String tag = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
    Vertx vertx = Vertx.vertx();
    try {
      ShineClient admin = ShineClient.connect(vertx, ws).await();
      String serverLogin = admin.serverLogin("bench").await();
      List<Map.Entry<String, String>> routes = List.of(Map.entry(serverLogin, ws));
      KeyFile sender = KeyFile.generate("hs" + tag);
      KeyFile recipient = KeyFile.generate("hr" + tag);
      admin.publishCard("hs" + tag, sender, routes, 1).await();
      admin.publishCard("hr" + tag, recipient, routes, 1).await();
      Path inboxFile = Files.createTempDirectory("hub-bench").resolve("inbox.db");
      AtomicLong processed = new AtomicLong();
      HubAdapter adapter = new HubAdapter(new HubAdapter.Settings(http, null, "hr" + tag, recipient, 25,
          HubAdapter.Settings.defaultDelaysMs(), 60_000, 20, Duration.ZERO), Inbox.open(inboxFile.toString()),
          event -> processed.incrementAndGet());
      adapter.start();
      ShineClient session = ShineClient.connect(vertx, ws).await();
      session.login("hs" + tag, sender).await();
      long start = System.nanoTime();
      for (int i = 0; i < events; i += 64) {
        List<io.vertx.core.Future<JsonNode>> window = new ArrayList<>();
        for (int j = i; j < Math.min(events, i + 64); j++) {
          window.add(session.sendText("hs" + tag, sender, "hr" + tag, "hub " + j));
        }
        io.vertx.core.Future.all(window).await();
      }
      double sent = (System.nanoTime() - start) / 1e9;
      try (Progress progress = Progress.start("hub-throughput: events processed", context, events, processed::get)) {
        while (processed.get() < events) {
          Thread.sleep(20);
        }
      }
      double total = (System.nanoTime() - start) / 1e9;
      adapter.stop();
      System.out.printf(Locale.ROOT, "%d events: sent in %.1f s; received, committed to the adapter's SQLite inbox,"
          + " ACKed and processed in %.1f s: %.0f events/s end to end%n", events, sent, total, events / total);
      return 0;
    } finally {
      vertx.close().await();
    }
  }

  static int polls(String ws, int polls, int wakes, Long serverPid, CliContext context) throws Exception {
    String http = ws.replaceFirst("^ws", "http").replaceAll("/ws$", "") + "/hub/v1";
    String pid = serverPid == null ? null : serverPid.toString();
    String tag = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
    Vertx vertx = Vertx.vertx();
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(10)).build();
    try {
      ShineClient admin = ShineClient.connect(vertx, ws).await();
      String serverLogin = admin.serverLogin("bench").await();
      List<Map.Entry<String, String>> routes = List.of(Map.entry(serverLogin, ws));
      KeyFile sender = KeyFile.generate("ps" + tag);
      admin.publishCard("ps" + tag, sender, routes, 1).await();
      System.out.printf(Locale.ROOT, "registering %d hub users...%n", polls);
      List<String> logins = new ArrayList<>();
      List<String> tokens = new ArrayList<>();
      AtomicLong registered = new AtomicLong();
      try (Progress progress = Progress.start("hub-polls: users registered", context, polls, registered::get);
          Registrar registrar = new Registrar(vertx)) {
        for (int i = 0; i < polls; i++) {
          String login = "pr" + tag + "-" + i;
          KeyFile key = KeyFile.generate(login);
          registrar.publish(login, key, routes).await();
          tokens.add(token(client, http, login, key, serverLogin));
          logins.add(login);
          registered.incrementAndGet();
        }
      }
      long rssBefore = pid != null ? rssKb(pid) : 0;
      System.out.printf(Locale.ROOT, "opening %d long polls (waitS=30)...%n", polls);
      Map<String, Long> sentAt = new ConcurrentHashMap<>();
      Histogram latencies = new ConcurrentHistogram(3);
      List<CompletableFuture<HttpResponse<String>>> open = new ArrayList<>();
      for (int i = 0; i < polls; i++) {
        String login = logins.get(i);
        open.add(client.sendAsync(HttpRequest.newBuilder(URI.create(http + "/messages?waitS=30"))
                .header("Authorization", "Bearer " + tokens.get(i)).timeout(Duration.ofSeconds(60)).GET().build(),
            HttpResponse.BodyHandlers.ofString()).whenComplete((r, e) -> {
              Long at = sentAt.get(login);
              if (r != null && r.statusCode() == 200 && at != null) {
                latencies.recordValue(Math.max(1, (System.nanoTime() - at) / 1_000));
              }
            }));
      }
      Thread.sleep(5_000);
      if (rssBefore > 0) {
        long rssHolding = rssKb(pid);
        System.out.printf(Locale.ROOT, "server RSS: %d MiB before, %d MiB holding %d long polls (%+d MiB)%n",
            rssBefore / 1024, rssHolding / 1024, polls, (rssHolding - rssBefore) / 1024);
      }
      ShineClient session = ShineClient.connect(vertx, ws).await();
      session.login("ps" + tag, sender).await();
      for (int i = 0; i < Math.min(wakes, polls); i++) {
        String login = logins.get(i);
        sentAt.put(login, System.nanoTime());
        session.sendText("ps" + tag, sender, login, "wake " + i).await();
        Thread.sleep(10);
      }
      Thread.sleep(2_000);
      long held = open.stream().filter(f -> !f.isDone()).count();
      Histogram woken = latencies.copy();
      System.out.printf(Locale.ROOT, "woken %d of %d (send → 200, send included): p50 %.1f ms, p99 %.1f ms,"
              + " max %.1f ms; %d polls still held%n", woken.getTotalCount(), Math.min(wakes, polls),
          woken.getValueAtPercentile(50) / 1e3, woken.getValueAtPercentile(99) / 1e3, woken.getMaxValue() / 1e3, held);
      return 0;
    } finally {
      vertx.close().await();
    }
  }

  private static String token(HttpClient client, String http, String login, KeyFile key, String serverLogin)
      throws Exception {
    HttpResponse<String> challenge = client.send(HttpRequest.newBuilder(URI.create(http + "/challenge?login="
        + login)).GET().build(), HttpResponse.BodyHandlers.ofString());
    String challengeB64 = Json.MAPPER.readTree(challenge.body()).get("challengeB64").asText();
    byte[] signature = Ed25519Signer.sign(key.privateKey(), ("SHiNE_HUB|" + serverLogin + "|" + challengeB64)
        .getBytes(StandardCharsets.UTF_8));
    String body = Json.MAPPER.createObjectNode().put("login", login).put("challengeB64", challengeB64)
        .put("signatureB64", Base64.getEncoder().encodeToString(signature)).toString();
    HttpResponse<String> token = client.send(HttpRequest.newBuilder(URI.create(http + "/token"))
        .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    return Json.MAPPER.readTree(token.body()).get("accessToken").asText();
  }

  private static long rssKb(String pid) throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return 0;
  }
}
