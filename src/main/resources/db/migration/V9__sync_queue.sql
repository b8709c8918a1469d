-- Per-sibling sync queue (PROTOCOL §8, issue 18): one row per outbox item still owed to one sibling server (the
-- owner's other current route while this server is one of them). The statement that writes an unsynced outbox item
-- writes its rows; the sibling's ACK (or its ACK of a forwarded pair) deletes its row. A page is one range of the
-- primary key, (sibling, settings, sync_id) > afterSyncId, so its cost follows the page, never the history.
-- sync_outbox.synced stays: "some sibling has it" (a sibling ACKed it, or it came from one); it decides what a new
-- sibling is owed when an owner's routes change.
CREATE TABLE sync_queue (
  sibling        text     NOT NULL,
  settings       boolean  GENERATED ALWAYS AS (item_type = 5) STORED,
  sync_id        bigint   NOT NULL,
  owner          text     NOT NULL,
  item_type      smallint NOT NULL,
  item_key       text     NOT NULL,
  created_at_ms  bigint   NOT NULL,
  PRIMARY KEY (sibling, settings, sync_id)
);
-- An owner's rows, when its routes change and for the admin API's lag per user.
CREATE INDEX sync_queue_owner ON sync_queue (owner, sibling);

-- What is unsynced today is owed to the owner's other current route, when this server (named by the migrator,
-- shine.server_login) is a route too. Without that name (empty: a fresh database of a test or tool) nothing is owed.
INSERT INTO sync_queue (sibling, sync_id, owner, item_type, item_key, created_at_ms)
  SELECT r.server_login, o.sync_id, o.owner, o.item_type, o.item_key, o.created_at_ms
  FROM sync_outbox o JOIN user_access_servers_current r ON r.login = o.owner
  WHERE NOT o.synced AND r.server_login <> current_setting('shine.server_login', true)
    AND EXISTS (SELECT 1 FROM user_access_servers_current m
                WHERE m.login = o.owner AND m.server_login = current_setting('shine.server_login', true))
  ON CONFLICT DO NOTHING;
