package org.shine.server.sync;

import io.vertx.core.Future;
import java.util.Objects;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.SyncRepository.Sibling;

/**
 * Whether an owner's current routes list both this server and a sibling (PROTOCOL §6a): only such an owner's items
 * are stored from that sibling, or quarantined; any other owner's item is left unACKed (its card may not have
 * arrived yet).
 */
final class SharedOwners {
  private final String self;
  private final DirectoryRepository directory;

  SharedOwners(String self, DirectoryRepository directory) {
    this.self = Objects.requireNonNull(self);
    this.directory = Objects.requireNonNull(directory);
  }

  Future<Boolean> shared(String owner, Sibling sibling) {
    return directory.find(owner).map(user -> user.isPresent() && user.get().servedBy(self)
        && user.get().servedBy(sibling.serverLogin()));
  }
}
