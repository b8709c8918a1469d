package org.shine.server.delivery;

/** The answer to {@code GetDmDeliveryStatus}. */
public record DeliveryStatus(String messageKey, boolean known, boolean delivered) {
}
