package org.shine.server.support;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.peer.PeerStatus;
import org.shine.server.util.Json;

/**
 * The one fixture of the integration tests: servers (each with a fresh database and a loopback port of its own,
 * remembered so it can be stopped and started again where its peers expect it), users with published cards,
 * logged-in sessions, stub peers and SQL pools, all closed in reverse order by {@link #close()}. A test class that
 * shares servers between its tests opens a {@link #child()} per test for what one test starts.
 */
public final class TestWorld implements AutoCloseable {
  private static final String RECEIVE = "ReceiveIncomingMessage";
  private static final AtomicInteger NAMES = new AtomicInteger();
  private final Vertx vertx;
  private final Opened opened = new Opened();
  private final TestWorld parent;
  private final Map<String, Site> sites = new HashMap<>();
  private final Map<TestDatabase, Sql> pools = new HashMap<>();
  private final Map<String, Probe> probes = new HashMap<>();
  private Clock clock = Clock.systemUTC();
  private ObjectNode config = Json.MAPPER.createObjectNode();

  private TestWorld(Vertx vertx, TestWorld parent) {
    this.vertx = Objects.requireNonNull(vertx);
    this.parent = parent;
  }

  /** A world whose clients run on {@code vertx} (each server runs on a Vertx of its own). */
  public static TestWorld on(Vertx vertx) {
    return new TestWorld(vertx, null);
  }

  /** The clock of every server started from now on. */
  public TestWorld clock(Clock serverClock) {
    this.clock = Objects.requireNonNull(serverClock);
    return this;
  }

  /** The config overrides (JSON, merged over the defaults) of every server started from now on without its own. */
  public TestWorld config(String overridesJson) {
    return config(TestServer.json(overridesJson));
  }

  /** As {@link #config(String)}: {@code overrides} merged over the defaults (see {@link TestServer#merge}). */
  public TestWorld config(ObjectNode overrides) {
    this.config = Objects.requireNonNull(overrides).deepCopy();
    return this;
  }

  /** A copy of the config overrides of this world's servers, e.g. to {@link TestServer#merge} more over them. */
  public ObjectNode config() {
    return config.deepCopy();
  }

  /**
   * A world for one test of a class whose servers live longer: it starts servers and users of its own on the same
   * client Vertx and knows this world's servers by login; closing it closes only what it started.
   */
  public TestWorld child() {
    TestWorld child = new TestWorld(vertx, this);
    child.clock = clock;
    child.config = config;
    return child;
  }

  public Vertx vertx() {
    return vertx;
  }

  // ---- servers ----------------------------------------------------------------------------------------------

  /** Starts {@code serverLogin} with this world's config; again on its own database and port if it ran before. */
  public TestServer server(String serverLogin) {
    Site site = known(serverLogin);
    return server(serverLogin, site == null ? config : site.config);
  }

  /**
   * Starts {@code serverLogin} with {@code overridesJson}; on its own database and port if it ran before. Unless the
   * overrides name {@code peers}, every other server this world knows of (started, or declared by {@link #sites} or
   * {@link #url}) is a configured peer, as in a federation set up by its operators: cards may then name them by
   * their logins (PROTOCOL §6a v3). A server that should know a later one must be declared first.
   */
  public TestServer server(String serverLogin, String overridesJson) {
    return server(serverLogin, TestServer.json(overridesJson));
  }

  /** As {@link #server(String, String)} with the overrides as a JSON object (see {@link TestServer#merge}). */
  public TestServer server(String serverLogin, ObjectNode overrides) {
    Site site = site(serverLogin);
    if (site.running != null && !site.running.closed()) {
      throw new IllegalStateException(serverLogin + " is running; a second node of it is node(...)");
    }
    site.config = overrides.deepCopy();
    site.running = opened.keep(TestServer.start(serverLogin, database(serverLogin).config(), clock,
        withPeers(serverLogin, overrides), site.port));
    return site.running;
  }

  /** Declares servers before any of them starts, so that each is a configured peer of the others. */
  public TestWorld sites(String... serverLogins) {
    for (String login : serverLogins) {
      site(login);
    }
    return this;
  }

