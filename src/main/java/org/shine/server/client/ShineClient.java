package org.shine.server.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.KeyFile;
import org.shine.server.util.Json;
import org.shine.server.util.WsUrls;

/**
 * A WebSocket client of one access server: requests matched to responses by {@code requestId} ({@link
 * PendingRequests}), server events handed to a listener, and helpers that sign cards, logins and message pairs. Used by
 * the CLI and the tests. Over 350 lines for a reason: the static signing helpers ({@link #signPair}, {@link
 * #signReceipt}, {@link #signTombstone}, {@link #signedCard}, {@link SignedPair}) are what some 50 CLI and test files
 * call as {@code ShineClient.signPair} and so on, and moving them would rename calls across all of those files
 * without splitting this class's one job, the connection and its requests.
 */
public final class ShineClient {
  /** The error code of a request that got no answer in time (status 0: nothing came from the server). */
  public static final String TIMEOUT = "TIMEOUT";
  /** The error code of a request whose connection closed before its answer (status 0). */
  public static final String CONNECTION_CLOSED = "CONNECTION_CLOSED";
  /** The most GetUserSettings pages {@link #allSettings()} reads. */
  public static final int MAX_SETTINGS_PAGES = 1_000;
  private static final SecureRandom RANDOM = new SecureRandom();
  private final Vertx vertx;
  private final WebSocketClient wsClient;
  private final PendingRequests pending;
  private final List<Consumer<JsonNode>> eventListeners = new CopyOnWriteArrayList<>();
  private final List<Runnable> closeListeners = new CopyOnWriteArrayList<>();
  private WebSocket socket;
  private volatile Consumer<JsonNode> rawListener = frame -> { };
  private volatile boolean closed;
  private final String url;
  /** How long a connect and its WebSocket handshake may take. */
  static final long HANDSHAKE_TIMEOUT_MS = 10_000;

  private ShineClient(Vertx vertx, String url, boolean offerCompression, String localAddress) {
    this.vertx = vertx;
    this.url = url;
    this.pending = new PendingRequests(vertx);
    this.wsClient = vertx.createWebSocketClient(new WebSocketClientOptions()
        .setMaxFrameSize(4 << 20).setMaxMessageSize(4 << 20)
        .setTryUsePerMessageCompression(offerCompression).setLocalAddress(localAddress));
  }

  /** Connects to a {@code ws://host:port/ws} URL. */
  public static Future<ShineClient> connect(Vertx vertx, String url) {
    return connect(vertx, url, false);
  }

  /**
   * As {@link #connect(Vertx, String)}; {@code offerCompression} offers permessage-deflate in the handshake, as
   * browsers and Node always do (whether the server took it: {@link #compressed()}).
   */
  public static Future<ShineClient> connect(Vertx vertx, String url, boolean offerCompression) {
    return connect(new ShineClient(vertx, url, offerCompression, null), url);
  }

  /**
   * As {@link #connect(Vertx, String)} from the local address {@code localAddress} (e.g. another loopback address,
   * for the per-address limits of PROTOCOL §11 and §13).
   */
  public static Future<ShineClient> connectFrom(Vertx vertx, String url, String localAddress) {
    return connect(new ShineClient(vertx, url, false, localAddress), url);
  }

  private static Future<ShineClient> connect(ShineClient client, String url) {
    // a handshake the server never answers (seen at its start-up) fails instead of holding the caller for good
    return client.wsClient.connect(WsUrls.connectOptions(url).setConnectTimeout(HANDSHAKE_TIMEOUT_MS)
        .setTimeout(HANDSHAKE_TIMEOUT_MS)).map(ws -> {
      client.socket = ws;
      ws.textMessageHandler(client::onFrame);
      ws.closeHandler(v -> {
        client.closed = true;
        client.pending.failAll("connection closed");
        client.closeListeners.forEach(Runnable::run);
      });
      return client;
    });
  }

  /** Listens to server-pushed events ({@code op} + {@code payload}, no {@code requestId}). */
  public ShineClient onEvent(Consumer<JsonNode> listener) {
    eventListeners.add(listener);
    return this;
  }

  /** Runs {@code listener} once the connection has closed (by either side), after pending requests failed. */
  public ShineClient onClose(Runnable listener) {
    closeListeners.add(listener);
    if (socket.isClosed() && closeListeners.remove(listener)) {
      listener.run();
    }
    return this;
  }

