-- This deployment's Ed25519 server key (PROTOCOL §6a): one row, created on first start, shared by every node.
CREATE TABLE server_identity (
  id             smallint PRIMARY KEY CHECK (id = 1),
  server_login   text   NOT NULL,
  private_key    bytea  NOT NULL,
  public_key     bytea  NOT NULL,
  created_at_ms  bigint NOT NULL
);

-- Other servers: one URL per serverLogin (the first accepted card route naming it; a configured peer overrides it),
-- and the server key learnt from its /.well-known/shine-server (NULL until fetched).
CREATE TABLE known_server (
  server_login      text   PRIMARY KEY,
  url               text   NOT NULL,
  public_key        bytea,
  key_learnt_at_ms  bigint
);
INSERT INTO known_server (server_login, url)
  SELECT DISTINCT ON (server_login) server_login, url FROM user_access_servers_current
  ORDER BY server_login, login, position;

-- Peer connections go only to URLs named in current routes (or configured peers).
CREATE INDEX user_access_servers_by_url ON user_access_servers_current (url);
