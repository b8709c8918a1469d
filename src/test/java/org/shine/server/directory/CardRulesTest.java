package org.shine.server.directory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.model.KeyHistoryEntry;
import org.shine.server.model.UserCard;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;

/** The order and signer rules of v3 cards (PROTOCOL §4 v3), judged without a server. */
class CardRulesTest {
  private static final long NOW = 1_800_000_000_000L;
  private static final long SKEW = 600_000;
  private static final long WINDOW = 3_600_000 + SKEW;
  private static final String A = key();
  private static final String B = key();
  private static final String C = key();
  private static final String R = key();
  private static final String R2 = key();
  private final CardRules rules = new CardRules(NOW, SKEW, WINDOW);
  private final Map<String, KeyHistoryEntry> history = new HashMap<>();

  private static String key() {
    return Base64.getEncoder().encodeToString(Ed25519Signer.generate().publicKey());
  }

  /** A v3 card of alice; {@code old} lists retired keys as key@time strings and revoked keys as -key. */
  private static UserCard card(long epoch, long version, List<String> keys, String recovery, String signer,
      String... old) {
    List<UserCard.RetiredKey> retired = new ArrayList<>();
    List<String> revoked = new ArrayList<>();
    for (String entry : old) {
      if (entry.startsWith("-")) {
        revoked.add(entry.substring(1));
      } else {
        String[] parts = entry.split("@");
        retired.add(new UserCard.RetiredKey(parts[0], Long.parseLong(parts[1])));
      }
    }
    return new UserCard("alice", epoch, version, keys.stream().map(k -> new UserCard.DeviceKey(k, null)).toList(),
        recovery, null, retired, revoked, List.of(new UserCard.Route("s1", "ws://127.0.0.1:1/ws")), signer, "sig",
        true);
  }

  private String code(UserCard stored, UserCard next) {
    try {
      rules.judge(stored, history, next);
      return "accepted";
    } catch (ProtocolException e) {
      return e.status() + " " + e.code();
    }
  }

  @Test
  @DisplayName("a new login takes a card signed by one of its own keys; another signer is a gap to fetch")
  void firstSight() {
    assertThat(rules.judge(null, history, card(0, 1, List.of(A), null, A))).isEqualTo(CardRules.Verdict.ACCEPT);
    assertThat(rules.judge(null, history, card(1, 4, List.of(B), R, R))).isEqualTo(CardRules.Verdict.ACCEPT);
    assertThat(rules.judge(null, history, card(0, 3, List.of(B), null, A, A + "@" + NOW)))
        .isEqualTo(CardRules.Verdict.GAP);
  }

  @Test
  @DisplayName("a device key signs a higher version of its epoch: add a device, then rotate one")
  void deviceKeyUpdates() {
    UserCard first = card(0, 1, List.of(A), null, A);
    UserCard twoDevices = card(0, 2, List.of(A, B), null, A);
    UserCard rotated = card(0, 3, List.of(B, C), null, B, A + "@" + (NOW - 1000));

    assertThat(rules.judge(first, history, twoDevices)).isEqualTo(CardRules.Verdict.ACCEPT);
    assertThat(rules.judge(twoDevices, history, rotated)).isEqualTo(CardRules.Verdict.ACCEPT);
  }

  @Test
  @DisplayName("same place: the same signed text is unchanged, another is 409; an older card is 409 STALE_VERSION")
  void samePlaceAndOlder() {
    UserCard stored = card(0, 2, List.of(A, B), null, A);

    assertThat(rules.judge(stored, history, card(0, 2, List.of(A, B), null, A)))
        .isEqualTo(CardRules.Verdict.UNCHANGED);
    assertThat(code(stored, card(0, 2, List.of(A), null, A, "-" + B))).isEqualTo("409 " + ErrorCode.CARD_CONFLICT);
    assertThat(code(stored, card(0, 1, List.of(A, B), null, A))).isEqualTo("409 " + ErrorCode.STALE_VERSION);
  }

  @Test
  @DisplayName("a card that leaves out a key is 400 KEY_DROPPED; a retired key may go once its window has passed")
  void droppedKeys() {
    UserCard stored = card(0, 2, List.of(A, B), null, A);
    UserCard rotatedRecently = card(0, 3, List.of(B), null, B, A + "@" + (NOW - 1000));
    UserCard rotatedLongAgo = card(0, 3, List.of(B), null, B, A + "@" + (NOW - WINDOW - 1));

    assertThat(code(stored, card(0, 3, List.of(A), null, A))).isEqualTo("400 " + ErrorCode.KEY_DROPPED);
    assertThat(code(rotatedRecently, card(0, 4, List.of(B), null, B))).isEqualTo("400 " + ErrorCode.KEY_DROPPED);
    assertThat(code(rotatedLongAgo, card(0, 4, List.of(B), null, B))).isEqualTo("accepted");
  }