  /** Sees every frame that arrives, responses included (for tests). */
  public ShineClient onRawFrame(Consumer<JsonNode> listener) {
    this.rawListener = listener;
    return this;
  }

  /** Sends a request; succeeds with the payload of a 200, fails with {@link ShineClientException} otherwise. */
  public Future<JsonNode> request(String op, JsonNode payload) {
    return request(op, payload, 0);
  }

  /**
   * As {@link #request(String, JsonNode)}, failing with status 0 {@link #TIMEOUT} when no answer comes within
   * {@code timeoutMs} (0: wait as long as the connection lives). A late answer is then ignored.
   */
  public Future<JsonNode> request(String op, JsonNode payload, long timeoutMs) {
    return pending.open(op, timeoutMs, requestId -> {
      ObjectNode frame = Json.MAPPER.createObjectNode();
      frame.put("op", op).put("requestId", requestId).set("payload", payload);
      return sendRaw(frame.toString());
    });
  }

  /** True once the connection is closed (by either side or lost): requests on it fail at once. */
  public boolean closed() {
    return closed;
  }

  /** True when the server accepted permessage-deflate for this connection. */
  public boolean compressed() {
    String extensions = socket.headers() == null ? null : socket.headers().get("sec-websocket-extensions");
    return extensions != null && extensions.contains("permessage-deflate");
  }

  /** Writes a frame as is (for tests of malformed input). */
  public Future<Void> sendRaw(String text) {
    return socket.writeTextMessage(text);
  }

  public Future<Void> close() {
    return socket.close().eventually(wsClient::close);
  }

  /** AuthChallenge + AuthLogin with the key file's key (the server tries each current key of the card). */
  public Future<JsonNode> login(String login, KeyFile key) {
    return login(login, key, false);
  }

  /**
   * AuthChallenge + AuthLogin with the key file's key; {@code nameDevice}: the login names the key as the device's
   * ({@code publicKeyB64}, PROTOCOL §4 v3), so the server checks that key alone.
   */
  public Future<JsonNode> login(String login, KeyFile key, boolean nameDevice) {
    return request("AuthChallenge", object().put("login", login)).compose(challenge -> {
      String signed = "SHiNE_AUTH|" + challenge.get("serverLogin").asText() + "|"
          + challenge.get("challengeB64").asText();
      byte[] signature = Ed25519Signer.sign(key.privateKey(), signed.getBytes(StandardCharsets.UTF_8));
      ObjectNode payload = object().put("login", login)
          .put("signatureB64", Base64.getEncoder().encodeToString(signature));
      if (nameDevice) {
        payload.put("publicKeyB64", key.publicKeyB64());
      }
      return request("AuthLogin", payload);
    });
  }

  /**
   * Logs this connection in as server {@code caller} to the server it is connected to, expected to be {@code callee}
   * (PROTOCOL §6a v3: ServerAuthChallenge with the expected name and a nonce, then ServerAuthLogin binding this
   * connection's URL), signing with {@code sign}: (url, challengeB64) → the signature over
   * {@code SHiNE_SERVER_AUTH3|callee|caller|url|challengeB64}. The callee's hello is not checked here (a tool's
   * client; the server's own peer connections check it). Answers the session's serverLogin.
   */
  public Future<JsonNode> serverLogin(String caller, String callee,
      java.util.function.BiFunction<String, String, byte[]> sign) {
    byte[] nonce = new byte[32];
    new java.security.SecureRandom().nextBytes(nonce);
    return request("ServerAuthChallenge", object().put("serverLogin", caller).put("expectedServerLogin", callee)
        .put("nonceB64", Base64.getEncoder().encodeToString(nonce))).compose(challenge ->
        request("ServerAuthLogin", object().put("serverLogin", caller).put("url", url).put("signatureB64",
            Base64.getEncoder().encodeToString(sign.apply(url, challenge.get("challengeB64").asText())))));
  }

  /** As {@link #serverLogin(String, String, java.util.function.BiFunction)} with a raw Ed25519 private key. */
  public Future<JsonNode> serverLogin(String caller, String callee, byte[] privateKey) {
    return serverLogin(caller, callee, (dialed, challengeB64) -> Ed25519Signer.sign(privateKey,
        ("SHiNE_SERVER_AUTH3|" + callee + "|" + caller + "|" + dialed + "|" + challengeB64)
            .getBytes(StandardCharsets.UTF_8)));
  }

