package org.shine.server.node;

import io.vertx.core.Vertx;
import java.util.List;
import org.shine.server.bus.LocalRecordCodec;
import org.shine.server.delivery.AttemptRequest;
import org.shine.server.delivery.ConversationPage;
import org.shine.server.delivery.DeliveryStatus;
import org.shine.server.delivery.ForwardRequest;
import org.shine.server.delivery.HistoryPage;
import org.shine.server.delivery.ReceiveIncomingCommand;
import org.shine.server.delivery.ReceiveOutgoingCommand;
import org.shine.server.delivery.SendPairCommand;
import org.shine.server.delivery.SendPairResult;
import org.shine.server.delivery.SignalCommand;
import org.shine.server.delivery.SignalService;
import org.shine.server.delivery.SyncedItem;
import org.shine.server.directory.DirectoryService;
import org.shine.server.directory.PublishCardCommand;
import org.shine.server.model.ConversationQuery;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.HistoryQuery;
import org.shine.server.model.StoredUser;
import org.shine.server.peer.PeerRequest;
import org.shine.server.peer.PeerResponse;
import org.shine.server.peer.PeerStatus;
import org.shine.server.peer.ServerLoginCheck;
import org.shine.server.settings.SetSettingCommand;
import org.shine.server.settings.SettingsPage;
import org.shine.server.settings.SettingsQuery;
import org.shine.server.sync.DmSyncPage;
import org.shine.server.sync.SettingsSyncPage;
import org.shine.server.sync.SyncBatchRequest;

/** The one list of records that travel on a node's local bus, each with the {@link LocalRecordCodec}. */
public final class LocalCodecs {
  static final List<Class<?>> RECORDS = List.of(
      // directory
      PublishCardCommand.class, DirectoryService.PublishResult.class, StoredUser.class,
      DirectoryService.ChainQuery.class, DirectoryService.CardChain.class, DirectoryService.KeysRevoked.class,
      // delivery: the request path
      SendPairCommand.class, SendPairResult.class, HistoryQuery.class, HistoryPage.class, ConversationQuery.class,
      ConversationPage.class, ReceiveIncomingCommand.class, ReceiveOutgoingCommand.class, DeliveryStatus.class,
      SignalCommand.class, SignalService.SignalResult.class, SyncedItem.class,
      // delivery: the engine
      AttemptRequest.class, ForwardRequest.class, DeliveryState.class,
      // settings
      SetSettingCommand.class, SettingsQuery.class, SettingsPage.class,
      // sync
      SyncBatchRequest.class, DmSyncPage.class, SettingsSyncPage.class,
      // peers
      PeerRequest.class, PeerResponse.class, ServerLoginCheck.class, PeerStatus.All.class);

  private LocalCodecs() {
  }

  /** Registers every record of the list on {@code vertx}, once per Vert.x instance. */
  public static void register(Vertx vertx) {
    LocalRecordCodec.registerOnce(vertx, RECORDS);
  }
}
