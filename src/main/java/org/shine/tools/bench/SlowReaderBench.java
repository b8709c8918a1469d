package org.shine.tools.bench;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.KeyFile;
import org.shine.server.util.WsUrls;

/**
 * {@code bench slow-reader}: a recipient session that never reads while a sender sends N messages of B bytes to
 * it. Reports how the sends were answered, whether and when the server closed the silent session, whether a new
 * session still gets in, and (with {@code --server-pid}) the server's heap after a full GC before and after
 * ({@code jcmd GC.run}, {@code GC.heap_info}).
 */
final class SlowReaderBench {
  private static final Pattern USED = Pattern.compile("used (\\d+)K");
  private static final int SENDERS = 16;

  private SlowReaderBench() {
  }

  static int run(String url, int events, int bytes, String pid) throws Exception {
    String tag = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
    Vertx vertx = Vertx.vertx();
    try {
      String serverLogin = ShineClient.connect(vertx, url).compose(c -> c.serverLogin("x")).await();
      KeyFile bob = KeyFile.generate("slow" + tag + "-b");
      List<KeyFile> senderKeys = new ArrayList<>();
      for (int i = 0; i < SENDERS; i++) {
        senderKeys.add(KeyFile.generate("slow" + tag + "-a" + i));
      }
      ShineClient admin = ShineClient.connect(vertx, url).await();
      List<KeyFile> everyone = new ArrayList<>(senderKeys);
      everyone.add(bob);
      for (KeyFile key : everyone) {
        admin.publishCard(key.login().orElseThrow(), key, List.of(Map.entry(serverLogin, url)), 1).await();
      }
      Long heapBefore = heapAfterGc(pid);
      Long rssBefore = rss(pid);

      // the silent recipient: logged in, then its socket is never read again
      WebSocketClient raw = vertx.createWebSocketClient(new WebSocketClientOptions().setMaxMessageSize(1 << 24)
          .setMaxFrameSize(1 << 24));
      WebSocket silent = raw.connect(WsUrls.connectOptions(url)).await();
      loginRaw(vertx, silent, bob);
      long[] closedAt = {0};
      Short[] closeCode = {null};
      silent.closeHandler(v -> {
        closedAt[0] = System.nanoTime();
        closeCode[0] = silent.closeStatusCode();
      });
      silent.pause();

      // one message at a time per sender, SENDERS at once: each stays under the per-user write rate
      List<ShineClient> senders = new ArrayList<>();
      for (KeyFile key : senderKeys) {
        ShineClient sender = ShineClient.connect(vertx, url).await();
        sender.login(key.login().orElseThrow(), key).await();
        senders.add(sender);
      }
      String body = "y".repeat(bytes);
      AtomicInteger ok = new AtomicInteger();
      Map<String, Integer> failures = new ConcurrentHashMap<>();
      long start = System.nanoTime();
      List<Future<?>> window = new ArrayList<>();
      for (int i = 0; i < events; i++) {
        KeyFile key = senderKeys.get(i % SENDERS);
        window.add(senders.get(i % SENDERS).sendText(key.login().orElseThrow(), key, bob.login().orElseThrow(),
                i + body)
            .onSuccess(r -> ok.incrementAndGet())
            .onFailure(f -> failures.merge(String.valueOf(f.getMessage()).split(":")[0], 1, Integer::sum)));
        if (window.size() >= SENDERS) {
          Future.join(new ArrayList<>(window)).otherwiseEmpty().await();
          window.clear();
        }
        if (i > 0 && i % 1000 == 0) {
          System.err.printf(Locale.ROOT, "%d of %d sent%n", i, events);
        }
      }
      Future.join(new ArrayList<>(window)).otherwiseEmpty().await();
      double sendSeconds = (System.nanoTime() - start) / 1e9;
      int failed = failures.values().stream().mapToInt(Integer::intValue).sum();
      System.out.printf(Locale.ROOT, "sends: %d answered 200, %d failed %s, of %d (%d-byte bodies, %d senders) in"
          + " %.1f s%n", ok.get(), failed, failures, events, bytes, SENDERS, sendSeconds);

      // the server's memory while the silent session still reads nothing
      Long heapDuring = heapAfterGc(pid);
      Long rssDuring = rss(pid);
      silent.resume();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      while (closedAt[0] == 0 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      System.out.println(closedAt[0] == 0 ? "the silent session was NOT closed within 90 s after the sends"
          : String.format(Locale.ROOT, "the silent session was closed by the server (code %s)", closeCode[0]));

      ShineClient fresh = ShineClient.connect(vertx, url).await();
      fresh.login(bob.login().orElseThrow(), bob).await();
      long history = fresh.request("GetDirectMessages", ShineClient.object().put("peer",
          senderKeys.get(0).login().orElseThrow())
          .put("limit", 1)).await().path("messages").size();
      System.out.printf(Locale.ROOT, "a new session of the recipient logs in and reads its history (%d message on"
          + " the first page)%n", history);
      Long heapAfter = heapAfterGc(pid);
      Long rssAfter = rss(pid);
      if (heapBefore != null && heapDuring != null && heapAfter != null) {
        System.out.printf(Locale.ROOT, "server heap used after a full GC: %d MiB before, %d MiB with the silent"
            + " session still open, %d MiB after it closed (%+.0f %% of before)%n", heapBefore / 1024,
            heapDuring / 1024, heapAfter / 1024, 100.0 * (heapAfter - heapBefore) / heapBefore);
      }
      if (rssBefore != null && rssDuring != null && rssAfter != null) {
        System.out.printf(Locale.ROOT, "server RSS (heap, direct buffers and the rest): %d MiB before, %d MiB with"
            + " the silent session still open, %d MiB after%n", rssBefore / 1024, rssDuring / 1024, rssAfter / 1024);
      }
      return closedAt[0] != 0 && failed == 0 ? 0 : 1;
    } finally {
      vertx.close();
    }
  }

  private static void loginRaw(Vertx vertx, WebSocket ws, KeyFile key) {
    Promise<String> answers = Promise.promise();
    List<String> frames = new ArrayList<>();
    ws.textMessageHandler(text -> {
      frames.add(text);
      if (frames.size() == 1) {
        answers.tryComplete(text);
      }
    });
    ws.writeTextMessage("{\"op\":\"AuthChallenge\",\"requestId\":\"1\",\"payload\":{\"login\":\""
        + key.login().orElseThrow() + "\"}}");
    String challenge = answers.future().await();
    String challengeB64 = challenge.replaceAll(".*\"challengeB64\":\"([^\"]+)\".*", "$1");
    String serverLogin = challenge.replaceAll(".*\"serverLogin\":\"([^\"]+)\".*", "$1");
    byte[] signature = org.shine.server.dm.Ed25519Signer.sign(key.privateKey(),
        ("SHiNE_AUTH|" + serverLogin + "|" + challengeB64).getBytes(StandardCharsets.UTF_8));
    Promise<Void> loggedIn = Promise.promise();
    ws.textMessageHandler(text -> loggedIn.tryComplete());
    ws.writeTextMessage("{\"op\":\"AuthLogin\",\"requestId\":\"2\",\"payload\":{\"login\":\""
        + key.login().orElseThrow() + "\",\"signatureB64\":\""
        + java.util.Base64.getEncoder().encodeToString(signature) + "\"}}");
    loggedIn.future().await();
  }

  /** The server's resident set in KiB, or null without a pid. */
  private static Long rss(String pid) {
    if (pid == null) {
      return null;
    }
    try {
      for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc", pid, "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException | RuntimeException e) {
      return null;
    }
    return null;
  }

  /** The server's used heap in KiB after a full GC, or null without a pid or jcmd. */
  private static Long heapAfterGc(String pid) throws InterruptedException {
    if (pid == null) {
      return null;
    }
    try {
      jcmd(pid, "GC.run");
      Matcher used = USED.matcher(jcmd(pid, "GC.heap_info"));
      return used.find() ? Long.parseLong(used.group(1)) : null;
    } catch (IOException e) {
      System.err.println("jcmd is not available: " + e.getMessage());
      return null;
    }
  }

  private static String jcmd(String pid, String command) throws IOException, InterruptedException {
    Process process = new ProcessBuilder("jcmd", pid, command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    process.waitFor();
    return output;
  }
}
