package org.shine.server.gateway;

import java.util.Objects;
import java.util.function.LongSupplier;
import org.shine.server.config.AppConfig;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.PerKeyRate;

/**
 * The rate limits of PROTOCOL §13 on one node, shared by its gateway instances; each refusal is 429
 * {@code RATE_LIMITED} naming its config key, and is decided before the op does any work (for the Receive* ops:
 * before any signature is verified, so a flood cannot fill the verify queue):
 * <ul>
 *   <li>{@code limits.sendsPerUserPerS}: a user's client requests that write (PROTOCOL §11), per login;</li>
 *   <li>{@code limits.opsPerPeerPerS}: every op of an authenticated server session, per peer serverLogin;</li>
 *   <li>{@code limits.cardsPerIpPerMin}: card publishes from any other session, per client address;</li>
 *   <li>{@code limits.openOpsPerIpPerS} and {@code limits.openOpsPerLoginPerS}: {@code ReceiveIncomingMessage} and
 *   {@code ReceiveOutcomingMessage} on any session but a server's, per client address and per {@code from} of the
 *   container;</li>
 *   <li>{@code limits.inboundPerRecipientPerS}: the copies those two ops bring for one recipient ({@code to}), from
 *   any session.</li>
 * </ul>
 * Each table keeps at most {@link #MAX_TRACKED} keys ({@link PerKeyRate}); while one is full of live keys, the keys
 * without a cell share one overflow cell of the same rate, so inventing keys buys no more than one key's rate.
 */
public final class OpLimits {
  /** Keys one limit keeps a cell for; beyond, the keys without one share one cell. */
  public static final int MAX_TRACKED = 100_000;
  private static final long SECOND = 1_000_000_000L;
  private static final long MINUTE = 60 * SECOND;
  private final AppConfig.Limits limits;
  private final Limit writesPerUser;
  private final Limit opsPerPeer;
  private final Limit cardsPerIp;
  private final Limit openPerIp;
  private final Limit openPerLogin;
  private final Limit inboundPerRecipient;

  public OpLimits(AppConfig.Limits limits, LongSupplier nanoClock) {
    this(limits, MAX_TRACKED, nanoClock);
  }

  /** With a table bound of its own (tests). */
  public OpLimits(AppConfig.Limits limits, int maxTracked, LongSupplier nanoClock) {
    this.limits = Objects.requireNonNull(limits);
    this.writesPerUser = new Limit(limits.sendsPerUserPerS(), SECOND, maxTracked, nanoClock);
    this.opsPerPeer = new Limit(limits.opsPerPeerPerS(), SECOND, maxTracked, nanoClock);
    this.cardsPerIp = new Limit(limits.cardsPerIpPerMin(), MINUTE, maxTracked, nanoClock);
    this.openPerIp = new Limit(limits.openOpsPerIpPerS(), SECOND, maxTracked, nanoClock);
    this.openPerLogin = new Limit(limits.openOpsPerLoginPerS(), SECOND, maxTracked, nanoClock);
    this.inboundPerRecipient = new Limit(limits.inboundPerRecipientPerS(), SECOND, maxTracked, nanoClock);
  }

  /** A client request of {@code login} that writes (SendMessagePair, SendReadReceipt, DeleteMessage, SetUserSetting). */
  public void admitWrite(String login) {
    if (!writesPerUser.tryAcquire(login)) {
      throw refused("limits.sendsPerUserPerS", limits.sendsPerUserPerS() + " writes per second by " + login);
    }
  }

  /** One op of the authenticated server session of {@code serverLogin}. */
  public void admitPeerOp(String serverLogin) {
    if (!opsPerPeer.tryAcquire(serverLogin)) {
      throw refused("limits.opsPerPeerPerS", limits.opsPerPeerPerS() + " ops per second from server " + serverLogin);
    }
  }

  /** A PublishUserCard from a session that is not a server's, coming from {@code host}. */
  public void admitCardPublish(String host) {
    if (!cardsPerIp.tryAcquire(host)) {
      throw refused("limits.cardsPerIpPerMin", limits.cardsPerIpPerMin() + " card publishes per minute from "
          + host);
    }
  }

  /**
   * A Receive* op on a session that is not a server's, from {@code host}, carrying a container of {@code from}
   * ({@code from} null when the container cannot be read; the op will refuse it without verifying anything).
   */
  public void admitOpenOp(String host, String from) {
    if (!openPerIp.tryAcquire(host)) {
      throw refused("limits.openOpsPerIpPerS", limits.openOpsPerIpPerS() + " open ops per second from " + host);
    }
    if (from != null && !openPerLogin.tryAcquire(from)) {
      throw refused("limits.openOpsPerLoginPerS", limits.openOpsPerLoginPerS()
          + " open ops per second carrying messages of " + from);
    }
  }

  /** A copy for {@code recipient} brought by a Receive* op, on any session. */
  public void admitInbound(String recipient) {
    if (!inboundPerRecipient.tryAcquire(recipient)) {
      throw refused("limits.inboundPerRecipientPerS", limits.inboundPerRecipientPerS()
          + " incoming copies per second for " + recipient);
    }
  }

  /** Cells held now, over all six limits (each at most the table bound). */
  int tracked() {
    return writesPerUser.keys.tracked() + opsPerPeer.keys.tracked() + cardsPerIp.keys.tracked() + openPerIp.keys.tracked()
        + openPerLogin.keys.tracked() + inboundPerRecipient.keys.tracked();
  }

  private static ProtocolException refused(String key, String what) {
    return new ProtocolException(Status.TOO_MANY_REQUESTS, ErrorCode.RATE_LIMITED, "more than " + what
        + " on this server (" + key + "); nothing was stored, retry later");
  }

  /** One limit: a cell per key while there is room, one shared overflow cell for the keys beyond. */
  private static final class Limit {
    private static final String OVERFLOW = "";
    final PerKeyRate keys;
    private final PerKeyRate overflow;

    Limit(int events, long periodNanos, int maxTracked, LongSupplier nanoClock) {
      this.keys = new PerKeyRate(events, periodNanos, maxTracked, nanoClock);
      this.overflow = new PerKeyRate(events, periodNanos, 1, nanoClock);
    }

    boolean tryAcquire(String key) {
      PerKeyRate.Grant grant = keys.tryAcquire(key);
      return grant == PerKeyRate.Grant.GRANTED
          || grant == PerKeyRate.Grant.FULL && overflow.tryAcquire(OVERFLOW) == PerKeyRate.Grant.GRANTED;
    }
  }
}
