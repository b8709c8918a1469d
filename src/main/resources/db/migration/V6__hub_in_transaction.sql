-- Hub entries are written in the same statement as the change that causes them (PROTOCOL §10). Delivery ids become
-- a per-user sequence taken in that statement, so one user's entries commit in the order of their ids.
ALTER TABLE hub_subscriber ADD COLUMN last_delivery_id bigint NOT NULL DEFAULT 0;
UPDATE hub_subscriber s
  SET last_delivery_id = COALESCE((SELECT max(q.delivery_id) FROM hub_queue q WHERE q.login = s.login), 0);

ALTER TABLE hub_queue ALTER COLUMN delivery_id DROP DEFAULT;
DROP SEQUENCE hub_queue_delivery_id_seq;
ALTER TABLE hub_queue DROP CONSTRAINT hub_queue_pkey;
ALTER TABLE hub_queue ADD PRIMARY KEY (login, delivery_id);
