package org.shine.server.dm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DmKeysTest {

  @Test
  @DisplayName("a key written as the server writes it parses to its parts")
  void canonicalKeysParse() {
    assertThat(DmKeys.parseBaseKey("bob|alice|1774700000123|0"))
        .isEqualTo(new DmKeys.ParsedKey("bob", "alice", 1_774_700_000_123L, 0, 0));
    assertThat(DmKeys.parseMessageKey("alice|bob|0|9223372036854775807|2"))
        .isEqualTo(new DmKeys.ParsedKey("alice", "bob", 0, Long.MAX_VALUE, 2));
  }

  /** Found by EnvelopeFuzzIT: a read receipt whose ref was "bob|alice|١٢|1" was stored though no key is so written. */
  @ParameterizedTest
  @ValueSource(strings = {"bob|alice|\u0661\u0662|1", "bob|alice|\uff11|1", "bob|alice|012|1", "bob|alice|12|00",
      "bob|alice|+12|1", "bob|alice|-12|1", "bob|alice|9223372036854775808|1", "bob|alice|12|1|", "bob|alice||1"})
  @DisplayName("a baseKey in any other spelling of its numbers is not a key")
  void otherSpellingsAreRefused(String key) {
    assertThat(DmKeys.parseBaseKey(key)).isNull();
    assertThat(DmKeys.parseMessageKey(key + "|2")).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {"bob|alice|12|1|02", "bob|alice|12|1|\u0662", "bob|alice|12|1|5", "bob|alice|12|1|0"})
  @DisplayName("a messageKey's kind is one plain digit 1-4")
  void kindSpellingsAreRefused(String key) {
    assertThat(DmKeys.parseMessageKey(key)).isNull();
  }
}
