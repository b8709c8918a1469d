package org.shine.server.directory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.model.UserCard;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.util.WsUrls;

/** Strict JSON form of a {@link UserCard}: parses what a client sent, renders the canonical form. */
public final class CardJson {
  private static final Set<String> CARD_FIELDS = Set.of("login", "publicKeyB64", "accessServers", "version",
      "signatureB64");
  private static final Set<String> ROUTE_FIELDS = Set.of("serverLogin", "url");

  private CardJson() {
  }

  public static UserCard parse(JsonNode node) {
    Fields fields = Fields.of(node, "card", CARD_FIELDS);
    String login = fields.login("login");
    String publicKeyB64 = fields.requiredString("publicKeyB64");
    fields.base64("publicKeyB64", Ed25519Signer.PUBLIC_KEY_SIZE);
    long version = fields.requiredLong("version", 0, Long.MAX_VALUE);
    String signatureB64 = fields.requiredString("signatureB64");
    fields.base64("signatureB64", Ed25519Signer.SIGNATURE_SIZE);
    JsonNode servers = fields.required("accessServers");
    if (!servers.isArray() || servers.isEmpty() || servers.size() > 2) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "card.accessServers must list 1 or 2 servers");
    }
    List<UserCard.Route> routes = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < servers.size(); i++) {
      Fields route = Fields.of(servers.get(i), "card.accessServers[" + i + "]", ROUTE_FIELDS);
      String serverLogin = route.serverName("serverLogin");
      String url = route.requiredString("url");
      if (!WsUrls.isWsUrl(url) || url.contains("|")) {
        throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
            "card.accessServers[" + i + "].url must be a ws:// or wss:// URL");
      }
      if (!seen.add(serverLogin)) {
        throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "card.accessServers lists " + serverLogin
            + " twice");
      }
      routes.add(new UserCard.Route(serverLogin, url));
    }
    return new UserCard(login, publicKeyB64, routes, version, signatureB64);
  }

  public static ObjectNode render(ObjectMapper mapper, UserCard card) {
    ObjectNode node = mapper.createObjectNode();
    node.put("login", card.login());
    node.put("publicKeyB64", card.publicKeyB64());
    ArrayNode servers = node.putArray("accessServers");
    for (UserCard.Route route : card.accessServers()) {
      servers.addObject().put("serverLogin", route.serverLogin()).put("url", route.url());
    }
    node.put("version", card.version());
    node.put("signatureB64", card.signatureB64());
    return node;
  }
}
