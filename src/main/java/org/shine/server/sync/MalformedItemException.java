package org.shine.server.sync;

/**
 * A pulled item that can never be stored as it is (bad shape, bad base64, a blob that is not a container of its
 * type's kind, a bad setting): it is ACKed and quarantined as malformed (PROTOCOL §8 v3). {@code author} is the
 * containers' author when one was read (null otherwise), so the item is checked again when that author's card
 * changes.
 */
final class MalformedItemException extends Exception {
  private final String author;

  MalformedItemException(String author, String message) {
    super(message, null, false, false);
    this.author = author;
  }

  String author() {
    return author;
  }
}
