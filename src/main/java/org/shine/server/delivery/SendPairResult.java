package org.shine.server.delivery;

/** The answer to SendMessagePair: the keys of the stored pair and its current delivery state. */
public record SendPairResult(String baseKey, String incomingKey, String outgoingKey, DeliveryState deliveryState) {
}
