package org.shine.server.peer;

import java.util.List;

/**
 * One connection of this node to another server, as the admin API shows it (PROTOCOL §12): whether it is open and
 * logged in, whether the server is down, the last error since the last success, the reconnect backoff (0 while
 * open) and the calls in flight and waiting for a place.
 */
public record PeerStatus(String serverLogin, String url, boolean configured, boolean connected,
    boolean authenticated, boolean down, String lastError, long backoffMs, int inFlight, int waiting) {

  /** Every connection of a node, for the local bus. */
  public record All(List<PeerStatus> peers) {
    public All {
      peers = List.copyOf(peers);
    }
  }
}
