package org.shine.server.adapter;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.client.Verdict;
import org.shine.server.util.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Phase 2 of seed 004: picks ready rows (delay passed, status pending) under a lease, counting the attempt when
 * it claims the row; verifies its container against the author's card (PROTOCOL §13 "Clients verify"): one that does
 * not verify is marked rejected with its reason and never reaches the handler, one that cannot be checked now (the
 * card could not be read) is retried like a failed handler; opens an encrypted body with the user's keys
 * ({@link EventBodies}: one that does not open is rejected too); calls the handler; success marks the row done,
 * failure postpones it by the next delay (with jitter) and after the last delay marks it dead.
 */
final class InboxProcessor {
  private static final Logger LOG = LoggerFactory.getLogger(InboxProcessor.class);
  private static final int BATCH = 32;
  private final Inbox inbox;
  private final EventHandler handler;
  private final ContainerVerifier verifier;
  private final EventBodies bodies;
  private final List<Long> delaysMs;
  private final long leaseMs;
  final AtomicLong processed = new AtomicLong();

  /**
   * {@code verifier}: an {@link ContainerVerifier#inline} one (this thread is the adapter's own); {@code bodies}: how
   * bodies are opened ({@link EventBodies#NONE}: handed on as the server has them).
   */
  InboxProcessor(Inbox inbox, EventHandler handler, ContainerVerifier verifier, EventBodies bodies,
      List<Long> delaysMs, long leaseMs) {
    this.inbox = Objects.requireNonNull(inbox);
    this.handler = Objects.requireNonNull(handler);
    this.verifier = Objects.requireNonNull(verifier);
    this.bodies = Objects.requireNonNull(bodies);
    this.delaysMs = List.copyOf(delaysMs);
    this.leaseMs = leaseMs;
  }

  /** Processes what is ready now; answers how many rows it handled. */
  int runOnce() throws SQLException {
    List<Inbox.Claimed> ready = inbox.claimReady(System.currentTimeMillis(), leaseMs, BATCH);
    for (Inbox.Claimed row : ready) {
      try {
        JsonNode event = Json.MAPPER.readTree(row.body());
        Verdict verdict = verifier.event(event).await();
        if (verdict.outcome() == Verdict.Outcome.NOT_VERIFIED) {
          LOG.warn("event rejected, its container does not verify [eventKey: {}]: {}", row.eventKey(),
              verdict.reason());
          inbox.markRejected(row.eventKey(), verdict.reason());
          continue;
        }
        if (verdict.outcome() == Verdict.Outcome.UNCHECKED) {
          throw new IOException("not verified yet: " + verdict.reason());
        }
        EventBodies.Opened opened = bodies.open(event);
        if (opened.rejection() != null) {
          LOG.warn("event rejected, its body does not open [eventKey: {}]: {}", row.eventKey(), opened.rejection());
          inbox.markRejected(row.eventKey(), opened.rejection());
          continue;
        }
        handler.handle(opened.event());
        inbox.markDone(row.eventKey());
        processed.incrementAndGet();
      } catch (SQLException e) {
        throw e;
      } catch (Exception e) {
        long next = row.attempt() > delaysMs.size() ? -1 : System.currentTimeMillis() + jitter(
            delaysMs.get(row.attempt() - 1));
        LOG.info("handler failed [eventKey: {}, attempt: {}]; {}: {}", row.eventKey(), row.attempt(),
            next < 0 ? "dead" : "retry in " + (next - System.currentTimeMillis()) + " ms", e.toString());
        inbox.markFailed(row.eventKey(), next, e.toString());
      }
    }
    return ready.size();
  }

  /** ±10 % so that many failed rows do not come back in one burst. */
  private static long jitter(long delayMs) {
    long spread = delayMs / 10;
    return delayMs - spread + (spread == 0 ? 0 : ThreadLocalRandom.current().nextLong(2 * spread + 1));
  }
}
