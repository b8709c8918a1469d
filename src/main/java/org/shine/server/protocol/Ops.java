package org.shine.server.protocol;

/** Operation and event names of the envelope's {@code op} field. */
public final class Ops {
  public static final String AUTH_CHALLENGE = "AuthChallenge";
  public static final String AUTH_LOGIN = "AuthLogin";
  public static final String SERVER_AUTH_CHALLENGE = "ServerAuthChallenge";
  public static final String SERVER_AUTH_LOGIN = "ServerAuthLogin";
  public static final String PUBLISH_USER_CARD = "PublishUserCard";
  public static final String GET_USER_CARD = "GetUserCard";
  public static final String SEND_MESSAGE_PAIR = "SendMessagePair";
  public static final String GET_DIRECT_MESSAGES = "GetDirectMessages";
  public static final String RECEIVE_INCOMING_MESSAGE = "ReceiveIncomingMessage";
  public static final String RECEIVE_OUTCOMING_MESSAGE = "ReceiveOutcomingMessage";
  public static final String GET_DM_DELIVERY_STATUS = "GetDmDeliveryStatus";
  public static final String SEND_READ_RECEIPT = "SendReadReceipt";
  public static final String DELETE_MESSAGE = "DeleteMessage";
  public static final String DM_SYNC_BATCH = "DmSyncBatch";
  public static final String USER_SETTINGS_SYNC_BATCH = "UserSettingsSyncBatch";
  public static final String MARK_ALL_USER_SETTINGS_UNSYNCED = "MarkAllUserSettingsUnsynced";
  public static final String GET_USER_SETTINGS = "GetUserSettings";
  public static final String SET_USER_SETTING = "SetUserSetting";
  public static final String GET_CONVERSATIONS = "GetConversations";

  public static final String EVENT_INCOMING_DIRECT_MESSAGE = "IncomingDirectMessage";
  public static final String EVENT_DELIVERY_STATE_CHANGED = "DmDeliveryStateChanged";
  public static final String EVENT_READ_RECEIPT = "DmReadReceipt";
  public static final String EVENT_OUTGOING_DIRECT_MESSAGE = "OutgoingDirectMessage";
  public static final String EVENT_READ_BY_ME = "DmReadByMe";

  private Ops() {
  }
}
