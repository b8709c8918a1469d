package org.shine.server.delivery;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.metrics.SignatureOp;
import org.shine.server.model.DeliveryState;
import org.shine.server.protocol.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A card revoked keys of a user (PROTOCOL §4 v3): the user's accepted deliveries whose message (or receipt) one of
 * those keys signed become {@code failed}, recorded as an attempt's result would be (only while the row is still
 * accepted and unchanged), with {@code DmDeliveryStateChanged} (and {@code code: KEY_REVOKED}) to the sender's
 * sessions and hub. The check of which key signed runs on the worker pool.
 */
final class KeyRevocations {
  private static final Logger LOG = LoggerFactory.getLogger(KeyRevocations.class);
  /** Accepted rows of one sender looked at, at most (its quota of accepted messages is far below). */
  static final int MAX_ROWS = 10_000;
  private final DeliveryRepository deliveries;
  private final SignatureVerifier verifier;
  private final Events events;
  private final Clock clock;

  KeyRevocations(DeliveryRepository deliveries, SignatureVerifier verifier, Events events, Clock clock) {
    this.deliveries = Objects.requireNonNull(deliveries);
    this.verifier = Objects.requireNonNull(verifier);
    this.events = Objects.requireNonNull(events);
    this.clock = Objects.requireNonNull(clock);
  }

  /** Fails what {@code login}'s revoked {@code keysB64} signed and is still accepted; answers how many rows. */
  Future<Integer> failSignedBy(String login, List<String> keysB64) {
    List<Ed25519Signer.PublicKey> revoked = keysB64.stream()
        .map(key -> Ed25519Signer.publicKey(Base64.getDecoder().decode(key))).toList();
    return deliveries.acceptedOf(login, MAX_ROWS)
        .compose(rows -> rows.isEmpty() ? Future.succeededFuture(List.<DeliveryRepository.AcceptedRow>of())
            : verifier.check(SignatureOp.MESSAGE, () -> signedByAny(rows, revoked)))
        .compose(signed -> {
          if (signed.isEmpty()) {
            return Future.succeededFuture(0);
          }
          List<DeliveryRepository.AttemptResult> results = new ArrayList<>(signed.size());
          for (DeliveryRepository.AcceptedRow row : signed) {
            results.add(new DeliveryRepository.AttemptResult(row.key(), row.rowVersion(), DeliveryState.FAILED,
                row.attempts(), null, events.stateChangedEntry(login, row.key().baseKey(), DeliveryState.FAILED,
                ErrorCode.KEY_REVOKED)));
          }
          return deliveries.finishAll(results, clock.millis()).map(recorded -> {
            recorded.forEach(key -> events.pushStateChanged(login, key.baseKey(), DeliveryState.FAILED,
                ErrorCode.KEY_REVOKED));
            LOG.info("deliveries signed by a revoked key failed [login: {}, rows: {}]", login, recorded.size());
            return recorded.size();
          });
        });
  }

  private static List<DeliveryRepository.AcceptedRow> signedByAny(List<DeliveryRepository.AcceptedRow> rows,
      List<Ed25519Signer.PublicKey> keys) {
    List<DeliveryRepository.AcceptedRow> signed = new ArrayList<>();
    for (DeliveryRepository.AcceptedRow row : rows) {
      DmContainer container;
      try {
        container = DmCodec.parse(row.signedBlob());
      } catch (DmFormatException e) {
        continue;
      }
      if (keys.stream().anyMatch(container::verifySignature)) {
        signed.add(row);
      }
    }
    return signed;
  }
}
