package org.shine.server.protocol;

/** Stable UPPER_SNAKE error codes carried in {@code error.code}; docs/protocol.md lists their meaning. */
public final class ErrorCode {
  public static final String BAD_JSON = "BAD_JSON";
  public static final String BAD_ENVELOPE = "BAD_ENVELOPE";
  public static final String UNKNOWN_OP = "UNKNOWN_OP";
  public static final String MISSING_FIELD = "MISSING_FIELD";
  public static final String UNKNOWN_FIELD = "UNKNOWN_FIELD";
  public static final String INVALID_FIELD = "INVALID_FIELD";
  public static final String BAD_BASE64 = "BAD_BASE64";
  public static final String BAD_CONTAINER = "BAD_CONTAINER";
  public static final String WRONG_KIND = "WRONG_KIND";
  public static final String PAIR_MISMATCH = "PAIR_MISMATCH";
  public static final String SELF_MESSAGE = "SELF_MESSAGE";
  public static final String CLOCK_SKEW = "CLOCK_SKEW";
  public static final String BAD_SIGNATURE = "BAD_SIGNATURE";
  public static final String INVALID_LOGIN = "INVALID_LOGIN";
  public static final String NO_CHALLENGE = "NO_CHALLENGE";
  public static final String NOT_AUTHENTICATED = "NOT_AUTHENTICATED";
  public static final String ALREADY_AUTHENTICATED = "ALREADY_AUTHENTICATED";
  public static final String FORBIDDEN_AUTHOR = "FORBIDDEN_AUTHOR";
  public static final String USER_NOT_FOUND = "USER_NOT_FOUND";
  public static final String CONTENT_CONFLICT = "CONTENT_CONFLICT";
  public static final String KEY_MISMATCH = "KEY_MISMATCH";
  public static final String STALE_VERSION = "STALE_VERSION";
  public static final String CARD_CONFLICT = "CARD_CONFLICT";
  public static final String FRAME_TOO_LARGE = "FRAME_TOO_LARGE";
  public static final String CONTAINER_TOO_LARGE = "CONTAINER_TOO_LARGE";
  public static final String BODY_TOO_LARGE = "BODY_TOO_LARGE";
  /**
   * This server is not an access server of that user: 421 on the server ops; 403 on PublishUserCard when a new
   * login's card does not name this server (nor the relaying server), PROTOCOL §13 admission.
   */
  public static final String NOT_ACCESS_SERVER = "NOT_ACCESS_SERVER";
  /** A new login's card needs an invite code here ({@code directory.registration} "invite", PROTOCOL §13). */
  public static final String INVITE_REQUIRED = "INVITE_REQUIRED";
  /** The invite code given is unknown, used already or expired (PROTOCOL §13). */
  public static final String INVITE_INVALID = "INVITE_INVALID";
  public static final String TOO_MANY_IN_FLIGHT = "TOO_MANY_IN_FLIGHT";
  public static final String OVERLOADED = "OVERLOADED";
  public static final String PEER_UNAVAILABLE = "PEER_UNAVAILABLE";
  public static final String PEER_TIMEOUT = "PEER_TIMEOUT";
  public static final String INTERNAL = "INTERNAL";
  public static final String STORAGE_UNAVAILABLE = "STORAGE_UNAVAILABLE";
  public static final String RATE_LIMITED = "RATE_LIMITED";
  public static final String ROUTE_CONFLICT = "ROUTE_CONFLICT";
  /** A route's serverLogin is not its URL's host, and the server is not a configured peer (PROTOCOL §6a v3). */
  public static final String ROUTE_NAME = "ROUTE_NAME";
  /** A write would exceed one of the user's quotas (PROTOCOL §13); the message names the quota. */
  public static final String QUOTA_EXCEEDED = "QUOTA_EXCEEDED";
  /** A route names an address this server must not dial (PROTOCOL §13). */
  public static final String ROUTE_NOT_ALLOWED = "ROUTE_NOT_ALLOWED";
  /** ServerAuthChallenge for another server's name (PROTOCOL §6a v3). */
  public static final String WRONG_SERVER = "WRONG_SERVER";
  /** ServerAuthLogin signed for a URL that is not this server's (PROTOCOL §6a v3). */
  public static final String WRONG_URL = "WRONG_URL";
  public static final String UNKNOWN_SERVER = "UNKNOWN_SERVER";
  public static final String SERVER_KEY_UNAVAILABLE = "SERVER_KEY_UNAVAILABLE";
  public static final String SERVER_KEY_CHANGED = "SERVER_KEY_CHANGED";
  public static final String SOURCE_MISMATCH = "SOURCE_MISMATCH";
  public static final String NOT_SIBLING = "NOT_SIBLING";
  public static final String PEER_NOT_ALLOWED = "PEER_NOT_ALLOWED";
  public static final String PEER_BUSY = "PEER_BUSY";
  /** Plain HTTP on the WebSocket endpoint (HTTP 426). */
  public static final String UPGRADE_REQUIRED = "UPGRADE_REQUIRED";
  public static final String INVALID_TOKEN = "INVALID_TOKEN";
  public static final String UNKNOWN_DELIVERY = "UNKNOWN_DELIVERY";
  public static final String METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED";
  /**
   * Signed by a key its user's card revoked (PROTOCOL §4 v3): 400 for anything not already stored; also the failure
   * code of an accepted delivery whose message that key signed.
   */
  public static final String KEY_REVOKED = "KEY_REVOKED";
  /** Only the stored card's recovery key signs a new epoch or changes the recovery key (403, PROTOCOL §4 v3). */
  public static final String RECOVERY_KEY_REQUIRED = "RECOVERY_KEY_REQUIRED";
  /** A card signed by a key that may not sign it: a retired key, or the recovery key within its epoch (403). */
  public static final String SIGNER_NOT_ALLOWED = "SIGNER_NOT_ALLOWED";
  /** A card leaves out a key of the stored card instead of retiring or revoking it (400, PROTOCOL §4 v3). */
  public static final String KEY_DROPPED = "KEY_DROPPED";
  /** A card's signer cannot be placed from the stored card (versions were missed) and no chain was found (409). */
  public static final String CARD_CHAIN_GAP = "CARD_CHAIN_GAP";

  private ErrorCode() {
  }
}
