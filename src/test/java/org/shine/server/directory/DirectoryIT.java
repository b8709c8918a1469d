package org.shine.server.directory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.dm.KeyFile;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.MutableClock;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/** PublishUserCard / GetUserCard by the rules of PROTOCOL §4, checked over a real WebSocket and in SQL. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class DirectoryIT {
  private static final long WAIT_S = 20;
  // servers that are not configured peers go by their URL's host (PROTOCOL §6a v3); nothing listens on these ports
  private static final Map.Entry<String, String> S1 = Map.entry("127.0.0.21", "ws://127.0.0.21:1/ws");
  private static final Map.Entry<String, String> S2 = Map.entry("127.0.0.22", "ws://127.0.0.22:2/ws");
  private static final Map.Entry<String, String> S3 = Map.entry("127.0.0.23", "wss://127.0.0.23:3/ws");
  private static final MutableClock CLOCK = MutableClock.now();
  private static TestWorld world;
  private static Vertx vertx;
  private static TestServer server;
  private static Pool sql;
  private ShineClient client;

  @BeforeAll
  static void startServer() {
    world = TestWorld.on(Vertx.vertx()).clock(CLOCK);
    vertx = world.vertx();
    server = world.server("home");
    sql = world.sql(server).pool();
  }

  @AfterAll
  static void stopServer() {
    world.close();
    vertx.close().await();
  }

  @BeforeEach
  void connect() {
    client = await(ShineClient.connect(vertx, server.url()));
  }

  @AfterEach
  void disconnect() {
    await(client.close());
  }

  @Test
  @DisplayName("a new card is accepted as changed, GetUserCard returns it exactly, and its routes are stored in order")
  void newCardIsAccepted() {
    KeyFile key = KeyFile.generate("dana");
    ObjectNode card = ShineClient.signedCard("dana", key, List.of(S1, S2), 1);

    JsonNode published = publish(card);
    JsonNode fetched = await(client.request("GetUserCard", ShineClient.object().put("login", "dana")));

    assertThat(published).isEqualTo(json("{\"login\":\"dana\",\"version\":1,\"changed\":true}"));
    assertThat(fetched).isEqualTo(json("{\"card\":" + card + "}"));
    Row row = cardRow("dana");
    assertThat(row.getBuffer("public_key").getBytes()).isEqualTo(key.publicKey());
    assertThat(row.getLong("version")).isEqualTo(1);
    assertThat(routes("dana")).containsExactly("0 " + S1.getKey() + " " + S1.getValue(), "1 " + S2.getKey() + " " + S2.getValue());
  }

  @Test
  @DisplayName("re-publishing an identical card is 200 changed:false and touches nothing, whatever its field order")
  void identicalRepublish() {
    KeyFile key = KeyFile.generate("ella");
    ObjectNode card = ShineClient.signedCard("ella", key, List.of(S1), 4);
    publish(card);
    long updatedAt = cardRow("ella").getLong("updated_at_ms");
    CLOCK.advance(Duration.ofSeconds(5));

    JsonNode again = publish(card);
    JsonNode reordered = publish(reversedFieldOrder(card));

    assertThat(again).isEqualTo(json("{\"login\":\"ella\",\"version\":4,\"changed\":false}"));
    assertThat(reordered).isEqualTo(again);
    assertThat(cardRow("ella").getLong("updated_at_ms")).isEqualTo(updatedAt);
    assertThat(fetchCard("ella")).isEqualTo(json(card.toString()));
    assertThat(routes("ella")).containsExactly("0 " + S1.getKey() + " " + S1.getValue());
  }

  @Test
  @DisplayName("a different card with the stored version is 409 CARD_CONFLICT and the stored card stays")
  void sameVersionDifferentContent() {
    KeyFile key = KeyFile.generate("fern");
    ObjectNode original = ShineClient.signedCard("fern", key, List.of(S1, S2), 2);
    publish(original);

    assertRefused(publishing(ShineClient.signedCard("fern", key, List.of(S2, S1), 2)), 409, ErrorCode.CARD_CONFLICT);
    assertRefused(publishing(ShineClient.signedCard("fern", key, List.of(S1), 2)), 409, ErrorCode.CARD_CONFLICT);

    assertThat(fetchCard("fern")).isEqualTo(json(original.toString()));
    assertThat(routes("fern")).containsExactly("0 " + S1.getKey() + " " + S1.getValue(), "1 " + S2.getKey() + " " + S2.getValue());
  }

  @Test
  @DisplayName("a card older than the stored one is 409 STALE_VERSION and the stored card stays")
  void lowerVersion() {
    KeyFile key = KeyFile.generate("gina");
    ObjectNode current = ShineClient.signedCard("gina", key, List.of(S1), 3);
    publish(current);

    assertRefused(publishing(ShineClient.signedCard("gina", key, List.of(S2), 2)), 409, ErrorCode.STALE_VERSION);
    assertRefused(publishing(ShineClient.signedCard("gina", key, List.of(S1), 0)), 409, ErrorCode.STALE_VERSION);

    assertThat(fetchCard("gina")).isEqualTo(json(current.toString()));
    assertThat(cardRow("gina").getLong("version")).isEqualTo(3);
    assertThat(routes("gina")).containsExactly("0 " + S1.getKey() + " " + S1.getValue());
  }

  @Test
  @DisplayName("a validly signed card with another key for a known login is 409 KEY_MISMATCH, even at a higher version")
  void anotherKeyForKnownLogin() {
    KeyFile owner = KeyFile.generate("hana");
    KeyFile intruder = KeyFile.generate("hana");
    ObjectNode original = ShineClient.signedCard("hana", owner, List.of(S1), 1);
    publish(original);

    assertRefused(publishing(ShineClient.signedCard("hana", intruder, List.of(S3), 2)), 409, ErrorCode.KEY_MISMATCH);
    assertRefused(publishing(ShineClient.signedCard("hana", intruder, List.of(S1), 1)), 409, ErrorCode.KEY_MISMATCH);

    assertThat(cardRow("hana").getBuffer("public_key").getBytes()).isEqualTo(owner.publicKey());
    assertThat(fetchCard("hana")).isEqualTo(json(original.toString()));
    assertThat(routes("hana")).containsExactly("0 " + S1.getKey() + " " + S1.getValue());
  }

  @Test
  @DisplayName("a card whose signature does not verify with its own key is 400 BAD_SIGNATURE and nothing is stored")
  void badSignature() {
    KeyFile key = KeyFile.generate("iris");
    KeyFile other = KeyFile.generate("iris");
    ObjectNode signedByOther = ShineClient.signedCard("iris", other, List.of(S1), 1)
        .put("publicKeyB64", key.publicKeyB64());
    ObjectNode newLoginTampered = ShineClient.signedCard("iris", key, List.of(S1), 1);
    ((ObjectNode) newLoginTampered.get("accessServers").get(0)).put("url", "ws://127.0.0.21:9/ws");

    assertRefused(publishing(signedByOther), 400, ErrorCode.BAD_SIGNATURE);
    assertRefused(publishing(newLoginTampered), 400, ErrorCode.BAD_SIGNATURE);
    assertThat(cardCount("iris")).isZero();
    assertThat(routes("iris")).isEmpty();

    // GIVEN a stored card, WHEN a tampered newer version arrives, THEN it is refused and the stored one stays
    ObjectNode original = ShineClient.signedCard("iris", key, List.of(S1), 1);
    publish(original);
    ObjectNode versionBumped = original.deepCopy().put("version", 2);
    ObjectNode zeroSignature = ShineClient.signedCard("iris", key, List.of(S2), 2)
        .put("signatureB64", Base64.getEncoder().encodeToString(new byte[64]));
    assertRefused(publishing(versionBumped), 400, ErrorCode.BAD_SIGNATURE);
    assertRefused(publishing(zeroSignature), 400, ErrorCode.BAD_SIGNATURE);
    assertThat(fetchCard("iris")).isEqualTo(json(original.toString()));
    assertThat(routes("iris")).containsExactly("0 " + S1.getKey() + " " + S1.getValue());
  }

  @Test
  @DisplayName("a card listing 0, 3 or duplicate access servers is 400 INVALID_FIELD and nothing is stored")
  void accessServerCount() {
    KeyFile key = KeyFile.generate("jade");

    assertRefused(publishing(ShineClient.signedCard("jade", key, List.of(), 1)), 400, ErrorCode.INVALID_FIELD);
    assertRefused(publishing(ShineClient.signedCard("jade", key, List.of(S1, S2, S3), 1)), 400,
        ErrorCode.INVALID_FIELD);
    assertRefused(publishing(ShineClient.signedCard("jade", key, List.of(S1, Map.entry(S1.getKey(), S2.getValue())), 1)),
        400, ErrorCode.INVALID_FIELD);
    ObjectNode notAList = ShineClient.signedCard("jade", key, List.of(S1), 1);
    notAList.set("accessServers", notAList.get("accessServers").get(0));
    assertRefused(publishing(notAList), 400, ErrorCode.INVALID_FIELD);

    assertThat(cardCount("jade")).isZero();
    assertThat(routes("jade")).isEmpty();
    assertRefused(client.request("GetUserCard", ShineClient.object().put("login", "jade")), 404,
        ErrorCode.USER_NOT_FOUND);
  }

  @Test
  @DisplayName("a card with an invalid user or server login is 400 INVALID_LOGIN and nothing is stored")
  void invalidLogin() {
    long cardsBefore = count("SELECT count(*) FROM user_card");
    long routesBefore = count("SELECT count(*) FROM user_access_servers_current");
    for (String login : List.of("Kate", "ka|te", "ka te", "", "k".repeat(33), "kátе")) {
      KeyFile key = KeyFile.generate("kate");
      assertRefused(publishing(ShineClient.signedCard(login, key, List.of(S1), 1)), 400, ErrorCode.INVALID_LOGIN);
    }
    KeyFile key = KeyFile.generate("kate");
    assertRefused(publishing(ShineClient.signedCard("kate", key, List.of(Map.entry("S1", S1.getValue())), 1)), 400,
        ErrorCode.INVALID_LOGIN);
    assertRefused(publishing(ShineClient.signedCard("kate", key, List.of(Map.entry("s|1", S1.getValue())), 1)), 400,
        ErrorCode.INVALID_LOGIN);

    assertThat(count("SELECT count(*) FROM user_card")).isEqualTo(cardsBefore);
    assertThat(count("SELECT count(*) FROM user_access_servers_current")).isEqualTo(routesBefore);
    assertThat(cardCount("kate")).isZero();
  }

  @Test
  @DisplayName("an access server URL that is not ws:// or wss:// with a host is 400 INVALID_FIELD")
  void badUrl() {
    KeyFile key = KeyFile.generate("lena");
    for (String url : List.of("http://127.0.0.1:7101/ws", "not a url", "ws://", "ws:///ws", "ws://h:1/ws|s2=x",
        "127.0.0.1:7101/ws")) {
      ObjectNode card = ShineClient.signedCard("lena", key, List.of(Map.entry("127.0.0.1", url)), 1);
      assertRefused(publishing(card), 400, ErrorCode.INVALID_FIELD);
    }

    assertThat(cardCount("lena")).isZero();
    assertThat(routes("lena")).isEmpty();
    // the same card with a good URL is then accepted
    assertThat(publish(ShineClient.signedCard("lena", key, List.of(S3), 1)).get("changed").asBoolean()).isTrue();
  }

  @Test
  @DisplayName("a route that names a known server at another URL is 409 ROUTE_CONFLICT and nothing is stored")
  void routeConflict() {
    KeyFile nina = KeyFile.generate("nina");
    KeyFile omar = KeyFile.generate("omar");
    // GIVEN s2's URL is known here from an accepted card
    publish(ShineClient.signedCard("nina", nina, List.of(S2), 1));

    // WHEN cards name s2, or this server itself, somewhere else
    assertRefused(publishing(ShineClient.signedCard("omar", omar, List.of(Map.entry(S2.getKey(),
        "ws://127.0.0.22:9/ws")), 1)), 409, ErrorCode.ROUTE_CONFLICT);
    assertRefused(publishing(ShineClient.signedCard("omar", omar, List.of(Map.entry("home", "ws://127.0.0.1:9/ws")),
        1)), 409, ErrorCode.ROUTE_CONFLICT);
    assertRefused(publishing(ShineClient.signedCard("nina", nina, List.of(S1, Map.entry(S2.getKey(),
        "wss://127.0.0.22:2/ws")), 2)), 409, ErrorCode.ROUTE_CONFLICT);

    // THEN nothing of them is stored, and the known URLs are accepted
    assertThat(cardCount("omar")).isZero();
    assertThat(routes("nina")).containsExactly("0 " + S2.getKey() + " " + S2.getValue());
    assertThat(publish(ShineClient.signedCard("omar", omar, List.of(Map.entry("home", server.url()), S2), 1))
        .get("changed").asBoolean()).isTrue();
  }

  @Test
  @DisplayName("a route not configured as a peer must be named after its URL's host, lower-case: else 400 ROUTE_NAME")
  void routeName() {
    KeyFile pia = KeyFile.generate("pia");

    // WHEN a card gives a host another server's name (a user claiming a real server's name for a host of hers)
    assertRefused(publishing(ShineClient.signedCard("pia", pia, List.of(Map.entry("s2", "ws://127.0.0.24:2/ws")),
        1)), 400, ErrorCode.ROUTE_NAME);
    assertRefused(publishing(ShineClient.signedCard("pia", pia, List.of(Map.entry("127.0.0.25",
        "ws://127.0.0.24:2/ws")), 1)), 400, ErrorCode.ROUTE_NAME);
    assertThat(cardCount("pia")).isZero();

    // THEN a route named after its host is accepted, whatever the case of the host in the URL
    assertThat(publish(ShineClient.signedCard("pia", pia, List.of(Map.entry("localhost", "ws://LocalHost:1/ws")),
        1)).get("changed").asBoolean()).isTrue();
  }

  @Test
  @DisplayName("each newer version replaces the routes in user_access_servers_current, in the card's order")
  void newerVersionRewritesRoutes() {
    KeyFile key = KeyFile.generate("mira");
    publish(ShineClient.signedCard("mira", key, List.of(S1, S2), 1));
    assertThat(routes("mira")).containsExactly("0 " + S1.getKey() + " " + S1.getValue(), "1 " + S2.getKey() + " " + S2.getValue());

    JsonNode v2 = publish(ShineClient.signedCard("mira", key, List.of(S3, S1), 2));
    assertThat(v2).isEqualTo(json("{\"login\":\"mira\",\"version\":2,\"changed\":true}"));
    assertThat(routes("mira")).containsExactly("0 " + S3.getKey() + " " + S3.getValue(), "1 " + S1.getKey() + " " + S1.getValue());

    // versions need not be consecutive, and a card may shrink to one server
    ObjectNode v7 = ShineClient.signedCard("mira", key, List.of(S2), 7);
    assertThat(publish(v7).get("changed").asBoolean()).isTrue();
    assertThat(routes("mira")).containsExactly("0 " + S2.getKey() + " " + S2.getValue());
    assertThat(cardRow("mira").getLong("version")).isEqualTo(7);
    assertThat(fetchCard("mira")).isEqualTo(json(v7.toString()));
    assertThat(count("SELECT count(*) FROM user_card WHERE login = 'mira'")).isEqualTo(1);
  }

  @Test
  @DisplayName("GetUserCard for a login nobody published is 404 USER_NOT_FOUND; an invalid login is 400")
  void unknownLogin() {
    assertRefused(client.request("GetUserCard", ShineClient.object().put("login", "nobody")), 404,
        ErrorCode.USER_NOT_FOUND);
    assertRefused(client.request("GetUserCard", ShineClient.object().put("login", "No Body")), 400,
        ErrorCode.INVALID_LOGIN);
    // the session is still usable: a card published on it can then be fetched on it
    KeyFile key = KeyFile.generate("nobody");
    ObjectNode card = ShineClient.signedCard("nobody", key, List.of(S1), 1);
    publish(card);
    assertThat(fetchCard("nobody")).isEqualTo(json(card.toString()));
  }

  // ---- helpers -------------------------------------------------------------------------------------------

  private JsonNode publish(ObjectNode card) {
    return await(publishing(card));
  }

  private Future<JsonNode> publishing(ObjectNode card) {
    ObjectNode payload = ShineClient.object();
    payload.set("card", card);
    return client.request("PublishUserCard", payload);
  }

  private JsonNode fetchCard(String login) {
    return await(client.request("GetUserCard", ShineClient.object().put("login", login))).get("card");
  }

  /** The same card with its fields (and each route's fields) written in reverse order. */
  private static ObjectNode reversedFieldOrder(ObjectNode card) {
    List<String> names = new ArrayList<>();
    card.fieldNames().forEachRemaining(names::add);
    ObjectNode reversed = ShineClient.object();
    for (int i = names.size() - 1; i >= 0; i--) {
      String name = names.get(i);
      if ("accessServers".equals(name)) {
        ArrayNode servers = reversed.putArray(name);
        for (JsonNode route : card.get(name)) {
          servers.addObject().put("url", route.get("url").asText())
              .put("serverLogin", route.get("serverLogin").asText());
        }
      } else {
        reversed.set(name, card.get(name));
      }
    }
    Iterator<String> first = reversed.fieldNames();
    assertThat(first.next()).isNotEqualTo(card.fieldNames().next());
    return reversed;
  }

  private static Row cardRow(String login) {
    var rows = await(sql.preparedQuery("SELECT public_key, version, card_json, updated_at_ms FROM user_card"
        + " WHERE login = $1").execute(Tuple.of(login)));
    assertThat(rows.size()).as("user_card rows of %s", login).isEqualTo(1);
    return rows.iterator().next();
  }

  private static long cardCount(String login) {
    return await(sql.preparedQuery("SELECT count(*) FROM user_card WHERE login = $1").execute(Tuple.of(login)))
        .iterator().next().getLong(0);
  }

  /** The user's current routes as {@code "position serverLogin url"}, in position order. */
  private static List<String> routes(String login) {
    List<String> routes = new ArrayList<>();
    for (Row row : await(sql.preparedQuery("SELECT position, server_login, url FROM user_access_servers_current"
        + " WHERE login = $1 ORDER BY position").execute(Tuple.of(login)))) {
      routes.add(row.getShort("position") + " " + row.getString("server_login") + " " + row.getString("url"));
    }
    return routes;
  }

  private static long count(String sqlText) {
    return await(sql.query(sqlText).execute()).iterator().next().getLong(0);
  }

  private static void assertRefused(Future<?> response, int status, String code) {
    assertThatThrownBy(() -> await(response)).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).as("status of [%s]", e.getMessage()).isEqualTo(status);
      assertThat(e.code()).as("code of [%s]", e.getMessage()).isEqualTo(code);
    });
  }

  private static JsonNode json(String text) {
    try {
      return Json.MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(e);
    }
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.await(WAIT_S, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("no answer within " + WAIT_S + " s", e);
    }
  }
}
