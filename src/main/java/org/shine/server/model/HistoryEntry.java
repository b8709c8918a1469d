package org.shine.server.model;

/** One logical message as its owner sees it; {@code deliveryState} is null on incoming entries. */
public record HistoryEntry(String messageKey, String baseKey, boolean outgoing, byte[] blob, long revision,
    DeliveryState deliveryState, boolean read, boolean deleted) {
}
