package org.shine.server.protocol;

/**
 * One builder per error condition that more than one place refuses with: the status, the code and the wording of
 * each are decided here once, whichever package meets the condition.
 */
public final class ProtocolErrors {
  private ProtocolErrors() {
  }

  /** 421 {@code NOT_ACCESS_SERVER}: {@code serverLogin} (this server) is not one of {@code login}'s routes. */
  public static ProtocolException notAccessServer(String serverLogin, String login) {
    return new ProtocolException(Status.MISDIRECTED, ErrorCode.NOT_ACCESS_SERVER,
        serverLogin + " is not an access server of " + login);
  }

  /** 404 {@code USER_NOT_FOUND}: no card of {@code login} is stored here. */
  public static ProtocolException userNotFound(String login) {
    return new ProtocolException(Status.NOT_FOUND, ErrorCode.USER_NOT_FOUND, "unknown user " + login);
  }

  /** 400 {@code ALREADY_AUTHENTICATED}: a login on a session that is logged in as {@code who}. */
  public static ProtocolException alreadyAuthenticated(String who) {
    return ProtocolException.badRequest(ErrorCode.ALREADY_AUTHENTICATED, "this session is already logged in as "
        + who);
  }

  /** 403 {@code FORBIDDEN_AUTHOR}: a container a session sends is signed by another user than its login. */
  public static ProtocolException forbiddenAuthor(String what, String author, String login) {
    return new ProtocolException(Status.FORBIDDEN, ErrorCode.FORBIDDEN_AUTHOR,
        what + " author " + author + " is not the session's login " + login);
  }

  /** 400 {@code SELF_MESSAGE}: a message to its own author. */
  public static ProtocolException selfMessage() {
    return ProtocolException.badRequest(ErrorCode.SELF_MESSAGE, "a message must be sent to another user");
  }

  /** 413 {@code CONTAINER_TOO_LARGE}: a container over the limit of PROTOCOL §2; {@code detail} says which. */
  public static ProtocolException containerTooLarge(String detail) {
    return new ProtocolException(Status.TOO_LARGE, ErrorCode.CONTAINER_TOO_LARGE, detail);
  }

  /** 401 {@code BAD_SIGNATURE}: a login challenge not signed with {@code login}'s key. */
  public static ProtocolException badChallengeSignature(String login) {
    return new ProtocolException(Status.UNAUTHORIZED, ErrorCode.BAD_SIGNATURE,
        "the challenge signature does not verify with " + login + "'s key");
  }

  /** 400 {@code BAD_SIGNATURE}: a container ({@code what}) not signed with its author's key. */
  public static ProtocolException badContainerSignature(String what, String author) {
    return ProtocolException.badRequest(ErrorCode.BAD_SIGNATURE,
        what + " does not verify with " + author + "'s key");
  }

  /** 409 {@code CONTENT_CONFLICT}: {@code what} is stored already with other bytes. */
  public static ProtocolException contentConflict(String what) {
    return new ProtocolException(Status.CONFLICT, ErrorCode.CONTENT_CONFLICT,
        what + " is already stored with different bytes");
  }

  /** 429 {@code OVERLOADED}: a queue of this node is full. */
  public static ProtocolException overloaded(String message) {
    return new ProtocolException(Status.TOO_MANY_REQUESTS, ErrorCode.OVERLOADED, message);
  }

  /**
   * 503 {@code STORAGE_UNAVAILABLE}: the database did not answer. The request may or may not have been stored;
   * resending the same bytes is safe (an identical repeat is answered from what is stored).
   */
  public static ProtocolException storageUnavailable() {
    return new ProtocolException(Status.UNAVAILABLE, ErrorCode.STORAGE_UNAVAILABLE,
        "storage is unavailable; resend the same request later (it may already be stored)");
  }
}
