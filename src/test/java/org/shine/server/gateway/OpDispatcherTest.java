package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.config.ConfigLoader;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.util.Json;

/**
 * The checks every op passes before its handler (PROTOCOL §2, §11, §13): a known op, a logged-in user where the op
 * needs one, the user's write rate, a peer's op rate and an address's card publishes; then the handler's answer.
 */
class OpDispatcherTest {
  private static final List<String> OPS = List.of(Ops.AUTH_CHALLENGE, Ops.SEND_MESSAGE_PAIR, Ops.GET_DIRECT_MESSAGES,
      Ops.GET_USER_CARD, Ops.PUBLISH_USER_CARD, Ops.RECEIVE_INCOMING_MESSAGE, Ops.SET_USER_SETTING);
  private final AtomicLong nanos = new AtomicLong(TimeUnit.SECONDS.toNanos(1_000));
  private final OpLimits limits = new OpLimits(ConfigLoader.parse("{\"limits\":{\"sendsPerUserPerS\":2,"
      + "\"opsPerPeerPerS\":3,\"cardsPerIpPerMin\":2}}", Map.of()).limits(), nanos::get);
  /** What the handlers were called with: "op login-or-peer payload". */
  private final List<String> handled = new ArrayList<>();
  private final OpDispatcher dispatcher = new OpDispatcher(handlers(), limits);

  @Test
  @DisplayName("an op without a handler is 400 UNKNOWN_OP and reaches no handler")
  void unknownOp() {
    Session alice = user("alice");

    assertRefused(dispatcher.dispatch(alice, "FetchEverything", payload()), 400, ErrorCode.UNKNOWN_OP,
        "unknown op FetchEverything");
    assertThat(handled).isEmpty();
  }

  @Test
  @DisplayName("an op of a logged-in user from an anonymous session is 401 NOT_AUTHENTICATED; an open op is served")
  void loginCheck() {
    Session anonymous = session();

    assertRefused(dispatcher.dispatch(anonymous, Ops.SEND_MESSAGE_PAIR, payload()), 401, ErrorCode.NOT_AUTHENTICATED,
        "SendMessagePair needs an authenticated session (AuthChallenge, then AuthLogin)");
    assertRefused(dispatcher.dispatch(anonymous, Ops.GET_DIRECT_MESSAGES, payload()), 401,
        ErrorCode.NOT_AUTHENTICATED, "GetDirectMessages needs an authenticated session (AuthChallenge, then AuthLogin)");
    assertThat(handled).isEmpty();

    assertThat(answer(dispatcher.dispatch(anonymous, Ops.GET_USER_CARD, payload())).path("served").asText())
        .isEqualTo(Ops.GET_USER_CARD);
    assertThat(answer(dispatcher.dispatch(anonymous, Ops.AUTH_CHALLENGE, payload()))).isNotNull();
    assertThat(handled).containsExactly("GetUserCard - {\"n\":1}", "AuthChallenge - {\"n\":1}");
  }

