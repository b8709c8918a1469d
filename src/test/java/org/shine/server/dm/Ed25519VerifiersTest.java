package org.shine.server.dm;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.Provider;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The choice between ACCP and the BouncyCastle fallback. */
class Ed25519VerifiersTest {
  @Test
  @DisplayName("-Dshine.ed25519=bc chooses BouncyCastle without touching ACCP")
  void forcedBouncyCastle() {
    Ed25519Verifiers.Choice choice = Ed25519Verifiers.choose(" BC ", () -> {
      throw new AssertionError("ACCP must not be loaded");
    });

    assertThat(choice.verifier()).isInstanceOf(BouncyCastleEd25519.class);
    assertThat(choice.reason()).isEqualTo("forced by -Dshine.ed25519=bc");
  }

  @Test
  @DisplayName("an ACCP that does not load falls back to BouncyCastle, and the reason names the failure")
  void accpThatDoesNotLoad() {
    Ed25519Verifiers.Choice linkage = Ed25519Verifiers.choose(null, () -> {
      throw new UnsatisfiedLinkError("no libamazonCorrettoCryptoProvider in java.library.path");
    });
    Ed25519Verifiers.Choice unhealthy = Ed25519Verifiers.choose("auto", () -> {
      throw new IllegalStateException("native library did not load: wrong ELF class");
    });

    assertThat(linkage.verifier()).isInstanceOf(BouncyCastleEd25519.class);
    assertThat(linkage.reason()).startsWith("ACCP unavailable: ").contains("libamazonCorrettoCryptoProvider");
    assertThat(unhealthy.verifier()).isInstanceOf(BouncyCastleEd25519.class);
    assertThat(unhealthy.reason()).contains("wrong ELF class");
  }

  @Test
  @DisplayName("a provider without Ed25519 falls back to BouncyCastle")
  void providerWithoutEd25519() {
    Provider empty = new Provider("Empty", "1", "no services") {
    };

    Ed25519Verifiers.Choice choice = Ed25519Verifiers.choose(null, () -> empty);

    assertThat(choice.verifier()).isInstanceOf(BouncyCastleEd25519.class);
    assertThat(choice.reason()).contains("Ed25519");
  }

  @Test
  @DisplayName("the JVM's verifier is the one the shine.ed25519 property asks for")
  void activeFollowsTheProperty() {
    boolean forced = "bc".equals(System.getProperty(Ed25519Verifiers.PROPERTY));
    Class<?> expected = forced ? BouncyCastleEd25519.class
        : Ed25519Verifiers.choose(null, Ed25519Verifiers::loadAccp).verifier().getClass();

    assertThat(Ed25519Verifiers.active()).isInstanceOf(expected);
  }
}
