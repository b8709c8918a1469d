package org.shine.server.delivery;

import org.shine.server.model.DeliveryState;

/**
 * The answer to {@code GetDmDeliveryStatus}: {@code state} (v2) is the state of the stored revision when
 * {@code known}, null otherwise.
 */
public record DeliveryStatus(String messageKey, boolean known, boolean delivered, DeliveryState state) {
}
