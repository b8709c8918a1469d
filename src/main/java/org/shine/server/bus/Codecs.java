package org.shine.server.bus;

import io.vertx.core.Vertx;
import java.util.List;
import org.shine.server.delivery.AttemptRequest;
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
import org.shine.server.hub.HubEvent;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.HistoryQuery;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;
import org.shine.server.peer.PeerRequest;
import org.shine.server.peer.PeerResponse;
import org.shine.server.peer.ServerLoginCheck;
import org.shine.server.settings.SetSettingCommand;
import org.shine.server.settings.UserSettings;
import org.shine.server.sync.DmSyncPage;
import org.shine.server.sync.SettingsSyncPage;
import org.shine.server.sync.SyncBatchRequest;

/** The record types that travel on the local bus, each with the {@link LocalRecordCodec}. */
public final class Codecs {
  private static final List<Class<?>> LOCAL_TYPES = List.of(
      UserCard.class,
      DirectoryService.PublishResult.class,
      StoredUser.class,
      SendPairCommand.class,
      AttemptRequest.class,
      ForwardRequest.class,
      DeliveryState.class,
      SendPairResult.class,
      HistoryQuery.class,
      HistoryPage.class,
      ReceiveIncomingCommand.class,
      ReceiveOutgoingCommand.class,
      DeliveryStatus.class,
      SyncedItem.class,
      HubEvent.class,
      SignalCommand.class,
      SignalService.SignalResult.class,
      SyncBatchRequest.class,
      DmSyncPage.class,
      SettingsSyncPage.class,
      SetSettingCommand.class,
      UserSettings.class,
      PeerRequest.class,
      PeerResponse.class,
      ServerLoginCheck.class);

  private Codecs() {
  }

  public static void register(Vertx vertx) {
    LocalRecordCodec.registerAll(vertx, LOCAL_TYPES);
  }
}