  @Test
  @DisplayName("only the recovery key changes it (403 RECOVERY_KEY_REQUIRED); a device key may add the first one")
  void recoveryKeyChanges() {
    UserCard noRecovery = card(0, 1, List.of(A), null, A);
    UserCard withRecovery = card(0, 2, List.of(A), R, A);

    assertThat(code(noRecovery, withRecovery)).isEqualTo("accepted");
    assertThat(code(withRecovery, card(0, 3, List.of(A), R2, A)))
        .isEqualTo("403 " + ErrorCode.RECOVERY_KEY_REQUIRED);
    assertThat(code(withRecovery, card(0, 3, List.of(A), null, A)))
        .isEqualTo("403 " + ErrorCode.RECOVERY_KEY_REQUIRED);
    assertThat(code(withRecovery, card(1, 1, List.of(B), R2, R, "-" + A))).isEqualTo("accepted");
  }

  @Test
  @DisplayName("a thief's device key cannot outrun the recovery key: a new epoch needs the recovery key")
  void epochsBelongToTheRecoveryKey() {
    UserCard stored = card(0, 5, List.of(A, B), R, A);
    UserCard thiefVersion = card(0, 6, List.of(A), R, A, "-" + B);
    UserCard recovered = card(1, 1, List.of(C), R, R, "-" + A, "-" + B);

    assertThat(code(stored, card(1, 1, List.of(A), R, A, "-" + B)))
        .isEqualTo("403 " + ErrorCode.RECOVERY_KEY_REQUIRED);
    assertThat(code(stored, thiefVersion)).isEqualTo("accepted");
    // the recovery card follows whatever the thief did inside epoch 0
    assertThat(code(thiefVersion, recovered)).isEqualTo("accepted");
    assertThat(code(stored, card(0, 7, List.of(A, B), R, R))).isEqualTo("403 " + ErrorCode.SIGNER_NOT_ALLOWED);
  }

  @Test
  @DisplayName("revoked and retired keys sign no card and are never current again")
  void oldKeysStayOld() {
    UserCard stored = card(0, 3, List.of(B), null, B, A + "@" + (NOW - 1000));
    history.put(A, new KeyHistoryEntry(A, NOW - 1000, false));
    history.put(C, new KeyHistoryEntry(C, null, true));

    assertThat(code(stored, card(0, 4, List.of(B), null, A, A + "@" + (NOW - 1000))))
        .isEqualTo("403 " + ErrorCode.SIGNER_NOT_ALLOWED);
    assertThat(code(stored, card(0, 4, List.of(B), null, C, A + "@" + (NOW - 1000))))
        .isEqualTo("400 " + ErrorCode.KEY_REVOKED);
    assertThat(code(stored, card(0, 4, List.of(B, A), null, B))).isEqualTo("400 " + ErrorCode.INVALID_FIELD);
    assertThat(code(stored, card(0, 4, List.of(B, C), null, B, A + "@" + (NOW - 1000))))
        .isEqualTo("400 " + ErrorCode.KEY_REVOKED);
    assertThat(code(stored, card(0, 4, List.of(B), null, B, A + "@" + NOW)))
        .isEqualTo("400 " + ErrorCode.INVALID_FIELD);
    assertThat(code(stored, card(0, 4, List.of(B), null, B, "-" + A))).isEqualTo("accepted");
  }

  @Test
  @DisplayName("a signer the stored card cannot place is a gap (missed versions); a v1 card with another key is 409")
  void gaps() {
    UserCard stored = card(0, 2, List.of(A), R, A);

    assertThat(rules.judge(stored, history, card(0, 5, List.of(C), R, C, "-" + A))).isEqualTo(CardRules.Verdict.GAP);
    assertThat(rules.judge(stored, history, card(2, 1, List.of(C), R2, R2, "-" + A)))
        .isEqualTo(CardRules.Verdict.GAP);
    UserCard v1 = UserCard.v1("alice", C, List.of(new UserCard.Route("s1", "ws://127.0.0.1:1/ws")), 9, "sig");
    assertThat(code(stored, v1)).isEqualTo("409 " + ErrorCode.KEY_MISMATCH);
  }

  @Test
  @DisplayName("a retirement in the future is 400")
  void futureRetirement() {
    assertThat(code(card(0, 1, List.of(A, B), null, A), card(0, 2, List.of(B), null, A, A + "@" + (NOW + SKEW + 1))))
        .isEqualTo("400 " + ErrorCode.INVALID_FIELD);
    assertThatThrownBy(() -> rules.judge(null, history, card(0, 1, List.of(B), null, B, A + "@" + (NOW + SKEW + 1))))
        .isInstanceOf(ProtocolException.class);
  }
}
