package org.shine.server.cli;

import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.dm.KeyFile;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;

/**
 * Benchmarks: {@code bench codec} (container parse + signature verify, one thread) and {@code bench send}
 * (SendMessagePair over many WebSocket connections against a running server, same-server recipients).
 */
public final class BenchCommand {
  static final String USAGE = String.join("\n",
      "bench codec [--count N]                        parse + verify N signed containers on one thread",
      "bench send --server URL [--clients C] [--rate R] [--seconds S] [--warmup S] [--window W] [--body BYTES]",
      "       C connections (one sender user each, recipient on the same server); --rate 0 = as fast as",
      "       possible with W requests in flight per connection; otherwise an open loop of R pairs/s in all.",
      "       --recipient-server URL (once or twice): recipients live on those servers instead (federated);",
      "       --sender-sibling URL: senders have that second server too (the pairs are forwarded and synced).",
      "       --compression offer: the client offers permessage-deflate, as browsers and Node do (default none);",
      "       --server-pid PID (repeatable): report CPU per pair of that process, of PostgreSQL and of the bench.",
      "bench retry-claim [--terminal N] [--due D] [--rounds R] [--db-name NAME]",
      "       time the retry worker's claim of D due rows beside N terminal rows (fresh database NAME,",
      "       PostgreSQL from SHINE_DB_* or 127.0.0.1:5432 postgres)",
      "bench catchup [--items N] [--clients C]",
      "       two servers in-process; the second is down while N pairs are written on the first, then the",
      "       time until it holds them all is measured",
      "bench hub-throughput --server URL [--events N]     events/s through the hub and the reference adapter",
      "bench slow-reader --server URL [--events N] [--bytes B] [--server-pid PID]",
      "       a recipient session that never reads while N messages of B bytes are sent to it: how the sends",
      "       are answered, whether the server closes the silent session, its heap after GC before and after",
      "bench hub-polls --server URL [--polls N] [--wake W] [--server-pid PID]",
      "       N concurrent long polls (server RSS with --server-pid) and the wake-up latency of W of them");

  private BenchCommand() {
  }

  public static int run(String[] args) {
    if (args.length == 0 || args[0].equals("help")) {
      System.out.println(USAGE);
      return args.length == 0 ? 2 : 0;
    }
    return switch (args[0]) {
      case "codec" -> codec(Args.parse(args, 1, Set.of("count")));
      case "send" -> send(Args.parse(args, 1, Set.of("server", "clients", "rate", "seconds", "warmup", "window",
          "body", "tag", "recipient-server", "sender-sibling", "compression", "server-pid")));
      case "retry-claim" -> RetryClaimBench.run(Args.parse(args, 1, Set.of("terminal", "due", "rounds", "db-name")));
      case "catchup" -> catchUp(Args.parse(args, 1, Set.of("items", "clients")));
      case "hub-throughput" -> hub(() -> HubBench.throughput(Args.parse(args, 1, Set.of("server", "events"))));
      case "hub-polls" -> hub(() -> HubBench.polls(Args.parse(args, 1, Set.of("server", "polls", "wake",
          "server-pid"))));
      case "slow-reader" -> hub(() -> SlowReaderBench.run(Args.parse(args, 1, Set.of("server", "events", "bytes",
          "server-pid"))));
      default -> throw new Args.UsageException("unknown bench " + args[0] + "\n" + USAGE);
    };
  }

