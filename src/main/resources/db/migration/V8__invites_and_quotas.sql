-- Invite codes of directory.registration "invite" (PROTOCOL §13): made by the admin API, one use each, kept only as
-- the SHA-256 of the code. A row is pruned a while after it expires.
CREATE TABLE invite (
  code_hash      bytea  PRIMARY KEY,
  created_at_ms  bigint NOT NULL,
  expires_at_ms  bigint NOT NULL,
  used_at_ms     bigint,
  used_by        text
);
CREATE INDEX invite_expires ON invite (expires_at_ms);
