package org.shine.server.sync;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;
import org.shine.server.db.SyncRepository.Sibling;

/**
 * One item of a sibling's sync page as received: the sibling, the op of its page, its syncId and owner (both read
 * and valid), its type ({@code pair}, {@code incoming}, {@code receipt}, {@code tombstone} or {@code setting}) and
 * its JSON.
 */
record PulledItem(Sibling source, String op, long syncId, String owner, String type, JsonNode json) {
  PulledItem {
    Objects.requireNonNull(source);
    Objects.requireNonNull(op);
    Objects.requireNonNull(owner);
    Objects.requireNonNull(type);
    Objects.requireNonNull(json);
  }
}
