package org.shine.server.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.dm.BodyCipher;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.Hpke;
import org.shine.server.dm.KeyFile;

/** Each copy sealed to its owner's key, and read back as a client shows it (PROTOCOL §4 v3 encrypted bodies). */
class MessageSealerTest {
  private final KeyFile alice = KeyFile.generate("alice");
  private final KeyFile bob = KeyFile.generate("bob");
  private final Hpke.KeyPair bobsOldKey = Hpke.generateKeyPair();

  private static String b64(Hpke.KeyPair key) {
    return Base64.getEncoder().encodeToString(key.publicKey());
  }

  private BodyReader reader(String me, KeyFile file, List<Hpke.KeyPair> extra, boolean contactsEncrypt) {
    List<Hpke.KeyPair> keys = new ArrayList<>(file.encryptionKeys());
    keys.addAll(extra);
    return new BodyReader(me, keys, login -> contactsEncrypt);
  }

  @Test
  @DisplayName("the incoming copy opens with the recipient's keys only, the outgoing copy with the sender's")
  void eachCopyToItsOwner() {
    MessageSealer sealer = new MessageSealer(b64(bob.encryptionKey().orElseThrow()),
        b64(alice.encryptionKey().orElseThrow()));
    MessageSealer.Bodies bodies = sealer.bodies("alice", "bob", 1_000, 7, 0, "hello");
    ShineClient.SignedPair pair = MessageSealer.sign("alice", alice, "bob", 1_000, 7, 0, bodies);

    assertThat(BodyCipher.isEncrypted(pair.incoming().body())).isTrue();
    assertThat(new String(pair.incoming().body(), StandardCharsets.UTF_8)).doesNotContain("hello");
    assertThat(reader("bob", bob, List.of(), true).read(pair.incoming()))
        .isEqualTo(new BodyReader.Read("hello", BodyReader.Kind.ENCRYPTED));
    assertThat(reader("alice", alice, List.of(), true).read(pair.outgoing()))
        .isEqualTo(new BodyReader.Read("hello", BodyReader.Kind.ENCRYPTED));
    assertThat(reader("alice", alice, List.of(), true).read(pair.incoming()).kind())
        .isEqualTo(BodyReader.Kind.UNREADABLE);
    assertThat(reader("alice", alice, List.of(), true).read(pair.incoming()).readable()).isFalse();
  }

  @Test
  @DisplayName("an old key still opens what was sealed to it; a peer without a key gets plaintext, marked only when"
      + " the author could have encrypted")
  void oldKeysAndPlaintext() {
    MessageSealer toOld = new MessageSealer(b64(bobsOldKey), null);
    ShineClient.SignedPair old = MessageSealer.sign("alice", alice, "bob", 1_000, 8, 0,
        toOld.bodies("alice", "bob", 1_000, 8, 0, "from before"));
    assertThat(reader("bob", bob, List.of(bobsOldKey), true).read(old.incoming()).text()).isEqualTo("from before");
    assertThat(reader("alice", alice, List.of(), true).read(old.outgoing()))
        .as("the sender's own plaintext copy is not marked").isEqualTo(new BodyReader.Read("from before",
            BodyReader.Kind.PLAIN));

    MessageSealer plain = new MessageSealer(null, null);
    assertThat(plain.endToEnd()).isFalse();
    ShineClient.SignedPair pair = MessageSealer.sign("alice", alice, "bob", 1_000, 9, 0,
        plain.bodies("alice", "bob", 1_000, 9, 0, "in clear"));
    assertThat(reader("bob", bob, List.of(), true).read(pair.incoming()))
        .isEqualTo(new BodyReader.Read("in clear", BodyReader.Kind.SENT_UNENCRYPTED));
    assertThat(reader("bob", bob, List.of(), false).read(pair.incoming()).kind()).isEqualTo(BodyReader.Kind.PLAIN);
  }

  @Test
  @DisplayName("the 64 KiB limit counts the sealed body, which is larger than the text")
  void sealedSize() {
    MessageSealer sealer = new MessageSealer(b64(bob.encryptionKey().orElseThrow()), null);
    String text = "x".repeat(50_000);
    MessageSealer.Bodies bodies = sealer.bodies("alice", "bob", 1_000, 10, 0, text);

    assertThat(bodies.incoming().length).isGreaterThan(DmCodec.DEFAULT_MAX_BODY);
    assertThat(bodies.outgoing().length).isLessThan(DmCodec.DEFAULT_MAX_BODY);
    assertThat(bodies.fits()).isFalse();
    assertThat(new MessageSealer(null, null).bodies("alice", "bob", 1_000, 10, 0, text).fits()).isTrue();
  }
}