  /** As {@link #serverLogin(String, String, byte[])} to whatever server this client is connected to. */
  public Future<JsonNode> serverLogin(String caller, byte[] privateKey) {
    return serverLogin("x").compose(callee -> serverLogin(caller, callee, privateKey));
  }

  /** The URL this client connected to. */
  public String url() {
    return url;
  }

  /** The serverLogin of the connected server (via an AuthChallenge that is never answered). */
  public Future<String> serverLogin(String anyLogin) {
    return request("AuthChallenge", object().put("login", anyLogin)).map(r -> r.get("serverLogin").asText());
  }

  /** Signs and publishes a card listing {@code routes} (serverLogin → url, in order). */
  public Future<JsonNode> publishCard(String login, KeyFile key, List<Map.Entry<String, String>> routes,
      long version) {
    return publishCard(login, key, routes, version, null);
  }

  /**
   * As {@link #publishCard(String, KeyFile, List, long)}, with the invite code a server in
   * {@code directory.registration} "invite" wants for a new login (null: none).
   */
  public Future<JsonNode> publishCard(String login, KeyFile key, List<Map.Entry<String, String>> routes,
      long version, String inviteCode) {
    ObjectNode payload = object();
    payload.set("card", signedCard(login, key, routes, version));
    if (inviteCode != null) {
      payload.put("inviteCode", inviteCode);
    }
    return request("PublishUserCard", payload);
  }

  /** Publishes a card already signed (a v3 card of {@link DeviceCard}), with an invite code or null. */
  public Future<JsonNode> publishCard(ObjectNode card, String inviteCode) {
    ObjectNode payload = object();
    payload.set("card", card);
    if (inviteCode != null) {
      payload.put("inviteCode", inviteCode);
    }
    return request("PublishUserCard", payload);
  }

  /**
   * Every setting of the logged-in user (GetUserSettings page after page, PROTOCOL §13), in key order. Stops with a
   * failure after {@link #MAX_SETTINGS_PAGES} pages, so a server that always answers {@code nextKey} cannot hold it.
   */
  public Future<ObjectNode> allSettings() {
    return settingsFrom(null, object(), 0);
  }

  private Future<ObjectNode> settingsFrom(String afterKey, ObjectNode collected, int pages) {
    if (pages >= MAX_SETTINGS_PAGES) {
      return Future.failedFuture(new ShineClientException(0, "TOO_MANY_PAGES", "GetUserSettings answered more than "
          + MAX_SETTINGS_PAGES + " pages"));
    }
    ObjectNode payload = object();
    if (afterKey != null) {
      payload.put("afterKey", afterKey);
    }
    return request("GetUserSettings", payload).compose(page -> {
      page.path("settings").properties().forEach(e -> collected.set(e.getKey(), e.getValue()));
      JsonNode next = page.get("nextKey");
      return next != null && next.isTextual() && !next.asText().equals(afterKey)
          ? settingsFrom(next.asText(), collected, pages + 1) : Future.succeededFuture(collected);
    });
  }

  /** A signed card as JSON. */
  public static ObjectNode signedCard(String login, KeyFile key, List<Map.Entry<String, String>> routes,
      long version) {
    ObjectNode card = object().put("login", login).put("publicKeyB64", key.publicKeyB64());
    var servers = card.putArray("accessServers");
    for (Map.Entry<String, String> route : routes) {
      servers.addObject().put("serverLogin", route.getKey()).put("url", route.getValue());
    }
    byte[] signature = Ed25519Signer.sign(key.privateKey(), CardKeys.signedText(login, key.publicKeyB64(), version,
        routes).getBytes(StandardCharsets.UTF_8));
    card.put("version", version).put("signatureB64", Base64.getEncoder().encodeToString(signature));
    return card;
  }

  /**
   * Builds, signs and sends a pair with a UTF-8 text body created now, once. Each call signs a new message (a new
   * nonce): to send one message again after a 503, a timeout or a lost connection, keep its {@link SignedPair} and
   * hand that to {@link Resender}.
   */
  public Future<JsonNode> sendText(String from, KeyFile key, String to, String text) {
    return sendPair(signPair(from, key, to, System.currentTimeMillis(), randomNonce(), 0,
        text.getBytes(StandardCharsets.UTF_8)));
  }

  public Future<JsonNode> sendPair(SignedPair pair) {
    return sendPair(pair, 0);
  }

