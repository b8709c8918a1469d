-- Fewer index entries per stored copy (issue 18). Since the per-sibling queue (V9) pages the sync, the partial index
-- of unsynced outbox items serves only a route change (FOLLOW_ROUTES: an owner's unsynced items), which the unique
-- (owner, item_type, item_key, revision) index answers as well, at the cost of reading that owner's synced items too
-- (as MarkAllUserSettingsUnsynced always has). Without it, each item written costs one index entry less and the
-- sibling's ACK, which flips synced, no longer touches an index: with room left on the page (fillfactor) it is a
-- heap-only (HOT) update.
DROP INDEX IF EXISTS sync_outbox_unsynced;
ALTER TABLE sync_outbox SET (fillfactor = 80);
