-- A sender's pair waits for its forward (issue 18, no work twice): seed §4 step 7 hands a new pair to the sender's
-- sibling right after the first attempt, so sync offering the same pair at once would carry it twice. Its queue row
-- is not offered before visible_at_ms: the forward's ACK deletes the row, a failed forward makes it visible at once,
-- and a crash between the two leaves it visible at the hold's end (sync.forwardHoldMs). 0: visible now.
ALTER TABLE sync_queue ADD COLUMN visible_at_ms bigint NOT NULL DEFAULT 0;
