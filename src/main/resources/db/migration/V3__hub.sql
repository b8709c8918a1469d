-- HTTP polling hub (PROTOCOL §10): challenges, hashed tokens in rotation families, and a durable per-user queue.
CREATE TABLE hub_challenge (
  challenge_b64  text   PRIMARY KEY,
  login          text   NOT NULL,
  expires_at_ms  bigint NOT NULL
);

CREATE TABLE hub_token (
  token_hash     bytea  PRIMARY KEY,
  login          text   NOT NULL,
  kind           text   NOT NULL CHECK (kind IN ('access', 'refresh')),
  family         text   NOT NULL,
  expires_at_ms  bigint NOT NULL,
  used           boolean NOT NULL DEFAULT false,
  revoked        boolean NOT NULL DEFAULT false,
  created_at_ms  bigint NOT NULL
);
CREATE INDEX hub_token_family ON hub_token (family);

-- Users whose events are queued: from the first token issued on.
CREATE TABLE hub_subscriber (
  login          text   PRIMARY KEY,
  since_ms       bigint NOT NULL
);

CREATE TABLE hub_queue (
  delivery_id    bigserial PRIMARY KEY,
  login          text    NOT NULL,
  event_key      text    NOT NULL,
  body           text    NOT NULL,
  created_at_ms  bigint  NOT NULL,
  visible_at_ms  bigint  NOT NULL DEFAULT 0,
  acked          boolean NOT NULL DEFAULT false,
  UNIQUE (login, event_key)
);
CREATE INDEX hub_queue_pending ON hub_queue (login, delivery_id) WHERE NOT acked;
