package org.shine.server.cli;

/**
 * The indicator of a message the user sent (seed §8): one grey tick when the own server accepted it, one light tick
 * when a server of the recipient did, two when the recipient read it, a red {@code !} with "not delivered" when
 * delivery failed for good. A read receipt outranks the delivery state. On a terminal the ticks are coloured (ANSI);
 * piped, each carries its word instead, so scripts and logs can tell grey from light.
 */
enum Tick {
  SENDING("…", "\u001b[90m", "sending"),
  ACCEPTED("✓", "\u001b[90m", "accepted"),
  DELIVERED("✓", "\u001b[96m", "delivered"),
  READ("✓✓", "\u001b[96m", "read"),
  FAILED("! not delivered", "\u001b[31m", "failed");

  static final String RESET = "\u001b[0m";
  private final String symbol;
  private final String colour;
  private final String word;

  Tick(String symbol, String colour, String word) {
    this.symbol = symbol;
    this.colour = colour;
    this.word = word;
  }

  /** The tick of a message in a history page or a send answer: {@code read} outranks {@code deliveryState}. */
  static Tick of(String deliveryState, boolean read) {
    if (read) {
      return READ;
    }
    return switch (deliveryState == null ? "" : deliveryState) {
      case "delivered" -> DELIVERED;
      case "failed" -> FAILED;
      case "accepted" -> ACCEPTED;
      default -> SENDING;
    };
  }

  /**
   * The tick after a later report: a read message stays read, and a late or repeated {@code accepted} does not
   * take back a final state.
   */
  Tick then(Tick reported) {
    if (this == READ || reported == SENDING) {
      return this;
    }
    if (reported == ACCEPTED && (this == DELIVERED || this == FAILED)) {
      return this;
    }
    return reported;
  }

  /** Coloured on a terminal; {@code [✓ delivered]} and the like when piped. */
  String render(boolean terminal) {
    if (terminal) {
      return colour + symbol + RESET;
    }
    return "[" + (this == FAILED ? "! not delivered" : symbol + " " + word) + "]";
  }
}
