package org.shine.server.db;

/** Exposes the repository's hot statements to plan checks in tests. */
public final class DeliveryRepositoryPlans {
  public static final String CLAIM_DUE = DeliveryRepository.CLAIM_DUE;

  private DeliveryRepositoryPlans() {
  }
}
