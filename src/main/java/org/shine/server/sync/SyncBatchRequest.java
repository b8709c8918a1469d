package org.shine.server.sync;

import java.util.List;

/**
 * One sync page request from {@code puller}: ACKs of its previous page, the page size wanted (0: ACK only), and the
 * syncId the page starts after (PROTOCOL §8 v3; 0 from the start).
 */
public record SyncBatchRequest(String puller, List<Long> ackSyncIds, int limit, long afterSyncId) {
  public SyncBatchRequest {
    ackSyncIds = List.copyOf(ackSyncIds);
  }
}
