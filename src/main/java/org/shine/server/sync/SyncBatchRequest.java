package org.shine.server.sync;

import java.util.List;

/** One sync page request from {@code puller}: ACKs of its previous page, and the page size wanted (0: ACK only). */
public record SyncBatchRequest(String puller, List<Long> ackSyncIds, int limit) {
  public SyncBatchRequest {
    ackSyncIds = List.copyOf(ackSyncIds);
  }
}
