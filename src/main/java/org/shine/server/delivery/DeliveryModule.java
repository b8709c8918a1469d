package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.shine.server.config.AppConfig;
import org.shine.server.db.MicroBatcher;
import org.shine.server.db.SyncRepository.HeldItem;
import org.shine.server.model.DeliverySchedule;
import org.shine.server.protocol.Frames;
import org.shine.server.util.Json;

/**
 * The part of delivery that is built once per verticle instance, over the node's shared {@link DeliveryServices}: the
 * stores whose micro-batchers are confined to one event loop ({@link CopyStore}, {@link SignalStore}), the events, the
 * clock-skew check and the intake. The request path of each delivery instance and the node's one
 * {@link DeliveryEngine} are both made from one.
 */
final class DeliveryModule {
  private static final int MARK_BATCH = 256;
  private static final int CONCURRENT_MARKS = 2;
  final DeliveryServices services;
  final Frames frames;
  final Events events;
  final ClockSkew skew;
  final CopyStore copies;
  final SignalStore signals;
  final PairIntake intake;
  final DeliverySchedule schedule;
  /**
   * Outbox items the owner's sibling holds (a forward it acknowledged, a copy pulled from it that is stored here
   * already): marked synced and taken off its queue, batched; a mark refused (batcher full) or lost only means the
   * item is synced once more.
   */
  final MicroBatcher<HeldItem, Boolean> siblingHas;
  /**
   * Pairs whose forward failed: their sync queue rows are offered at once (batched); a release refused or lost only
   * means sync offers them when their hold ends ({@code sync.forwardHoldMs}).
   */
  final MicroBatcher<HeldItem, Boolean> releaseHeld;

  DeliveryModule(Vertx vertx, DeliveryServices services) {
    this.services = Objects.requireNonNull(services);
    this.frames = new Frames(Json.MAPPER);
    this.events = new Events(vertx, frames, services.subscribers());
    this.skew = new ClockSkew(services.clock(), services.config().delivery().maxClockSkewMs());
    AppConfig.Delivery delivery = services.config().delivery();
    SignerCheck signers = new SignerCheck(services.clock(), delivery.lastPointMs() + delivery.maxClockSkewMs());
    this.copies = new CopyStore(services.messages(), services.clock(), services.verifier(), signers,
        delivery.queueCapacity());
    this.signals = new SignalStore(services.signals(), events, services.clock(), services.verifier(), signers);
    this.schedule = new DeliverySchedule(delivery.scheduleMs(), delivery.askSiblingFromAttempt());
    this.intake = new PairIntake(services.config(), services.directory()::require, copies, services.engine(),
        services.clock(), events, skew,
        new AgePlan(schedule, services.deliveries(), services.peers(), frames, services.clock()));
    this.siblingHas = bookkeeping(services.outbox()::markSiblingHas, services.slots().capacity());
    this.releaseHeld = bookkeeping(services.outbox()::releaseHeld, services.slots().capacity());
  }

  /** A batcher of sync bookkeeping over {@code statement} (one statement a batch; each item answered true). */
  private static MicroBatcher<HeldItem, Boolean> bookkeeping(Function<List<HeldItem>, Future<Integer>> statement,
      int queueCapacity) {
    return new MicroBatcher<>(batch -> statement.apply(batch).map(n -> batch.stream().map(item -> Boolean.TRUE)
        .toList()), item -> item, MARK_BATCH, CONCURRENT_MARKS, queueCapacity);
  }
}
