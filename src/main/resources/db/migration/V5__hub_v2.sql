-- Hub v2 (PROTOCOL §10, §11): a refresh whose answer was lost can be retried within hub.refreshGraceS, and the
-- open challenges of one login are bounded by hub.challengesPerLogin.

-- One secret per deployment, written by the first node that needs it: a rotated pair is derived from the
-- presented refresh token under it, so a retry can be answered with the same pair while only hashes are stored.
CREATE TABLE hub_secret (
  id      smallint PRIMARY KEY CHECK (id = 1),
  secret  bytea    NOT NULL
);

-- Which refresh token a pair was rotated from (its hash), and when that one was used.
ALTER TABLE hub_token ADD COLUMN parent_hash bytea, ADD COLUMN parent_used_at_ms bigint;
CREATE INDEX hub_token_parent ON hub_token (parent_hash) WHERE parent_hash IS NOT NULL;

-- Issue order of challenges, so that a login's oldest can be dropped.
ALTER TABLE hub_challenge ADD COLUMN issued bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX hub_challenge_login ON hub_challenge (login, issued);
