package org.shine.server.model;

/** Delivery states of an outgoing message (seed §3); {@code delivered} and {@code failed} are terminal. */
public enum DeliveryState {
  ACCEPTED("accepted"),
  DELIVERED("delivered"),
  FAILED("failed");

  private final String wire;

  DeliveryState(String wire) {
    this.wire = wire;
  }

  public String wire() {
    return wire;
  }

  public static DeliveryState fromWire(String wire) {
    for (DeliveryState state : values()) {
      if (state.wire.equals(wire)) {
        return state;
      }
    }
    throw new IllegalArgumentException("unknown delivery state " + wire);
  }
}
