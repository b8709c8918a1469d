package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import java.util.List;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.directory.DirectoryService;
import org.shine.server.model.ConversationQuery;
import org.shine.server.model.HistoryQuery;

/**
 * Wires the request path of delivery (the node's attempts run in {@link DeliveryEngineVerticle}):
 * {@code dm.send-pair}, {@code dm.history}, {@code dm.conversations}, {@code dm.receive-incoming},
 * {@code dm.receive-outgoing}, {@code dm.status}, {@code dm.read-receipt}, {@code dm.delete}, {@code dm.apply-synced}.
 */
public final class DeliveryVerticle extends VerticleBase {
  private final DeliveryServices services;

  public DeliveryVerticle(DeliveryServices services) {
    this.services = Objects.requireNonNull(services);
  }

  /** One more entry than asked for tells whether older ones exist; the page also ends at the byte cap. */
  private Future<HistoryPage> history(HistoryQuery query) {
    HistoryQuery oneMore = new HistoryQuery(query.owner(), query.peer(), query.beforeCreatedAtMs(), query.limit() + 1);
    return services.messages().history(oneMore)
        .map(read -> HistoryPage.of(read, query.limit(), services.config().limits().maxResponseBytes()));
  }

  private Future<ConversationPage> conversations(ConversationQuery query) {
    ConversationQuery oneMore = new ConversationQuery(query.owner(), query.beforeLastAtMs(), query.limit() + 1);
    return services.messages().conversations(oneMore)
        .map(read -> ConversationPage.of(read, query.limit(), services.config().limits().maxResponseBytes()));
  }

  @Override
  public Future<?> start() {
    DeliveryModule module = new DeliveryModule(vertx, services);
    SendPairService send = new SendPairService(module.intake);
    SignalService signals = new SignalService(module);
    ReceiveService receive = new ReceiveService(services.config(), module.intake, services.deliveries(), signals,
        module.siblingHas);
    KeyRevocations revocations = new KeyRevocations(services.deliveries(), services.verifier(), module.events,
        services.clock());
    EventBus bus = vertx.eventBus();
    return Future.all(List.of(
        BusReplies.<DirectoryService.KeysRevoked, Integer>serve(bus, Addresses.KEYS_REVOKED,
            revoked -> revocations.failSignedBy(revoked.login(), revoked.keysB64())),
        BusReplies.serve(bus, Addresses.DM_SEND_PAIR, send::send),
        BusReplies.serve(bus, Addresses.DM_HISTORY, this::history),
        BusReplies.serve(bus, Addresses.DM_CONVERSATIONS, this::conversations),
        BusReplies.serve(bus, Addresses.DM_RECEIVE_INCOMING, receive::receiveIncoming),
        BusReplies.serve(bus, Addresses.DM_RECEIVE_OUTGOING, receive::receiveOutgoing),
        BusReplies.serve(bus, Addresses.DM_STATUS, receive::status),
        BusReplies.<SignalCommand, SignalService.SignalResult>serve(bus, Addresses.DM_READ_RECEIPT,
            c -> signals.sendReadReceipt(c.login(), c.blob(), c.sessionId())),
        BusReplies.<SignalCommand, SignalService.SignalResult>serve(bus, Addresses.DM_DELETE,
            c -> signals.deleteMessage(c.login(), c.blob())),
        BusReplies.<SyncedItem, Boolean>serve(bus, Addresses.DM_APPLY_SYNCED,
            item -> receive.applySynced(item).map(v -> Boolean.TRUE))));
  }
}
