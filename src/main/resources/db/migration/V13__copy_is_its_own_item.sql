-- A DM copy is its own sync item (issue 18). A copy (a pair, item type 1, or an incoming copy, type 2) no longer
-- writes a sync_outbox item: its key duplicated dm_message's, and the row with its two index entries, and the update
-- of it on every ACK, was a third of what a stored copy cost the database. What the outbox said of a copy is said by
-- its one sync_queue row instead:
--   * no row: some sibling has the copy's current revision (it ACKed it, or the copy came from one);
--   * a row for a sibling: that sibling is owed the copy (the row's revision and everything newer);
--   * a row for '': the copy is owed to no server yet (the owner has no other route, or this server is not one of
--     its routes); a route change gives it to the new sibling.
-- A new revision of a copy replaces its row (a new sync_id, so a sibling whose cursor has passed the old one is
-- offered it). Receipts, tombstones and settings keep their outbox items, one per revision, and their queue rows
-- (one per item and sibling, as in V9). Each queue row has one secondary index entry: a copy's in sync_queue_copy
-- (unique per copy: the arbiter of its upsert), any other row's in sync_queue_owner; both serve a route change and
-- the admin API's lag per user.
ALTER TABLE sync_queue ADD COLUMN revision bigint NOT NULL DEFAULT 0;

UPDATE sync_queue q SET revision = o.revision FROM sync_outbox o
  WHERE o.sync_id = q.sync_id AND q.item_type IN (1, 2);

-- unsynced copies owed to no sibling today
INSERT INTO sync_queue (sibling, sync_id, owner, item_type, item_key, revision, created_at_ms)
  SELECT '', o.sync_id, o.owner, o.item_type, o.item_key, o.revision, o.created_at_ms FROM sync_outbox o
  WHERE o.item_type IN (1, 2) AND NOT o.synced
    AND NOT EXISTS (SELECT 1 FROM sync_queue q WHERE q.sync_id = o.sync_id);

-- one row per copy: the newest (its page offers the copy's current revision anyway)
DELETE FROM sync_queue q USING sync_queue newer
  WHERE q.item_type IN (1, 2) AND newer.item_type IN (1, 2)
    AND newer.owner = q.owner AND newer.item_key = q.item_key AND newer.sync_id > q.sync_id;

DELETE FROM sync_outbox WHERE item_type IN (1, 2);

DROP INDEX sync_queue_owner;
CREATE UNIQUE INDEX sync_queue_copy ON sync_queue (owner, item_key) WHERE item_type IN (1, 2);
CREATE INDEX sync_queue_owner ON sync_queue (owner, sibling) WHERE item_type > 2;