  /**
   * Starts {@code serverLogins} with this world's config, each a configured peer of the others, and waits until each
   * has a server session with each of the others (as an operator's federation is, once it has settled).
   */
  public TestServer[] servers(String... serverLogins) {
    sites(serverLogins);
    TestServer[] started = Arrays.stream(serverLogins).map(this::server).toArray(TestServer[]::new);
    awaitSessions(started);
    return started;
  }

  /**
   * Starts {@code serverLogins} at the same moment, each on a thread of its own, with the config each had (or this
   * world's), on its own database and port: as an operator starts a federation's servers together. Returns once
   * every one listens; a server that fails to start fails this after the others were kept (closed at the end).
   */
  public TestServer[] serversTogether(String... serverLogins) {
    List<Callable<TestServer>> starts = new ArrayList<>();
    for (String login : serverLogins) {
      Site site = site(login);
      if (site.running != null && !site.running.closed()) {
        throw new IllegalStateException(login + " is running");
      }
      var db = database(login).config();
      ObjectNode withPeers = withPeers(login, site.config);
      int port = site.port;
      Clock serverClock = clock;
      starts.add(() -> TestServer.start(login, db, serverClock, withPeers, port));
    }
    ExecutorService threads = Executors.newFixedThreadPool(serverLogins.length);
    try {
      List<Future<TestServer>> started = threads.invokeAll(starts);
      TestServer[] servers = new TestServer[serverLogins.length];
      RuntimeException failure = null;
      for (int i = 0; i < serverLogins.length; i++) {
        try {
          servers[i] = opened.keep(started.get(i).get());
          site(serverLogins[i]).running = servers[i];
        } catch (ExecutionException e) {
          failure = failure != null ? failure : new IllegalStateException(serverLogins[i] + " did not start",
              e.getCause());
        }
      }
      if (failure != null) {
        throw failure;
      }
      return servers;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } finally {
      threads.shutdown();
    }
  }

  /**
   * Waits until every one of {@code servers} holds an authenticated connection to each of the others: a server that
   * started before its peers has them down in its reconnect loop for a few seconds, and its first calls would fail.
   */
  public void awaitSessions(TestServer... servers) {
    for (TestServer server : servers) {
      awaitPeersUp(server, Arrays.stream(servers).filter(other -> other != server).toArray(TestServer[]::new));
    }
  }

  /**
   * Waits until {@code server}'s own view of each of {@code peers} is up: connected, logged in (the peer accepted its
   * server session) and not down, so that its calls towards them go out at once.
   */
  public void awaitPeersUp(TestServer server, TestServer... peers) {
    for (TestServer other : peers) {
      Eventually.until(server.serverLogin() + " has a server session with " + other.serverLogin(), 30_000,
          () -> peerStatus(server, other).map(p -> p.authenticated() && !p.down()).orElse(false));
    }
  }

  /** {@code server}'s connection to {@code peer} as its admin API shows it (empty: it has none). */
  public static Optional<PeerStatus> peerStatus(TestServer server, TestServer peer) {
    return BusReplies.<PeerStatus.All>request(server.vertx().eventBus(), Addresses.PEER_STATUS, "").await()
        .peers().stream().filter(p -> p.url().equals(peer.url())).findFirst();
  }

  /** {@code overridesJson} with {@code peers} set to every other server of this world, unless it names its own. */
  private ObjectNode withPeers(String serverLogin, ObjectNode given) {
    if (given.has("peers")) {
      return given;
    }
    ObjectNode overrides = given.deepCopy();
    ArrayNode peers = overrides.putArray("peers");
    Map<String, Site> all = new TreeMap<>();
    for (TestWorld world = this; world != null; world = world.parent) {
      world.sites.forEach(all::putIfAbsent);
    }
    all.forEach((login, other) -> {
      if (!login.equals(serverLogin)) {
        peers.addObject().put("serverLogin", login).put("url", "ws://127.0.0.1:" + other.port + "/ws");
      }
    });
    return overrides;
  }

  /** Stops {@code server} and starts it again on its database and port, with the config it had. */
  public TestServer restart(TestServer server) {
    server.close();
    return server(server.serverLogin());
  }

  /** Another node of {@code first}'s deployment: the same serverLogin and database, a port of its own. */
  public TestServer node(TestServer first, String overridesJson) {
    return node(first, TestServer.json(overridesJson));
  }

