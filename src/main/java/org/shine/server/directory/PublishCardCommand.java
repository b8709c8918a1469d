package org.shine.server.directory;

import java.util.Objects;
import org.shine.server.model.UserCard;

/**
 * {@code PublishUserCard} as the gateway hands it to the directory: the card, who publishes it, and the invite code
 * given with it (null when none; PROTOCOL §13).
 */
public record PublishCardCommand(UserCard card, CardPublisher publisher, String inviteCode) {
  public PublishCardCommand {
    Objects.requireNonNull(card);
    Objects.requireNonNull(publisher);
  }
}
