package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What one session holds while it is idle (issue 18): no id until a request needs one, its address from the socket. */
class SessionTest {
  private final Session session = new Session(new FakeSocket(40_000).socket, 1);

  @Test
  @DisplayName("an idle session is named by no event's except-header; once made, its id is stable and names it")
  void idIsMadeWhenNeeded() {
    assertThat(session.isNamedBy(null)).isFalse();
    assertThat(session.isNamedBy("some-other-session")).isFalse();

    String id = session.id();

    assertThat(session.id()).isEqualTo(id);
    assertThat(session.isNamedBy(id)).isTrue();
    assertThat(session.isNamedBy(null)).isFalse();
  }

  @Test
  @DisplayName("the address in logs and the host the per-address limits count come from the socket")
  void addressFromTheSocket() {
    assertThat(session.address()).isEqualTo("127.0.0.1:40000");
    assertThat(session.host()).isEqualTo("127.0.0.1");
    assertThat(session.who()).isEqualTo("anonymous 127.0.0.1:40000");
  }
}
