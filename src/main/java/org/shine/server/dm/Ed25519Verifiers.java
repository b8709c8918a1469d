package org.shine.server.dm;

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider;
import java.security.Provider;
import java.util.Objects;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses, once per JVM, who verifies Ed25519 signatures: ACCP when its native library loads and answers the RFC 8032
 * vector correctly, BouncyCastle otherwise or when {@code -Dshine.ed25519=bc} forces it. Logs the choice once.
 */
final class Ed25519Verifiers {
  static final String PROPERTY = "shine.ed25519";
  static final String FORCE_BOUNCY_CASTLE = "bc";
  private static final Logger LOG = LoggerFactory.getLogger(Ed25519Verifiers.class);
  private static final Ed25519Verifier ACTIVE = announce(choose(System.getProperty(PROPERTY),
      Ed25519Verifiers::loadAccp));

  private Ed25519Verifiers() {
  }

  /** The verifier of this JVM. */
  static Ed25519Verifier active() {
    return ACTIVE;
  }

  /** The verifier the setting and the loaded ACCP (or its failure to load) give, and why. */
  static Choice choose(String setting, Callable<Provider> accp) {
    BouncyCastleEd25519 bouncyCastle = new BouncyCastleEd25519();
    if (FORCE_BOUNCY_CASTLE.equalsIgnoreCase(setting == null ? "" : setting.trim())) {
      return new Choice(bouncyCastle, "forced by -D" + PROPERTY + "=" + FORCE_BOUNCY_CASTLE);
    }
    try {
      AccpEd25519 verifier = new AccpEd25519(accp.call(), bouncyCastle);
      verifier.checkKnownAnswer();
      return new Choice(verifier, "native library loaded");
    } catch (Exception | LinkageError e) {
      return new Choice(bouncyCastle, "ACCP unavailable: " + e);
    }
  }

  /** ACCP, healthy, or an exception saying why not. */
  static Provider loadAccp() {
    AmazonCorrettoCryptoProvider provider = AmazonCorrettoCryptoProvider.INSTANCE;
    Throwable loadingError = provider.getLoadingError();
    if (loadingError != null) {
      throw new IllegalStateException("native library did not load: " + loadingError, loadingError);
    }
    provider.assertHealthy();
    return provider;
  }

  private static Ed25519Verifier announce(Choice choice) {
    LOG.info("Ed25519 signatures verified by {} [reason: {}]", choice.verifier().name(), choice.reason());
    return choice.verifier();
  }

  /** A verifier and the reason it was chosen. */
  record Choice(Ed25519Verifier verifier, String reason) {
    Choice {
      Objects.requireNonNull(verifier);
      Objects.requireNonNull(reason);
    }
  }
}