  /** As {@link #node(TestServer, String)} with the overrides as a JSON object. */
  public TestServer node(TestServer first, ObjectNode overrides) {
    return opened.keep(TestServer.start(first.serverLogin(), database(first.serverLogin()).config(), clock,
        overrides, TestServer.freePort()));
  }

  /** The WebSocket URL {@code serverLogin} has (or will have once started): routes may name it before it runs. */
  public String url(String serverLogin) {
    return "ws://127.0.0.1:" + port(serverLogin) + "/ws";
  }

  /** The loopback port {@code serverLogin} has (or will have once started), e.g. for a stub to listen on. */
  public int port(String serverLogin) {
    return site(serverLogin).port;
  }

  /** Starts s1..s4 (alice's s1, s2 and bob's s3, s4), the cards of both published on all four. */
  public Federation federation() {
    TestServer[] servers = servers("s1", "s2", "s3", "s4");
    TestServer s1 = servers[0];
    TestServer s2 = servers[1];
    TestServer s3 = servers[2];
    TestServer s4 = servers[3];
    TestUser alice = user("alice", routes(s1, s2), s1, s2, s3, s4);
    TestUser bob = user("bob", routes(s3, s4), s1, s2, s3, s4);
    return new Federation(s1, s2, s3, s4, alice, bob);
  }

  /** The database {@code serverLogin} runs on. */
  public TestDatabase database(String serverLogin) {
    Site site = site(serverLogin);
    if (site.db == null) {
      site.db = site.owner.opened.keep(TestDatabase.create(vertx));
    }
    return site.db;
  }

  /** A fresh database of its own, dropped at the end. */
  public TestDatabase database() {
    return opened.keep(TestDatabase.create(vertx));
  }

  /** Reads of the database of {@code server} (one small pool per database, closed at the end). */
  public Sql sql(TestServer server) {
    return sql(database(server.serverLogin()));
  }

  public Sql sql(TestDatabase db) {
    return pools.computeIfAbsent(db, d -> new Sql(opened.pool(d)));
  }

  // ---- users, sessions, stubs -------------------------------------------------------------------------------

  /** A user whose card routes to {@code servers} in order, published on each of them. */
  public TestUser user(String login, TestServer... servers) {
    return user(login, routes(servers), servers);
  }

  /** A user whose card ({@code routes}, version 1) is published on every server of {@code publishOn}. */
  public TestUser user(String login, List<Map.Entry<String, String>> routes, TestServer... publishOn) {
    return TestUser.create(login).publish(vertx, routes, 1, Arrays.stream(publishOn).map(TestServer::url)
        .toArray(String[]::new));
  }

  /** A login no other world of this JVM hands out: {@code prefix} and a number. */
  public static String unique(String prefix) {
    return prefix + NAMES.incrementAndGet();
  }

  /** A logged-in session of {@code user} on {@code server}, closed at the end. */
  public ShineClient session(TestUser user, TestServer server) {
    return opened.keep(user.session(vertx, server));
  }

  /** A connection with no login, closed at the end. */
  public ShineClient anonymous(TestServer server) {
    return opened.keep(ShineClient.connect(vertx, server.url()).await());
  }

  /** A connection to {@code target} logged in as {@code from}'s server, closed at the end. */
  public ShineClient serverSession(TestServer from, TestServer target) {
    return opened.keep(from.serverSession(vertx, target));
  }

  /** A stub peer on a free port, closed at the end. */
  public StubPeer stub() {
    return opened.keep(StubPeer.start(vertx));
  }

  /** Keeps {@code resource} to close it at the end, before what was opened earlier. */
  public <T extends AutoCloseable> T keep(T resource) {
    return opened.keep(resource);
  }

  /** Keeps {@code client} to close it at the end. */
  public ShineClient keep(ShineClient client) {
    return opened.keep(client);
  }

  /** Runs {@code close} at the end, before what was opened earlier is closed. */
  public void onClose(Runnable close) {
    opened.onClose(close);
  }

  /**
   * A route to a loopback address of its own where nothing listens (port 1), named after its host as a route to a
   * server that is not a configured peer must be (PROTOCOL §6a v3).
   */
  public static Map.Entry<String, String> deadRoute() {
    String host = StubPeer.nextHost();
    return Map.entry(host, "ws://" + host + ":1/ws");
  }

