-- Read receipts (kind 3) and tombstones (kind 4) as stored signed containers, per owner whose copy they affect:
-- the reader's and the original sender's for a receipt, the author's for a tombstone.
CREATE TABLE dm_signal (
  owner          text     NOT NULL,
  signal_key     text     NOT NULL,
  kind           smallint NOT NULL CHECK (kind IN (3, 4)),
  author         text     NOT NULL,
  ref            text     NOT NULL,
  created_at_ms  bigint   NOT NULL,
  blob           bytea    NOT NULL,
  stored_at_ms   bigint   NOT NULL,
  PRIMARY KEY (owner, signal_key)
);
CREATE INDEX dm_signal_ref ON dm_signal (owner, ref);