  private static int hub(java.util.concurrent.Callable<Integer> bench) {
    try {
      return bench.call();
    } catch (Args.UsageException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static int catchUp(Args options) {
    try {
      return CatchUpBench.run(options);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static int codec(Args options) {
    int count = (int) options.longValue("count", 20_000);
    KeyFile key = KeyFile.generate("alice");
    byte[] body = new byte[256];
    List<byte[]> blobs = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      blobs.add(DmCodec.sign(DmKind.OUTGOING, System.currentTimeMillis(), i, 0, "alice", "bob", "", body,
          key.privateKey()).bytes());
    }
    for (int round = 0; round < 3; round++) {
      long parseStart = System.nanoTime();
      List<DmContainer> parsed = new ArrayList<>(count);
      for (byte[] blob : blobs) {
        try {
          parsed.add(DmCodec.parse(blob));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
      long parseEnd = System.nanoTime();
      int valid = 0;
      for (DmContainer container : parsed) {
        valid += container.verifySignature(key.publicKey()) ? 1 : 0;
      }
      long verifyEnd = System.nanoTime();
      var decoded = org.shine.server.dm.Ed25519Signer.publicKey(key.publicKey());
      for (DmContainer container : parsed) {
        valid += container.verifySignature(decoded) ? 1 : 0;
      }
      long decodedEnd = System.nanoTime();
      if (valid != 2 * count) {
        throw new IllegalStateException("only " + valid + " of " + 2 * count + " signatures verified");
      }
      System.out.printf(Locale.ROOT, "round %d: parse %.0f containers/s, verify %.0f signatures/s (%.0f/s with the"
              + " key decoded once, as the server does), parse+verify %.0f containers/s (%d containers of %d-byte"
              + " body, 1 thread)%n", round + 1,
          count / seconds(parseStart, parseEnd), count / seconds(parseEnd, verifyEnd),
          count / seconds(verifyEnd, decodedEnd), count / seconds(parseStart, verifyEnd), count, body.length);
    }
    return 0;
  }

  private static int send(Args options) {
    String url = options.required("server");
    int clients = (int) options.longValue("clients", 64);
    long rate = options.longValue("rate", 0);
    int seconds = (int) options.longValue("seconds", 20);
    int warmup = (int) options.longValue("warmup", 5);
    int window = (int) options.longValue("window", 8);
    int bodySize = (int) options.longValue("body", 128);
    String tag = options.optional("tag", Long.toString(System.currentTimeMillis() % 1_000_000, 36));
    String compression = options.optional("compression", "none");
    if (!Set.of("offer", "none").contains(compression)) {
      throw new Args.UsageException("--compression must be offer or none");
    }
    ProcessCpu cpu = new ProcessCpu(options.all("server-pid"));
    Vertx vertx = Vertx.vertx();
    try {
      List<Sender> senders = prepare(vertx, url, options.optional("sender-sibling", null),
          options.all("recipient-server"), clients, tag, compression.equals("offer"));
      long deflated = senders.stream().filter(s -> s.client.compressed()).count();
      System.out.printf(Locale.ROOT, "client compression: %s; the server took permessage-deflate on %d of %d"
          + " connections%n", compression.equals("offer") ? "offered" : "not offered", deflated, senders.size());
      System.out.printf(Locale.ROOT, "signing pairs for %d connections...%n", clients);
      // two spare pairs per connection: round-robin over the connections rounds up in each phase
      long perClient = 2 + (rate > 0 ? (rate * (seconds + warmup) + clients - 1) / clients
          : estimateClosedLoop(seconds + warmup));
      byte[] body = new byte[bodySize];
      Arrays.fill(body, (byte) 'x');
      for (Sender sender : senders) {
        sender.sign(perClient, body);
      }
      Sender first = senders.get(0);
      FrameSizes.print(first.pairs, bodySize, randomBody -> ShineClient.signPair(first.from, first.key, first.to,
          System.currentTimeMillis(), ShineClient.randomNonce(), 0, randomBody));
      if (warmup > 0) {
        System.out.printf(Locale.ROOT, "warming up for %d s (not measured)...%n", warmup);
        Result ignored = rate > 0 ? openLoop(vertx, senders, rate, warmup) : closedLoop(senders, window, warmup);
        System.out.printf(Locale.ROOT, "warm-up: %d pairs%n", ignored.ok.get());
      }
      System.out.printf(Locale.ROOT, "running %s for %d s over %d connections...%n",
          rate > 0 ? rate + " pairs/s open loop" : "closed loop, window " + window, seconds, clients);
      Map<String, Double> cpuBefore = cpu.sample();
      Result result = rate > 0 ? openLoop(vertx, senders, rate, seconds) : closedLoop(senders, window, seconds);
      Map<String, Double> cpuAfter = cpu.sample();
      result.print();
      System.out.print(ProcessCpu.report(cpuBefore, cpuAfter, seconds(result.start, result.end), result.ok.get(),
          "pair"));
      return result.errors.get() == 0 ? 0 : 1;
    } finally {
      vertx.close();
    }
  }

  private static long estimateClosedLoop(int seconds) {
    return Math.max(1_000, seconds * 150L);
  }

  /**
   * Registers one sender per connection on {@code url} and its recipient on {@code recipientUrls} (or on
   * {@code url}), publishing both cards on every server involved so each can verify and route at once.
   */
  private static List<Sender> prepare(Vertx vertx, String url, String senderSibling, List<String> recipientUrls,
      int clients, String tag, boolean offerCompression) {
    List<String> everywhere = new ArrayList<>(List.of(url));
    everywhere.addAll(recipientUrls);
    List<ShineClient> admins = new ArrayList<>();
    for (String server : everywhere) {
      admins.add(ShineClient.connect(vertx, server).await());
    }
    List<Map.Entry<String, String>> senderRoutes = new ArrayList<>(List.of(
        Map.entry(admins.get(0).serverLogin("bench").await(), url)));
    if (senderSibling != null) {
      ShineClient sibling = ShineClient.connect(vertx, senderSibling).await();
      senderRoutes.add(Map.entry(sibling.serverLogin("bench").await(), senderSibling));
      sibling.close();
    }
    List<Map.Entry<String, String>> recipientRoutes = new ArrayList<>();
    for (int i = 0; i < recipientUrls.size(); i++) {
      recipientRoutes.add(Map.entry(admins.get(i + 1).serverLogin("bench").await(), recipientUrls.get(i)));
    }
    if (recipientRoutes.isEmpty()) {
      recipientRoutes = senderRoutes;
    }
    List<Sender> senders = new ArrayList<>();
    for (int i = 0; i < clients; i++) {
      String from = "b" + tag + "-s" + i;
      String to = "b" + tag + "-r" + i;
      KeyFile fromKey = KeyFile.generate(from);
      KeyFile toKey = KeyFile.generate(to);
      for (ShineClient admin : admins) {
        admin.publishCard(from, fromKey, senderRoutes, 1).await();
        admin.publishCard(to, toKey, recipientRoutes, 1).await();
      }
      ShineClient client = ShineClient.connect(vertx, url, offerCompression).await();
      client.login(from, fromKey).await();
      senders.add(new Sender(client, from, fromKey, to));
    }
    admins.forEach(ShineClient::close);
    return senders;
  }

  private static Result closedLoop(List<Sender> senders, int window, int seconds) {
    Result result = new Result();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    CountDownLatch done = new CountDownLatch(senders.size() * window);
    result.start = System.nanoTime();
    for (Sender sender : senders) {
      for (int w = 0; w < window; w++) {
        sender.client.vertx().runOnContext(v -> sendNext(sender, result, end, done));
      }
    }
    awaitQuietly(done, seconds + 60);
    result.end = System.nanoTime();
    return result;
  }

  private static void sendNext(Sender sender, Result result, long end, CountDownLatch done) {
    SignedPair pair = sender.next();
    if (pair == null || System.nanoTime() > end) {
      done.countDown();
      return;
    }
    long started = System.nanoTime();
    sender.client.sendPair(pair).onComplete(ar -> {
      result.record(started, ar.cause(), ar.succeeded() ? ar.result().path("deliveryState").asText() : null);
      sendNext(sender, result, end, done);
    });
  }

  private static Result openLoop(Vertx vertx, List<Sender> senders, long rate, int seconds) {
    Result result = new Result();
    long total = rate * seconds;
    double intervalNanos = 1e9 / rate;
    AtomicLong issued = new AtomicLong();
    AtomicInteger outstanding = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(1);
    result.start = System.nanoTime();
    long tickMs = 1;
    vertx.setPeriodic(tickMs, id -> {
      long now = System.nanoTime();
      long due = Math.min(total, (long) ((now - result.start) / intervalNanos) + 1);
      while (issued.get() < due) {
        long n = issued.getAndIncrement();
        // latency counts from the intended send time, so a stalled server cannot hide its queueing
        long intended = result.start + (long) (n * intervalNanos);
        Sender sender = senders.get((int) (n % senders.size()));
        SignedPair pair = sender.next();
        if (pair == null) {
          result.record(intended, new IllegalStateException("ran out of pre-signed pairs"), null);
          continue;
        }
        outstanding.incrementAndGet();
        sender.client.sendPair(pair).onComplete(ar -> {
          result.record(intended, ar.cause(), ar.succeeded() ? ar.result().path("deliveryState").asText() : null);
          if (outstanding.decrementAndGet() == 0 && issued.get() >= total) {
            done.countDown();
          }
        });
      }
      if (issued.get() >= total) {
        vertx.cancelTimer(id);
      }
    });
    awaitQuietly(done, seconds + 60);
    result.end = System.nanoTime();
    return result;
  }

  private static void awaitQuietly(CountDownLatch latch, long seconds) {
    try {
      if (!latch.await(seconds, TimeUnit.SECONDS)) {
        System.out.println("warning: not every request completed in time");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static double seconds(long startNanos, long endNanos) {
    return (endNanos - startNanos) / 1e9;
  }

  /** One connection logged in as one sender, with its pre-signed pairs. */
  private static final class Sender {
    final ShineClient client;
    final String from;
    final KeyFile key;
    final String to;
    final List<SignedPair> pairs = new ArrayList<>();
    final AtomicInteger next = new AtomicInteger();

    Sender(ShineClient client, String from, KeyFile key, String to) {
      this.client = client;
      this.from = from;
      this.key = key;
      this.to = to;
    }

    void sign(long count, byte[] body) {
      long now = System.currentTimeMillis();
      for (long i = 0; i < count; i++) {
        pairs.add(ShineClient.signPair(from, key, to, now, ShineClient.randomNonce(), 0, body));
      }
    }

    SignedPair next() {
      int i = next.getAndIncrement();
      return i < pairs.size() ? pairs.get(i) : null;
    }
  }

  /** Latencies and counts of one run. */
  private static final class Result {
    final List<Long> latencies = new ArrayList<>();
    final AtomicLong ok = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final Map<String, Long> states = new java.util.TreeMap<>();
    long start;
    long end;

    synchronized void record(long startedNanos, Throwable failure, String deliveryState) {
      latencies.add(System.nanoTime() - startedNanos);
      if (failure == null) {
        ok.incrementAndGet();
        states.merge(deliveryState, 1L, Long::sum);
      } else if (errors.incrementAndGet() <= 5) {
        System.out.println("error: " + failure.getMessage());
      }
    }

    synchronized void print() {
      long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
      double secs = seconds(start, end);
      System.out.printf(Locale.ROOT, "pairs ok: %d, errors: %d, elapsed %.1f s, throughput %.0f pairs/s,"
          + " states in responses %s%n", ok.get(), errors.get(), secs, ok.get() / secs, states);
      if (sorted.length > 0) {
        System.out.printf(Locale.ROOT, "accept latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f%n",
            pct(sorted, 0.50), pct(sorted, 0.90), pct(sorted, 0.99), sorted[sorted.length - 1] / 1e6);
      }
    }

    private static double pct(long[] sorted, double p) {
      return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)] / 1e6;
    }
  }


}