  /** Routes to {@code servers}, in order: serverLogin → URL. */
  public static List<Map.Entry<String, String>> routes(TestServer... servers) {
    return Arrays.stream(servers).map(s -> Map.entry(s.serverLogin(), s.url())).toList();
  }

  // ---- waiting for the system to move on --------------------------------------------------------------------

  /**
   * Waits until {@code server}'s retry worker has run {@code rounds} more scheduled attempts of a message sent now
   * to a recipient that never answers: proof that rows due in that time have been claimed, for tests that assert
   * that some other row was not attempted again. The probe users and their recipient server are this world's own.
   * Only for servers on a compressed schedule.
   */
  public void awaitRetryRounds(TestServer server, int rounds) {
    Probe probe = probes.computeIfAbsent(server.serverLogin(), login -> {
      StubPeer down = stub().respond(RECEIVE, (op, p) -> new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "probe"));
      TestUser sender = user(unique("probe"), server);
      TestUser recipient = user(unique("probe"), List.of(Map.entry(down.serverLogin(), down.url())), server);
      return new Probe(sender, recipient, down, session(sender, server));
    });
    SignedPair pair = probe.sender.pairTo(probe.recipient, "are we there yet?");
    String blob = Base64.getEncoder().encodeToString(pair.incoming().bytes());
    probe.session.sendPair(pair).await();
    Eventually.until(rounds + " retry rounds of " + server.serverLogin(), 30_000, () -> probe.down.requests()
        .stream().filter(r -> r.op().equals(RECEIVE) && blob.equals(r.payload().path("incomingBlobB64").asText()))
        .count() > rounds);
  }

  /**
   * Waits until {@code a} has pulled from {@code b} and {@code b} from {@code a} {@code rounds} times more: a
   * setting of a probe user of both, written on one, is seen on the other, each way, round after round. A pull
   * takes the settings pages before the DM pages, so seeing the setting of round n+1 means the DM pages of round n
   * were taken too.
   */
  public void awaitSyncRounds(TestServer a, TestServer b, int rounds) {
    String key = a.serverLogin() + "+" + b.serverLogin();
    Probe probe = probes.computeIfAbsent(key, k -> {
      TestUser both = user(unique("probe"), a, b);
      return new Probe(both, both, null, session(both, a));
    });
    ShineClient onB = session(probe.sender, b);
    for (int round = 0; round < rounds + 1; round++) {
      String value = unique("round");
      setSetting(probe.session, value);
      Eventually.until("a setting written on " + a.serverLogin() + " reaches " + b.serverLogin(), 30_000,
          () -> value.equals(setting(onB)));
      String back = unique("round");
      setSetting(onB, back);
      Eventually.until("a setting written on " + b.serverLogin() + " reaches " + a.serverLogin(), 30_000,
          () -> back.equals(setting(probe.session)));
    }
  }

  private static void setSetting(ShineClient session, String value) {
    session.request("SetUserSetting", ShineClient.object().put("key", "probe").put("value", value)).await();
  }

  private static String setting(ShineClient session) {
    return session.allSettings().await().path("probe").asText(null);
  }

  @Override
  public void close() {
    opened.closeAll();
  }

  private Site site(String serverLogin) {
    Site site = known(serverLogin);
    if (site == null) {
      site = new Site(this, TestServer.freePort(), config);
      sites.put(serverLogin, site);
    }
    return site;
  }

  private Site known(String serverLogin) {
    Site site = sites.get(serverLogin);
    return site != null || parent == null ? site : parent.known(serverLogin);
  }

  /**
   * Where a server runs: its port, and its database from its first start on; both stay while it is stopped and
   * started again. The world that first named it drops the database.
   */
  private static final class Site {
    private final TestWorld owner;
    private final int port;
    private TestDatabase db;
    private ObjectNode config;
    private TestServer running;

    private Site(TestWorld owner, int port, ObjectNode config) {
      this.owner = owner;
      this.port = port;
      this.config = config;
    }
  }

  private record Probe(TestUser sender, TestUser recipient, StubPeer down, ShineClient session) {
  }

  /** Four servers, alice's two and bob's two, with both cards on all of them (PROTOCOL §6). */
  public record Federation(TestServer s1, TestServer s2, TestServer s3, TestServer s4, TestUser alice,
      TestUser bob) {
  }
}
