package org.shine.server.directory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shine.server.support.FuzzServer.abbreviate;
import static org.shine.server.support.FuzzServer.await;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.KeyFile;
import org.shine.server.support.FuzzJson;
import org.shine.server.support.FuzzServer;
import org.shine.server.support.FuzzTries;
import org.shine.server.util.Json;

/**
 * Property-based tests of user cards (PROTOCOL §4: CardJson and the directory's publish) on one real server: valid
 * signed cards mutated, and cards whose every field is an edge case but whose signature is right (so that they get
 * past the signature check). A card is answered below 500; a refused one stores nothing; an accepted one is
 * served back by GetUserCard exactly as it was sent.
 */
@AddLifecycleHook(FuzzTries.class)
class CardFuzzIT {
  private static final AtomicLong LOGINS = new AtomicLong();
  private static FuzzServer fuzz;
  private static ShineClient session;

  @BeforeContainer
  static void start() {
    fuzz = FuzzServer.start();
    session = await(ShineClient.connect(fuzz.vertx, fuzz.server.url()));
  }

  @AfterContainer
  static void stop() {
    await(session.close().otherwiseEmpty());
    fuzz.close();
  }

  /** The fields of a card before signing; the signature is made over them as they are. */
  record CardFields(String login, long version, List<Map.Entry<String, String>> routes) {
  }

  @Property(tries = 300)
  @Label("a valid signed card, mutated: answered below 500, stored only when accepted, and then exactly as sent")
  void mutatedCards(@ForAll("mutations") List<FuzzJson.Mutation> mutations) throws JsonProcessingException {
    String login = newLogin();
    ObjectNode card = ShineClient.signedCard(login, KeyFile.generate(login),
        List.of(Map.entry("s1", fuzz.server.url()), Map.entry("s7", "ws://127.0.0.1:1/ws")), 1);
    assertPublished(FuzzJson.mutate(card, mutations));
  }

  @Property(tries = 300)
  @Label("a correctly signed card with edge-case logins, routes, URLs and versions: the same")
  void signedOddCards(@ForAll("oddCards") CardFields fields) throws JsonProcessingException {
    KeyFile key = KeyFile.generate(fields.login());
    JsonNode card = ShineClient.signedCard(fields.login(), key, fields.routes(), fields.version());
    assertPublished(card);
  }

  private static void assertPublished(JsonNode card) throws JsonProcessingException {
    ObjectNode frame = ShineClient.object().put("op", "PublishUserCard").put("requestId", "card-1");
    frame.putObject("payload").set("card", card);
    String text = FuzzJson.text(frame);
    Assume.that(FuzzServer.utf8Bytes(text) < 1 << 20);
    Map<String, Long> before = fuzz.rows();
    JsonNode answer = fuzz.exchange(session, text);
    FuzzServer.assertAnswered(answer, text);
    Statistics.label("answers").collect(answer.path("status").asInt() + " " + answer.at("/error/code").asText());
    if (answer.path("status").asInt() == 200) {
      JsonNode stored = await(session.request("GetUserCard", ShineClient.object()
          .put("login", card.get("login").asText()))).get("card");
      // compared as parsed text: a tree built in code may hold an int where the parsed one holds a long
      assertThat(stored).as("the card stored for %s", abbreviate(text)).isEqualTo(Json.MAPPER.readTree(
          card.toString()));
      stored.get("accessServers").forEach(route -> assertThat(URI.create(route.get("url").asText()).getPort())
          .as("the port of a stored route %s", route).isBetween(-1, 65_535).isNotZero());
    } else {
      assertThat(fuzz.rows()).as("rows after %s -> %s", abbreviate(text), abbreviate(answer.toString()))
          .isEqualTo(before);
    }
    assertThat(await(session.request("GetUserCard", ShineClient.object().put("login", "nobody"))
        .otherwise(e -> null))).as("the session answers a valid op afterwards").isNull();
    fuzz.assertNoErrorLogged(text);
  }

  private static String newLogin() {
    return "c" + LOGINS.incrementAndGet();
  }

  @Provide
  Arbitrary<List<FuzzJson.Mutation>> mutations() {
    return FuzzJson.mutations();
  }

  @Provide
  Arbitrary<CardFields> oddCards() {
    Arbitrary<String> login = Arbitraries.frequencyOf(
        Tuple.of(6, Arbitraries.create(CardFuzzIT::newLogin)),
        Tuple.of(1, Arbitraries.of("Alice", "a|b", "a=b", "", "a".repeat(33), "\u00e9", "a\u0000", "-", ".")));
    Arbitrary<String> serverLogin = Arbitraries.frequencyOf(
        Tuple.of(4, Arbitraries.of("s1", "s2", "s3", "peer.one", "a-b_c.d")),
        Tuple.of(4, Arbitraries.create(() -> "n" + LOGINS.incrementAndGet())),
        Tuple.of(1, FuzzJson.oddString().map(s -> s.length() > 100 ? s.substring(0, 100) : s)));
    // hosts stay on loopback: an accepted card is relayed to the servers it names
    Arbitrary<String> url = Arbitraries.frequencyOf(
        Tuple.of(4, Arbitraries.create(() -> fuzz.server.url())),
        Tuple.of(3, Arbitraries.of("ws://127.0.0.1:1/ws", "wss://127.0.0.1:2/ws", "ws://localhost:3", "ws://[::1]:4/ws",
            "ws://127.0.0.1:99999/ws", "ws://127.0.0.1:-1/ws", "ws://127.0.0.1:5/ws?x=1#y", "ws://127.0.0.1:6/\u00e9",
            "ws://127.0.0.1:7/\uD800", "ws://127.0.0.1:8/\u202E", "ws://127.0.0.1:9/a\u0301", "ws://127.0.0.1:10/%00",
            "ws://127.0.0.1:11/\uFEFF", "ws://user@127.0.0.1:12/ws", "ws://127.0.0.1:13/" + "a".repeat(5_000),
            "http://127.0.0.1:14/ws", "ws:/127.0.0.1/ws", "ws://127.0.0.1:15/a=b", "ws://127.0.0.1:16/a|b")),
        Tuple.of(1, FuzzJson.oddString().map(s -> "ws://127.0.0.1:17/" + (s.length() > 200 ? s.substring(0, 200) : s))));
    Arbitrary<Map.Entry<String, String>> route = Combinators.combine(serverLogin, url).as(Map::entry);
    Arbitrary<Long> version = Arbitraries.oneOf(Arbitraries.of(0L, 1L, 2L, Long.MAX_VALUE, -1L, Long.MIN_VALUE),
        Arbitraries.longs());
    return Combinators.combine(login, version, route.list().ofMinSize(0).ofMaxSize(3)).as(CardFields::new);
  }
}
