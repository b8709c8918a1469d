package org.shine.server.dm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.shine.server.metrics.SignatureOp.AUTH_LOGIN;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.support.Eventually;

/** The node's bounded signature verifier (PROTOCOL §11 {@code limits.verifyQueue}). */
@ExtendWith(VertxExtension.class)
@Timeout(value = 20, timeUnit = TimeUnit.SECONDS)
class SignatureVerifierTest {
  private static final byte[] MESSAGE = "SHiNE_AUTH|s1|challenge".getBytes(StandardCharsets.UTF_8);

  @Test
  @DisplayName("a check beyond the limit fails at once with QueueFullException, and the count returns to 0")
  void beyondTheLimitFailsAtOnce(Vertx vertx) throws Exception {
    SignatureVerifier verifier = new SignatureVerifier(vertx, 2);
    CountDownLatch release = new CountDownLatch(1);
    List<Future<Boolean>> held = new ArrayList<>();
    // GIVEN two checks that hold their places until released
    for (int i = 0; i < 2; i++) {
      held.add(verifier.check(AUTH_LOGIN, () -> {
        release.await();
        return true;
      }));
    }
    assertThat(verifier.pending()).isEqualTo(2);

    // WHEN a third check arrives
    Future<Boolean> third = verifier.check(AUTH_LOGIN, () -> true);

    // THEN it has already failed, without running, and took no place
    assertThat(third.failed()).isTrue();
    assertThat(third.cause()).isInstanceOf(SignatureVerifier.QueueFullException.class)
        .hasMessageContaining("more than 2 signature checks");
    assertThat(verifier.pending()).isEqualTo(2);

    release.countDown();
    for (Future<Boolean> check : held) {
      assertThat(check.await(10, TimeUnit.SECONDS)).isTrue();
    }
    Eventually.until("every place is given back", 5_000, () -> verifier.pending() == 0);
    assertThat(verifier.check(AUTH_LOGIN, () -> true).await(10, TimeUnit.SECONDS)).isTrue();
    Eventually.until("the place of the last check is given back", 5_000, () -> verifier.pending() == 0);
  }

  @Test
  @DisplayName("a check that throws fails its future and still gives its place back")
  void failingCheckReleasesItsPlace(Vertx vertx) {
    SignatureVerifier verifier = new SignatureVerifier(vertx, 1);
    Future<Boolean> failing = verifier.check(AUTH_LOGIN, () -> {
      throw new IllegalStateException("broken key");
    });
    assertThatThrownBy(() -> failing.await(10, TimeUnit.SECONDS)).hasMessageContaining("broken key");
    Eventually.until("the place is given back", 5_000, () -> verifier.pending() == 0);
  }

  @Test
  @DisplayName("a good signature verifies true, a bad one false")
  void goodAndBadSignatures(Vertx vertx) throws Exception {
    SignatureVerifier verifier = new SignatureVerifier(vertx, 1);
    KeyFile key = KeyFile.generate("alice");
    byte[] signature = Ed25519Signer.sign(key.privateKey(), MESSAGE);
    byte[] tampered = signature.clone();
    tampered[10] ^= 1;
    byte[] otherMessage = "SHiNE_AUTH|s2|challenge".getBytes(StandardCharsets.UTF_8);

    assertThat(verifier.verify(AUTH_LOGIN, key.publicKey(), MESSAGE, signature).await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(verifier.verify(AUTH_LOGIN, key.publicKey(), MESSAGE, tampered).await(10, TimeUnit.SECONDS)).isFalse();
    assertThat(verifier.verify(AUTH_LOGIN, key.publicKey(), otherMessage, signature).await(10, TimeUnit.SECONDS))
        .isFalse();
    assertThat(verifier.verify(AUTH_LOGIN, KeyFile.generate("mallory").publicKey(), MESSAGE, signature)
        .await(10, TimeUnit.SECONDS)).isFalse();
    Eventually.until("every place is given back", 5_000, () -> verifier.pending() == 0);
  }

  @Test
  @DisplayName("a limit below 1 is refused")
  void limitMustBePositive(Vertx vertx) {
    assertThatThrownBy(() -> new SignatureVerifier(vertx, 0)).isInstanceOf(IllegalArgumentException.class);
  }
}
