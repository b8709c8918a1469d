package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.bus.LocalRecordCodec;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.hub.HubSubscribers;
import org.shine.server.model.ConversationQuery;
import org.shine.server.model.HistoryQuery;

/**
 * Wires the request path of delivery (the node's attempts run in {@link DeliveryEngineVerticle}): {@code dm.send-pair}, {@code dm.history}, {@code dm.conversations},
 * {@code dm.receive-incoming}, {@code dm.receive-outgoing}, {@code dm.status}, {@code dm.apply-synced}.
 */
public final class DeliveryVerticle extends VerticleBase {
  private final AppConfig config;
  private final Clock clock;
  private final SignatureVerifier verifier;
  private final AttemptSlots slots;
  private final HubSubscribers subscribers;

  public DeliveryVerticle(AppConfig config, Clock clock, SignatureVerifier verifier, AttemptSlots slots,
      HubSubscribers subscribers) {
    this.config = Objects.requireNonNull(config);
    this.clock = Objects.requireNonNull(clock);
    this.verifier = Objects.requireNonNull(verifier);
    this.slots = Objects.requireNonNull(slots);
    this.subscribers = Objects.requireNonNull(subscribers);
  }

  /** One more entry than asked for tells whether older ones exist; the page also ends at the byte cap. */
  private Future<HistoryPage> history(DeliveryModule module, HistoryQuery query) {
    HistoryQuery oneMore = new HistoryQuery(query.owner(), query.peer(), query.beforeCreatedAtMs(), query.limit() + 1);
    return module.messages.history(oneMore)
        .map(read -> HistoryPage.of(read, query.limit(), config.limits().maxResponseBytes()));
  }

  private Future<ConversationPage> conversations(DeliveryModule module, ConversationQuery query) {
    ConversationQuery oneMore = new ConversationQuery(query.owner(), query.beforeLastAtMs(), query.limit() + 1);
    return module.messages.conversations(oneMore)
        .map(read -> ConversationPage.of(read, query.limit(), config.limits().maxResponseBytes()));
  }

  @Override
  public Future<?> start() {
    LocalRecordCodec.register(vertx, SendPairCommand.class, SendPairResult.class, HistoryQuery.class,
        HistoryPage.class, ReceiveIncomingCommand.class, ReceiveOutgoingCommand.class, DeliveryStatus.class,
        SignalCommand.class, SignalService.SignalResult.class, SyncedItem.class, ConversationQuery.class,
        ConversationPage.class);
    DeliveryModule module = new DeliveryModule(vertx, config, Database.sharedPool(vertx, config.db()), clock,
        verifier, slots, subscribers);
    SendPairService send = new SendPairService(module.intake);
    SignalService signals = new SignalService(config, module.intake, module.signals, module.engine,
        module.deliveries, clock, module.skew);
    ReceiveService receive = new ReceiveService(config, module.intake, module.deliveries, signals);
    EventBus bus = vertx.eventBus();
    return Future.all(List.of(
        module.start(),
        bus.<SendPairCommand>localConsumer(Addresses.DM_SEND_PAIR,
            m -> BusReplies.replyWith(m, send.send(m.body()))).completion(),
        bus.<HistoryQuery>localConsumer(Addresses.DM_HISTORY,
            m -> BusReplies.replyWith(m, history(module, m.body()))).completion(),
        bus.<ConversationQuery>localConsumer(Addresses.DM_CONVERSATIONS,
            m -> BusReplies.replyWith(m, conversations(module, m.body()))).completion(),
        bus.<ReceiveIncomingCommand>localConsumer(Addresses.DM_RECEIVE_INCOMING,
            m -> BusReplies.replyWith(m, receive.receiveIncoming(m.body()))).completion(),
        bus.<ReceiveOutgoingCommand>localConsumer(Addresses.DM_RECEIVE_OUTGOING,
            m -> BusReplies.replyWith(m, receive.receiveOutgoing(m.body()))).completion(),
        bus.<String>localConsumer(Addresses.DM_STATUS,
            m -> BusReplies.replyWith(m, receive.status(m.body()))).completion(),
        bus.<SignalCommand>localConsumer(Addresses.DM_READ_RECEIPT,
            m -> BusReplies.replyWith(m, signals.sendReadReceipt(m.body().login(), m.body().blob(),
                m.body().sessionId()))).completion(),
        bus.<SignalCommand>localConsumer(Addresses.DM_DELETE,
            m -> BusReplies.replyWith(m, signals.deleteMessage(m.body().login(), m.body().blob()))).completion(),
        bus.<SyncedItem>localConsumer(Addresses.DM_APPLY_SYNCED,
            m -> BusReplies.replyWith(m, receive.applySynced(m.body()).map(v -> Boolean.TRUE))).completion()));
  }
}
