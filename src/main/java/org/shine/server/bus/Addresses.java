package org.shine.server.bus;


/** Every event-bus address of the server, in one place. */
public final class Addresses {
  /** Directory: publish a user card ({@code PublishCardCommand} → {@code CardResult}). */
  public static final String DIRECTORY_PUBLISH = "directory.publish";
  /** Directory: read a user card ({@code String login} → {@code CardResult}). */
  public static final String DIRECTORY_GET = "directory.get";
  /**
   * Directory: the cards accepted for a login after a place in its order of cards ({@code ChainQuery} →
   * {@code CardChain}; GetUserCard with {@code since…}, PROTOCOL §4 v3).
   */
  public static final String DIRECTORY_CHAIN = "directory.chain";
  /**
   * Sent on the node that accepted a card revoking keys ({@code KeysRevoked}): the accepted deliveries those keys
   * signed fail ({@code KEY_REVOKED}) and their hub token families end (PROTOCOL §4 v3).
   */
  public static final String KEYS_REVOKED = "directory.keys-revoked";
  /**
   * Header of a message published on {@link #userEvents} with an empty body when a card revoked keys of that user:
   * the comma-separated keys; a session logged in with one of them is closed (PROTOCOL §4 v3).
   */
  public static final String REVOKED_KEYS_HEADER = "shine-revoked-keys";
  /** Sent (to one directory instance of the node) with a peer URL just connected: re-announce served cards. */
  public static final String DIRECTORY_REANNOUNCE = "directory.reannounce";
  /** Published (cluster-wide) with the login whose card changed, so caches drop it. */
  public static final String DIRECTORY_CHANGED = "directory.changed";
  /** Delivery: accept a signed pair from an authenticated client ({@code SendPairCommand} → {@code SendPairResult}). */
  public static final String DM_SEND_PAIR = "dm.send-pair";
  /** Delivery: a page of one conversation ({@code HistoryQuery} → {@code HistoryPage}). */
  public static final String DM_HISTORY = "dm.history";
  /** Server op ReceiveIncomingMessage ({@code ReceiveIncomingCommand} → messageKey). */
  public static final String DM_RECEIVE_INCOMING = "dm.receive-incoming";
  /** Server op ReceiveOutcomingMessage ({@code ReceiveOutgoingCommand} → {@code SendPairResult}). */
  public static final String DM_RECEIVE_OUTGOING = "dm.receive-outgoing";
  /** Server op GetDmDeliveryStatus (messageKey → {@code DeliveryStatus}). */
  public static final String DM_STATUS = "dm.status";
  /** SendReadReceipt from a session ({@code SignalCommand} → {@code SignalResult}). */
  public static final String DM_READ_RECEIPT = "dm.read-receipt";
  /** GetConversations: the chat list of a user ({@code ConversationQuery} → {@code ConversationPage}). */
  public static final String DM_CONVERSATIONS = "dm.conversations";
  /**
   * Header of a frame published on {@link #userEvents}: the id of the one session that must not get it, because its
   * own response already told it (PROTOCOL §5, several devices).
   */
  public static final String EXCEPT_SESSION_HEADER = "shine-except-session";
  /** DeleteMessage from a session ({@code SignalCommand} → {@code SignalResult}). */
  public static final String DM_DELETE = "dm.delete";
  /**
   * The node's one delivery engine: run one attempt ({@code AttemptRequest} → the {@code DeliveryState} recorded);
   * the sender holds a place of the node's attempt slots, which the engine gives back.
   */
  public static final String DELIVERY_ATTEMPT = "delivery.attempt";
  /** The node's delivery engine: forward a pair to its sender's sibling ({@code ForwardRequest}, local send). */
  public static final String DELIVERY_FORWARD = "delivery.forward";
  /** Stores one DM item pulled from a sibling ({@code SyncedItem} → Boolean). */
  public static final String DM_APPLY_SYNCED = "dm.apply-synced";
  /** Sync, source side: one DmSyncBatch page ({@code SyncBatchRequest} → {@code DmSyncPage}). */
  public static final String SYNC_DM_BATCH = "sync.dm-batch";
  /** Sync, source side: one UserSettingsSyncBatch page ({@code SyncBatchRequest} → {@code SettingsSyncPage}). */
  public static final String SYNC_SETTINGS_BATCH = "sync.settings-batch";
  /** MarkAllUserSettingsUnsynced for a login (String → Integer items reset). */
  public static final String SYNC_MARK_UNSYNCED = "sync.mark-unsynced";
  /** Settings: a page of a user's ({@code SettingsQuery} → {@code SettingsPage}). */
  public static final String SETTINGS_GET = "settings.get";
  /** Settings: write one ({@code SetSettingCommand} → Long updatedAtMs). */
  public static final String SETTINGS_SET = "settings.set";
  /** Peers: one request to another server ({@code PeerRequest} → {@code PeerResponse}). */
  public static final String PEER_REQUEST = "peer.request";
  /** Peers: check another server's ServerAuthLogin against its key ({@code ServerLoginCheck} → Boolean). */
  public static final String PEER_VERIFY_LOGIN = "peer.verify-login";
  /**
   * Published on this node only, with a peer URL, each time a connection to it is ready for sync: the peer accepted
   * this server's login, or it is a v1 peer without server sessions.
   */
  public static final String PEER_CONNECTED = "peer.connected";
  /**
   * Published on this node only, with a peer URL, when a connection to it opens after the peer was down
   * (PROTOCOL §7.6): the accepted rows routed to it get an extra attempt.
   */
  public static final String PEER_UP = "peer.up";
  /**
   * Published to every node of the deployment (the cluster's bus), with a serverLogin, by a node that authenticated a
   * server session of that server (PROTOCOL §7.6: a peer heard from is up): each node dials it at once where it has it
   * down. Header {@code node} names the publishing node, which has done so already.
   */
  public static final String PEER_HEARD = "peer.heard";
  /** This node's peer connections as the admin API shows them (any body; local request, {@code PeerStatus.All}). */
  public static final String PEER_STATUS = "peer.status";
  /**
   * The admin API's "retry peer now" (a serverLogin's URL, local request): the accepted rows routed to it get the
   * extra attempt of {@link #PEER_UP} now; replies with the number of rows claimed.
   */
  public static final String RETRY_PEER_NOW = "retry.peer-now";
  /** Hub: published (cluster-wide) with a login when it starts polling, so every node queues its events. */
  public static final String HUB_SUBSCRIBED = "hub.subscribed";
  private static final String HUB_WAKE_PREFIX = "hub.wake.";
  private static final String USER_EVENTS_PREFIX = "user.events.";

  private Addresses() {
  }

  /** Published (cluster-wide) when a user's hub queue gets an event, to wake that user's waiting polls. */
  public static String hubWake(String login) {
    return HUB_WAKE_PREFIX + login;
  }

  /** Where events for one user's live sessions are published (each carries a complete event frame as text). */
  public static String userEvents(String login) {
    return USER_EVENTS_PREFIX + login;
  }
}
