-- v3 cards (PROTOCOL §4 v3): several device keys, an epoch, and the history of keys a user retired or revoked.
-- user_card.public_key stays the first device key (the one key of a v1 card); device_keys lists every current device
-- key (base64, comma-separated, card order), so that a login reads its keys without parsing the card. NULL: a card
-- stored before this script, whose one key is public_key.
ALTER TABLE user_card ADD COLUMN epoch bigint NOT NULL DEFAULT 0;
ALTER TABLE user_card ADD COLUMN device_keys text;

-- Every retirement and revocation this server has seen, whatever later cards list: a retired key signs only what
-- its window allows, a revoked key nothing new (PROTOCOL §4 v3).
CREATE TABLE user_key_history (
  login          text    NOT NULL,
  public_key_b64 text    NOT NULL,
  retired_at_ms  bigint,
  revoked        boolean NOT NULL DEFAULT false,
  recorded_at_ms bigint  NOT NULL,
  PRIMARY KEY (login, public_key_b64)
);

-- Every card accepted for a login, so that GetUserCard {sinceEpoch, sinceVersion} serves the chain a server missed.
CREATE TABLE user_card_history (
  login          text   NOT NULL,
  epoch          bigint NOT NULL,
  version        bigint NOT NULL,
  card_json      text   NOT NULL,
  accepted_at_ms bigint NOT NULL,
  PRIMARY KEY (login, epoch, version)
);
INSERT INTO user_card_history (login, epoch, version, card_json, accepted_at_ms)
  SELECT login, 0, version, card_json, updated_at_ms FROM user_card;

-- The device key that started each hub token family (PROTOCOL §4 v3: revoking a key ends its families). A row goes
-- when the last token of its family has expired.
CREATE TABLE hub_token_family_key (
  family     text PRIMARY KEY,
  login      text NOT NULL,
  device_key text NOT NULL
);
CREATE INDEX hub_token_family_key_by_key ON hub_token_family_key (login, device_key);