  /** Sends the pair's bytes as signed; fails with {@link #TIMEOUT} when unanswered for {@code timeoutMs} (0: none). */
  public Future<JsonNode> sendPair(SignedPair pair, long timeoutMs) {
    return request("SendMessagePair", object()
        .put("incomingBlobB64", Base64.getEncoder().encodeToString(pair.incoming().bytes()))
        .put("outgoingBlobB64", Base64.getEncoder().encodeToString(pair.outgoing().bytes())), timeoutMs);
  }

  /** Signs both copies of one logical message. */
  public static SignedPair signPair(String from, KeyFile key, String to, long createdAtMs, long nonce, long revision,
      byte[] body) {
    DmContainer incoming = DmCodec.sign(DmKind.INCOMING, createdAtMs, nonce, revision, from, to, "", body,
        key.privateKey());
    DmContainer outgoing = DmCodec.sign(DmKind.OUTGOING, createdAtMs, nonce, revision, from, to, "", body,
        key.privateKey());
    return new SignedPair(incoming, outgoing);
  }

  /** Signs both copies of one logical message, each with its own body (PROTOCOL §4 v3: each sealed to its owner). */
  public static SignedPair signPair(String from, KeyFile key, String to, long createdAtMs, long nonce, long revision,
      byte[] incomingBody, byte[] outgoingBody) {
    DmContainer incoming = DmCodec.sign(DmKind.INCOMING, createdAtMs, nonce, revision, from, to, "", incomingBody,
        key.privateKey());
    DmContainer outgoing = DmCodec.sign(DmKind.OUTGOING, createdAtMs, nonce, revision, from, to, "", outgoingBody,
        key.privateKey());
    return new SignedPair(incoming, outgoing);
  }

  /** A read receipt by {@code reader} for the message {@code baseKey} that {@code sender} sent to the reader. */
  public static DmContainer signReceipt(String reader, KeyFile key, String sender, String baseKey, long readAtMs) {
    return DmCodec.sign(DmKind.READ_RECEIPT, readAtMs, randomNonce(), 0, reader, sender, baseKey, new byte[0],
        key.privateKey());
  }

  /** A tombstone by {@code author} deleting its own copy {@code messageKey} of a message with {@code counterpart}. */
  public static DmContainer signTombstone(String author, KeyFile key, String counterpart, String messageKey,
      long atMs) {
    return DmCodec.sign(DmKind.TOMBSTONE, atMs, randomNonce(), 0, author, counterpart, messageKey, new byte[0],
        key.privateKey());
  }

  public Future<JsonNode> sendReadReceipt(DmContainer receipt) {
    return sendReadReceipt(receipt, 0);
  }

  /** As {@link #sendReadReceipt(DmContainer)}, failing with {@link #TIMEOUT} after {@code timeoutMs} (0: none). */
  public Future<JsonNode> sendReadReceipt(DmContainer receipt, long timeoutMs) {
    return request("SendReadReceipt", object().put("receiptBlobB64",
        Base64.getEncoder().encodeToString(receipt.bytes())), timeoutMs);
  }

  public Future<JsonNode> deleteMessage(DmContainer tombstone) {
    return deleteMessage(tombstone, 0);
  }

  /** As {@link #deleteMessage(DmContainer)}, failing with {@link #TIMEOUT} after {@code timeoutMs} (0: none). */
  public Future<JsonNode> deleteMessage(DmContainer tombstone, long timeoutMs) {
    return request("DeleteMessage", object().put("tombstoneBlobB64",
        Base64.getEncoder().encodeToString(tombstone.bytes())), timeoutMs);
  }

  public static long randomNonce() {
    return RANDOM.nextLong() & Long.MAX_VALUE;
  }

  public static ObjectNode object() {
    return Json.MAPPER.createObjectNode();
  }

  public Vertx vertx() {
    return vertx;
  }

  private void onFrame(String text) {
    JsonNode frame;
    try {
      frame = Json.MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      return;
    }
    rawListener.accept(frame);
    JsonNode requestId = frame.get("requestId");
    if (requestId == null) {
      if (frame.has("status")) {
        return;
      }
      for (Consumer<JsonNode> listener : eventListeners) {
        listener.accept(frame);
      }
      return;
    }
    pending.answer(requestId.asText(), frame);
  }

  /** The two signed copies of one message. */
  public record SignedPair(DmContainer incoming, DmContainer outgoing) {
  }
}
