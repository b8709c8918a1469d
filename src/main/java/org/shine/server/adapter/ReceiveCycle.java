package org.shine.server.adapter;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.sql.SQLException;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.util.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Phase 1 of seed 004, step for step: while the refresh token works and no stop is signalled, poll; on 200 put
 * the event into the inbox in one local transaction, commit, then ACK; 204 and 408 poll again; 401 refreshes
 * and polls again; a network error, or any error of the ACK, is logged and ends the cycle (the supervisor
 * starts a new one).
 */
final class ReceiveCycle {
  private static final Logger LOG = LoggerFactory.getLogger(ReceiveCycle.class);
  static final long SHORT_POLL_PAUSE_MS = 1_000;
  private final HubClient hub;
  private final Inbox inbox;
  private final TokenHolder tokens;
  private final long waitS;
  private final AtomicBoolean stop;
  private final Hooks hooks;
  final AtomicLong received = new AtomicLong();
  final AtomicLong acked = new AtomicLong();

  ReceiveCycle(HubClient hub, Inbox inbox, TokenHolder tokens, long waitS, AtomicBoolean stop, Hooks hooks) {
    this.hub = Objects.requireNonNull(hub);
    this.inbox = Objects.requireNonNull(inbox);
    this.tokens = Objects.requireNonNull(tokens);
    this.waitS = waitS;
    this.stop = Objects.requireNonNull(stop);
    this.hooks = Objects.requireNonNull(hooks);
  }

  /** How a cycle ended. */
  enum End { STOPPED, REFRESH_REJECTED, NETWORK_ERROR, ACK_ERROR, INBOX_ERROR }

  End run() throws InterruptedException {
    while (true) {
      // step 1: continue only with a working refresh token and no stop signal
      if (stop.get()) {
        return End.STOPPED;
      }
      if (tokens.current() == null) {
        return End.REFRESH_REJECTED;
      }
      HubClient.Tokens used = tokens.current();
      HttpResponse<String> response;
      try {
        response = hub.poll(used.accessToken(), waitS);
      } catch (IOException e) {
        LOG.warn("hub unreachable, ending the receive cycle: {}", e.toString());
        return End.NETWORK_ERROR;
      }
      switch (response.statusCode()) {
        case 200 -> {
          End end = take(response);
          if (end != null) {
            return end;
          }
        }
        case 204, 408 -> {
          // nothing queued: poll again (a short poll pauses first, so an idle adapter does not spin)
          if (waitS == 0) {
            Thread.sleep(SHORT_POLL_PAUSE_MS);
          }
        }
        case 401 -> {
          if (!refresh(used)) {
            return End.REFRESH_REJECTED;
          }
        }
        default -> {
          LOG.warn("hub answered {} to a poll, ending the receive cycle", response.statusCode());
          return End.NETWORK_ERROR;
        }
      }
    }
  }

  /** Steps 5-9 for one event; null to go on polling. */
  private End take(HttpResponse<String> response) throws InterruptedException {
    String deliveryId = response.headers().firstValue("X-Delivery-Id").orElse(null);
    String eventKey;
    try {
      JsonNode event = Json.MAPPER.readTree(response.body());
      eventKey = event.path("eventKey").asText(null);
    } catch (IOException e) {
      eventKey = null;
    }
    if (deliveryId == null || eventKey == null) {
      LOG.warn("a 200 without a delivery id or event key; ending the receive cycle");
      return End.NETWORK_ERROR;
    }
    received.incrementAndGet();
    try {
      boolean fresh = inbox.store(eventKey, deliveryId, response.body(), System.currentTimeMillis());
      LOG.debug("event committed to the inbox [eventKey: {}, new: {}]", eventKey, fresh);
    } catch (SQLException e) {
      // rolled back: the event stays in the hub and comes again
      LOG.warn("inbox write failed, ending the receive cycle: {}", e.toString());
      return End.INBOX_ERROR;
    }
    if (hooks.afterCommit(eventKey)) {
      return End.NETWORK_ERROR;
    }
    try {
      HttpResponse<String> ack = hub.ack(tokens.current().accessToken(), deliveryId);
      if (ack.statusCode() != 200) {
        LOG.warn("hub answered {} to the ACK of {}, ending the receive cycle", ack.statusCode(), deliveryId);
        return End.ACK_ERROR;
      }
    } catch (IOException e) {
      LOG.warn("ACK of {} failed, ending the receive cycle: {}", deliveryId, e.toString());
      return End.ACK_ERROR;
    }
    acked.incrementAndGet();
    return null;
  }

  private boolean refresh(HubClient.Tokens expired) throws InterruptedException {
    try {
      return tokens.refresh(hub, expired) != null;
    } catch (IOException e) {
      LOG.warn("token refresh failed: {}", e.toString());
      return true;
    }
  }

  /** Test points inside the cycle. */
  interface Hooks {
    Hooks NONE = eventKey -> false;

    /** Called after the inbox commit and before the ACK; true ends the cycle there (a simulated crash). */
    boolean afterCommit(String eventKey);
  }

  /**
   * The current token pair, shared by cycles and by the card reads of Phase 2; null before the login and once the
   * refresh token was rejected. A refresh is done once for one expired pair, whoever sees it expire first.
   */
  static final class TokenHolder {
    private volatile HubClient.Tokens tokens;

    TokenHolder(HubClient.Tokens tokens) {
      this.tokens = tokens;
    }

    HubClient.Tokens current() {
      return tokens;
    }

    void set(HubClient.Tokens tokens) {
      this.tokens = tokens;
    }

    /**
     * The pair to use after {@code expired} was refused: the one another thread already got in its place, or a
     * refreshed one; null when the refresh token is rejected. Runs on the adapter's own threads, never an event loop.
     */
    synchronized HubClient.Tokens refresh(HubClient hub, HubClient.Tokens expired)
        throws IOException, InterruptedException {
      if (tokens != expired) {
        return tokens;
      }
      tokens = hub.refresh(expired.refreshToken());
      return tokens;
    }
  }
}
