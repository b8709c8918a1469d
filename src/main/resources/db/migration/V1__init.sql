-- Directory: one signed card per user and its current access servers (PROTOCOL §4).
CREATE TABLE user_card (
  login          text PRIMARY KEY,
  public_key     bytea  NOT NULL,
  version        bigint NOT NULL,
  card_json      text   NOT NULL,
  updated_at_ms  bigint NOT NULL
);

CREATE TABLE user_access_servers_current (
  login         text     NOT NULL REFERENCES user_card (login) ON DELETE CASCADE,
  position      smallint NOT NULL CHECK (position IN (0, 1)),
  server_login  text     NOT NULL,
  url           text     NOT NULL,
  PRIMARY KEY (login, position)
);
CREATE INDEX user_access_servers_by_server ON user_access_servers_current (server_login, login);

-- One row per logical message per owner: the copy its owner sees (incoming for a received message, outgoing for
-- a sent one) and, for a sent message, the recipient's incoming copy that delivery and sync hand on.
CREATE TABLE dm_message (
  owner          text     NOT NULL,
  base_key       text     NOT NULL,
  direction      smallint NOT NULL CHECK (direction IN (1, 2)),
  peer           text     NOT NULL,
  created_at_ms  bigint   NOT NULL,
  revision       bigint   NOT NULL,
  blob           bytea    NOT NULL,
  pair_blob      bytea,
  read_at_ms     bigint,
  deleted        boolean  NOT NULL DEFAULT false,
  stored_at_ms   bigint   NOT NULL,
  PRIMARY KEY (owner, base_key),
  CHECK ((direction = 2) = (pair_blob IS NOT NULL))
);
CREATE INDEX dm_message_history ON dm_message (owner, peer, created_at_ms DESC, base_key DESC);

-- Delivery state per (outgoing message, revision) on the sender's server (PROTOCOL §7, seed §3-§5).
CREATE TABLE dm_delivery (
  base_key            text   NOT NULL,
  revision            bigint NOT NULL,
  owner               text   NOT NULL,
  state               text   NOT NULL CHECK (state IN ('accepted', 'delivered', 'failed')),
  accepted_at_ms      bigint NOT NULL,
  attempts            int    NOT NULL DEFAULT 0,
  next_attempt_at_ms  bigint,
  lease_until_ms      bigint,
  row_version         bigint NOT NULL DEFAULT 0,
  updated_at_ms       bigint NOT NULL,
  PRIMARY KEY (base_key, revision),
  CHECK ((state = 'accepted') = (next_attempt_at_ms IS NOT NULL))
);
-- The retry worker reads only due rows through this index; terminal rows are never in it.
CREATE INDEX dm_delivery_due ON dm_delivery (next_attempt_at_ms) WHERE state = 'accepted';

-- Per-owner sync outbox (PROTOCOL §8): one item per written revision, flipped to synced on the sibling's ACK.
CREATE TABLE sync_outbox (
  sync_id        bigserial PRIMARY KEY,
  owner          text     NOT NULL,
  item_type      smallint NOT NULL,
  item_key       text     NOT NULL,
  revision       bigint   NOT NULL,
  synced         boolean  NOT NULL DEFAULT false,
  created_at_ms  bigint   NOT NULL,
  UNIQUE (owner, item_type, item_key, revision)
);
CREATE INDEX sync_outbox_unsynced ON sync_outbox (owner, sync_id) WHERE NOT synced;

CREATE TABLE user_setting (
  owner          text   NOT NULL,
  key            text   NOT NULL,
  value_json     text   NOT NULL,
  updated_at_ms  bigint NOT NULL,
  PRIMARY KEY (owner, key)
);
