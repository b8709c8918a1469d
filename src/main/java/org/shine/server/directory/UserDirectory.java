package org.shine.server.directory;

import io.vertx.core.Future;
import java.util.Optional;
import org.shine.server.model.StoredUser;
import org.shine.server.protocol.ProtocolErrors;

/** Reads users (key and current routes) by login: the node's {@link DirectoryCache}, or a test's stand-in. */
public interface UserDirectory {

  /** The user, or empty when the login has no card here. */
  Future<Optional<StoredUser>> find(String login);

  /** The user, or a 404 {@code USER_NOT_FOUND} failure when the login has no card here. */
  default Future<StoredUser> require(String login) {
    return find(login).map(found -> found.orElseThrow(() -> ProtocolErrors.userNotFound(login)));
  }
}
