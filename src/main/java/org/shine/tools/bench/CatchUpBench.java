package org.shine.tools.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.cli.CliContext;
import org.shine.server.client.ShineClient;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigLoader;
import org.shine.server.db.Database;
import org.shine.server.dm.KeyFile;
import org.shine.server.node.ShineServer;
import org.shine.tools.support.Progress;
import org.shine.tools.support.Registrar;

/**
 * {@code bench catchup}: two servers in this process (fresh databases), users on both; the second server is
 * stopped while {@code --items} pairs are written on the first, then started again, and the time until its
 * users' history is complete is measured.
 */
final class CatchUpBench {
  private CatchUpBench() {
  }

  static int run(long items, int clients, CliContext context) throws Exception {
    AppConfig.Db base = ConfigLoader.parse("{}", System.getenv()).db();
    AppConfig.Db db1 = base.withDatabase("shine_bench_catchup_s1");
    AppConfig.Db db2 = base.withDatabase("shine_bench_catchup_s2");
    Vertx admin = Vertx.vertx();
    try {
      for (AppConfig.Db db : List.of(db1, db2)) {
        SqlClient client = PgBuilder.client().connectingTo(Database.connectOptions(base.withDatabase("postgres")))
            .using(admin).build();
        client.query("DROP DATABASE IF EXISTS " + db.database() + " WITH (FORCE)").execute().await();
        client.close().await();
      }
      int p1 = freePort();
      int p2 = freePort();
      AppConfig c1 = config("s1", p1, db1, p2);
      AppConfig c2 = config("s2", p2, db2, p1);
      Vertx v1 = Vertx.vertx();
      new ShineServer(v1, c1, Clock.systemUTC()).start().await();
      Vertx v2 = Vertx.vertx();
      new ShineServer(v2, c2, Clock.systemUTC()).start().await();
      List<Map.Entry<String, String>> both = List.of(Map.entry("s1", c1.publicUrl()), Map.entry("s2", c2.publicUrl()));
      List<Map.Entry<String, String>> first = List.of(Map.entry("s1", c1.publicUrl()));
      List<ShineClient> sessions = new ArrayList<>();
      List<KeyFile> keys = new ArrayList<>();
      List<KeyFile> senders = new ArrayList<>();
      try (Registrar registrar = new Registrar(admin)) {
        for (int i = 0; i < clients; i++) {
          senders.add(KeyFile.generate("cs" + i));
          registrar.publish("cs" + i, senders.get(i), both).await();
          registrar.publish("cr" + i, KeyFile.generate("cr" + i), first).await();
        }
        // s2 stores pairs to the recipients only once it has their cards: s1 relays them to its peer
        registrar.awaitKnown(List.of(c2.publicUrl()), 60_000);
      }
      for (int i = 0; i < clients; i++) {
        KeyFile sender = senders.get(i);
        ShineClient session = ShineClient.connect(admin, c1.publicUrl()).await();
        session.login("cs" + i, sender).await();
        sessions.add(session);
        keys.add(sender);
      }
      System.out.printf(Locale.ROOT, "stopping s2; writing %d pairs on s1 over %d connections...%n", items, clients);
      v2.close().await();
      long writeStart = System.nanoTime();
      AtomicLong next = new AtomicLong();
      List<Future<Void>> writers = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        writers.add(write(sessions.get(i), "cs" + i, keys.get(i), "cr" + i, next, items));
      }
      try (Progress progress = Progress.start("catchup: pairs written on s1", context, items,
          () -> Math.min(items, next.get()))) {
        Future.all(writers).await();
      }
      double writeSeconds = (System.nanoTime() - writeStart) / 1e9;
      System.out.printf(Locale.ROOT, "wrote %d pairs in %.1f s (%.0f pairs/s); starting s2 again...%n", items,
          writeSeconds, items / writeSeconds);
      long restart = System.nanoTime();
      Vertx v2again = Vertx.vertx();
      new ShineServer(v2again, c2, Clock.systemUTC()).start().await();
      Pool pool = PgBuilder.pool().with(Database.poolOptions(1)).connectingTo(Database.connectOptions(db2))
          .using(admin).build();
      AtomicLong held = new AtomicLong();
      try (Progress progress = Progress.start("catchup: pairs on s2", context, items, held::get)) {
        while (held.get() < items) {
          Thread.sleep(250);
          held.set(pool.query("SELECT count(*) FROM dm_message").execute().await().iterator().next().getLong(0));
        }
      }
      double catchUp = (System.nanoTime() - restart) / 1e9;
      System.out.printf(Locale.ROOT, "s2 holds all %d pairs %.1f s after its restart (start-up included):"
          + " %.0f items/s%n", items, catchUp, items / catchUp);
      pool.close().await();
      v2again.close().await();
      v1.close().await();
      return 0;
    } finally {
      admin.close().await();
    }
  }

  private static Future<Void> write(ShineClient session, String from, KeyFile key, String to, AtomicLong next,
      long items) {
    if (next.getAndIncrement() >= items) {
      return Future.succeededFuture();
    }
    byte[] body = ("catch-up " + next.get()).getBytes(StandardCharsets.UTF_8);
    return session.sendPair(ShineClient.signPair(from, key, to, System.currentTimeMillis(), ShineClient.randomNonce(),
        0, body)).compose(v -> write(session, from, key, to, next, items));
  }

  private static AppConfig config(String login, int port, AppConfig.Db db, int peerPort) {
    String json = "{\"serverLogin\":\"" + login + "\",\"http\":{\"host\":\"127.0.0.1\",\"port\":" + port + "},"
        + "\"publicUrl\":\"ws://127.0.0.1:" + port + "/ws\",\"egress\":{\"allowCidrs\":[\"127.0.0.0/8\"]},"
        + "\"db\":{\"host\":\"" + db.host() + "\",\"port\":" + db.port() + ",\"database\":\"" + db.database()
        + "\",\"user\":\"" + db.user() + "\",\"password\":\"" + db.password() + "\"},"
        + "\"peers\":[{\"serverLogin\":\"" + (login.equals("s1") ? "s2" : "s1") + "\",\"url\":\"ws://127.0.0.1:"
        + peerPort + "/ws\"}]}";
    return ConfigLoader.parse(json, Map.of());
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