  @Test
  @DisplayName("a user's writes beyond sendsPerUserPerS are 429 RATE_LIMITED before their handler; reads, other users"
      + " and the next second pass")
  void writeRate() {
    Session alice = user("alice");
    answer(dispatcher.dispatch(alice, Ops.SEND_MESSAGE_PAIR, payload()));
    answer(dispatcher.dispatch(alice, Ops.SET_USER_SETTING, payload()));

    ProtocolException third = refusal(dispatcher.dispatch(alice, Ops.SEND_MESSAGE_PAIR, payload()));
    assertThat(third.status()).isEqualTo(429);
    assertThat(third.code()).isEqualTo(ErrorCode.RATE_LIMITED);
    assertThat(third.getMessage()).contains("limits.sendsPerUserPerS");
    assertThat(handled).hasSize(2);

    answer(dispatcher.dispatch(alice, Ops.GET_DIRECT_MESSAGES, payload()));
    answer(dispatcher.dispatch(user("bob"), Ops.SEND_MESSAGE_PAIR, payload()));
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(1));
    answer(dispatcher.dispatch(alice, Ops.SEND_MESSAGE_PAIR, payload()));
    assertThat(handled).containsExactly("SendMessagePair alice {\"n\":1}", "SetUserSetting alice {\"n\":1}",
        "GetDirectMessages alice {\"n\":1}", "SendMessagePair bob {\"n\":1}", "SendMessagePair alice {\"n\":1}");
  }

  @Test
  @DisplayName("every op of a server session counts against opsPerPeerPerS of that peer")
  void peerRate() {
    Session s2 = session();
    s2.serverLogin = "s2";
    answer(dispatcher.dispatch(s2, Ops.RECEIVE_INCOMING_MESSAGE, payload()));
    answer(dispatcher.dispatch(s2, Ops.GET_USER_CARD, payload()));
    answer(dispatcher.dispatch(s2, Ops.PUBLISH_USER_CARD, payload()));

    ProtocolException fourth = refusal(dispatcher.dispatch(s2, Ops.GET_USER_CARD, payload()));
    assertThat(fourth.code()).isEqualTo(ErrorCode.RATE_LIMITED);
    assertThat(fourth.getMessage()).contains("limits.opsPerPeerPerS");
    assertThat(handled).hasSize(3);
  }

  @Test
  @DisplayName("card publishes of sessions that are not a server's count against cardsPerIpPerMin of their address")
  void cardRate() {
    answer(dispatcher.dispatch(session(), Ops.PUBLISH_USER_CARD, payload()));
    answer(dispatcher.dispatch(user("alice"), Ops.PUBLISH_USER_CARD, payload()));

    ProtocolException third = refusal(dispatcher.dispatch(session(), Ops.PUBLISH_USER_CARD, payload()));
    assertThat(third.code()).isEqualTo(ErrorCode.RATE_LIMITED);
    assertThat(third.getMessage()).contains("limits.cardsPerIpPerMin", "127.0.0.1");
    answer(dispatcher.dispatch(session(), Ops.GET_USER_CARD, payload()));
  }

  @Test
  @DisplayName("what a handler throws comes back as the failed future of the request, never thrown at the caller")
  void handlerThrows() {
    ProtocolException refused = ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "no such field");
    Map<String, OpHandler> throwing = Map.of(Ops.GET_USER_CARD, (session, payload) -> {
      throw refused;
    });
    OpDispatcher failing = new OpDispatcher(throwing, limits);

    assertThat(refusal(failing.dispatch(session(), Ops.GET_USER_CARD, payload()))).isSameAs(refused);
  }

  private Map<String, OpHandler> handlers() {
    Map<String, OpHandler> handlers = new HashMap<>();
    for (String op : OPS) {
      handlers.put(op, (session, payload) -> {
        String who = session.login != null ? session.login : session.serverLogin != null ? session.serverLogin : "-";
        handled.add(op + " " + who + " " + payload);
        return Future.succeededFuture(Json.MAPPER.createObjectNode().put("served", op));
      });
    }
    return handlers;
  }

  private static Session session() {
    return new Session(new FakeSocket(40_000).socket, 1);
  }

  private static Session user(String login) {
    Session session = session();
    session.login = login;
    return session;
  }

  private static JsonNode payload() {
    return Json.MAPPER.createObjectNode().put("n", 1);
  }

  private static JsonNode answer(Future<JsonNode> dispatched) {
    assertThat(dispatched.succeeded()).as("served: %s", dispatched.cause()).isTrue();
    return dispatched.result();
  }

  private static ProtocolException refusal(Future<JsonNode> dispatched) {
    assertThat(dispatched.failed()).as("refused").isTrue();
    assertThat(dispatched.cause()).isInstanceOf(ProtocolException.class);
    return (ProtocolException) dispatched.cause();
  }

  private static void assertRefused(Future<JsonNode> dispatched, int status, String code, String message) {
    ProtocolException refused = refusal(dispatched);
    assertThat(refused.status()).isEqualTo(status);
    assertThat(refused.code()).isEqualTo(code);
    assertThat(refused.getMessage()).isEqualTo(message);
  }
}
