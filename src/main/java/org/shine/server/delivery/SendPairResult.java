package org.shine.server.delivery;

import org.shine.server.model.DeliveryState;

/** The answer to SendMessagePair: the keys of the stored pair and its current delivery state. */
public record SendPairResult(String baseKey, String incomingKey, String outgoingKey, DeliveryState deliveryState) {
}
