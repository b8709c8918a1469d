package org.shine.server.client;

import java.util.Objects;

/**
 * What a client concluded about a container it received (PROTOCOL §13 "Clients verify"): signed by its author's
 * card key, not (with the reason, in words a user reads), not checkable now (the author's card could not be read: try
 * again later), or nothing to check (an event that carries no container, such as a delivery state).
 */
public record Verdict(Outcome outcome, String reason) {
  /** A container signed by its author's key. */
  public static final Verdict VERIFIED = new Verdict(Outcome.VERIFIED, "");
  /** An event without a container: server metadata, nobody's words. */
  public static final Verdict NO_CONTAINER = new Verdict(Outcome.NO_CONTAINER, "");

  public Verdict {
    Objects.requireNonNull(outcome);
    Objects.requireNonNull(reason);
  }

  /** The four outcomes. */
  public enum Outcome { VERIFIED, NOT_VERIFIED, UNCHECKED, NO_CONTAINER }

  /** A container that must not be shown as its author's words; {@code reason} says why. */
  public static Verdict notVerified(String reason) {
    return new Verdict(Outcome.NOT_VERIFIED, reason);
  }

  /** A container that could not be checked now (the author's card could not be read). */
  public static Verdict unchecked(String reason) {
    return new Verdict(Outcome.UNCHECKED, reason);
  }

  /** True when the words may be shown as the author's: verified, or no container at all. */
  public boolean trusted() {
    return outcome == Outcome.VERIFIED || outcome == Outcome.NO_CONTAINER;
  }
}
