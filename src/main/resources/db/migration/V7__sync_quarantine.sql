-- Items pulled from a sibling that this server ACKed but could not store (PROTOCOL §8 v3): kept as received, with
-- why, so an operator can read them and the server can try them again when the owner's or the author's card
-- changes. At most 1,000 per owner (the oldest of that owner is dropped beyond). One row per item of a source: an
-- item that comes again (its ACK was lost) updates its row.
CREATE TABLE sync_quarantine (
  id              bigserial PRIMARY KEY,
  owner           text    NOT NULL,
  author          text,
  source_server   text    NOT NULL,
  source_url      text    NOT NULL,
  op              text    NOT NULL,
  item_type       text    NOT NULL,
  source_sync_id  bigint  NOT NULL,
  reason          text    NOT NULL,
  detail          text    NOT NULL,
  item_json       text    NOT NULL,
  truncated       boolean NOT NULL DEFAULT false,
  received_at_ms  bigint  NOT NULL,
  checked_at_ms   bigint  NOT NULL,
  UNIQUE (source_server, op, source_sync_id)
);
CREATE INDEX sync_quarantine_owner ON sync_quarantine (owner, id);
CREATE INDEX sync_quarantine_author ON sync_quarantine (author, id) WHERE author IS NOT NULL;
