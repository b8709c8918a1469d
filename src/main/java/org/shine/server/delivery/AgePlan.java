package org.shine.server.delivery;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import java.time.Clock;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.model.DeliveryPlan;
import org.shine.server.model.DeliverySchedule;
import org.shine.server.model.DeliveryState;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;

/**
 * The delivery row of a pair pulled from the sender's sibling, by its age (PROTOCOL §8): younger than the last
 * schedule point, it joins the schedule at the next point still ahead; older, one {@code GetDmDeliveryStatus} to the
 * source decides delivered or failed and nothing is sent. A pair already stored here keeps its state.
 */
final class AgePlan {
  private final DeliverySchedule schedule;
  private final DeliveryRepository deliveries;
  private final PeerCalls peers;
  private final Frames frames;
  private final Clock clock;

  AgePlan(DeliverySchedule schedule, DeliveryRepository deliveries, PeerCalls peers, Frames frames, Clock clock) {
    this.schedule = Objects.requireNonNull(schedule);
    this.deliveries = Objects.requireNonNull(deliveries);
    this.peers = Objects.requireNonNull(peers);
    this.frames = Objects.requireNonNull(frames);
    this.clock = Objects.requireNonNull(clock);
  }

  /**
   * The row of {@code pair}, whose recipient is not served here; {@code sourceUrl} answers its status. A young pair
   * asks the source first too (issue 18, no work twice): one it already delivered (or gave up) is not sent again
   * from here; one it is still trying, or no answer, joins the schedule.
   */
  Future<DeliveryPlan> plan(SignedPair pair, String sourceUrl) {
    long acceptedAt = pair.outgoing().createdAtMs();
    OptionalLong ahead = schedule.firstAttemptAhead(acceptedAt, clock.millis());
    if (ahead.isPresent()) {
      int attempt = (int) ahead.getAsLong();
      DeliveryPlan scheduled = new DeliveryPlan(DeliveryState.ACCEPTED, acceptedAt, attempt - 1,
          schedule.dueAt(acceptedAt, attempt), 0);
      return finalAtSource(pair, sourceUrl)
          .map(done -> done.map(state -> new DeliveryPlan(state, acceptedAt, attempt - 1, null, 0)).orElse(scheduled));
    }
    return deliveries.latestRow(pair.from(), pair.baseKey()).compose(local -> {
      if (local.isPresent() && local.get().revision() >= pair.revision()) {
        // stored already: this plan is not written, and the stored row is never reopened
        return Future.succeededFuture(aged(local.get().state(), acceptedAt));
      }
      // new here, or a newer revision than the one stored (whose row may still be accepted): the source decides
      return peers.call(sourceUrl, Ops.GET_DM_DELIVERY_STATUS,
              frames.object().put("messageKey", pair.outgoing().messageKey()))
          .map(status -> aged(sourceState(status), acceptedAt));
    });
  }

  /**
   * What the sender's sibling at {@code sourceUrl} says of a pair it handed over (seed §6: servers share results
   * through the read-only {@code GetDmDeliveryStatus} only): its final state when it has one ({@code delivered}, or
   * {@code failed} from a v2 peer that says so); empty while it is still trying, when it does not know the pair, or
   * when it does not answer — then this server tries on its own, as seed §6 says.
   */
  private Future<Optional<DeliveryState>> finalAtSource(SignedPair pair, String sourceUrl) {
    if (sourceUrl == null) {
      return Future.succeededFuture(Optional.empty());
    }
    // composed, so a call refused before it is made is no answer too
    return Future.succeededFuture().compose(v -> peers.call(sourceUrl, Ops.GET_DM_DELIVERY_STATUS,
            frames.object().put("messageKey", pair.outgoing().messageKey())))
        .map(AgePlan::finalState)
        .otherwise(Optional.empty());
  }

  private static Optional<DeliveryState> finalState(JsonNode status) {
    if (!status.path("known").asBoolean(false)) {
      return Optional.empty();
    }
    if (status.path("delivered").asBoolean(false)) {
      return Optional.of(DeliveryState.DELIVERED);
    }
    // an old peer's delivered=false may mean "still trying": only a named final state is taken
    return status.path("state").isTextual() && DeliveryState.FAILED.wire().equals(status.path("state").asText())
        ? Optional.of(DeliveryState.FAILED) : Optional.empty();
  }

  /**
   * The source's answer to {@code GetDmDeliveryStatus}: its v2 {@code state} when it names one; from an old peer
   * (no {@code state}, or one this server does not know), {@code delivered} read as before: delivered or failed.
   */
  private static DeliveryState sourceState(JsonNode status) {
    JsonNode state = status.path("state");
    if (state.isTextual()) {
      for (DeliveryState known : DeliveryState.values()) {
        if (known.wire().equals(state.asText())) {
          return known;
        }
      }
    }
    return status.path("delivered").asBoolean(false) ? DeliveryState.DELIVERED : DeliveryState.FAILED;
  }

  /**
   * The row of a pair older than the last schedule point: final as the source says, or, while the source is still
   * trying, the last schedule point counted from now (PROTOCOL §8 v2). The source's own last attempt comes within
   * one schedule span from now, so ours, which asks the source first, comes no earlier and finds its final state.
   */
  private DeliveryPlan aged(DeliveryState state, long createdAtMs) {
    if (state == DeliveryState.ACCEPTED) {
      long now = clock.millis();
      return new DeliveryPlan(DeliveryState.ACCEPTED, now, schedule.attempts() - 1,
          schedule.dueAt(now, schedule.attempts()), 0);
    }
    return new DeliveryPlan(state, createdAtMs, schedule.attempts(), null, 0);
  }
}
