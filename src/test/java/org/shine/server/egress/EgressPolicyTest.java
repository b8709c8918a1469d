package org.shine.server.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.shine.server.util.Cidr;

/**
 * The egress policy of PROTOCOL §13, with loopback stand-ins only (no test names an address a server could reach
 * outside this machine): the default list denies loopback, {@code allowCidrs} opens it, a more specific
 * {@code denyCidrs} entry closes one address again.
 */
class EgressPolicyTest {
  private static InetAddress ip(String literal) {
    InetAddress address = Cidr.literal(literal);
    assertThat(address).as(literal).isNotNull();
    return address;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"127.0.0.1", "127.0.0.9", "127.255.255.254", "::1", "::ffff:127.0.0.1",
      "64:ff9b::7f00:1", "2002:7f00:9::1", "[::1]"})
  @DisplayName("with no exceptions the default list denies loopback, also when IPv4 is embedded in IPv6")
  void defaultDeniesLoopback(String address) {
    EgressPolicy policy = new EgressPolicy(List.of(), List.of());

    assertThat(policy.allows(ip(address))).isFalse();
  }

  @Test
  @DisplayName("allowCidrs 127.0.0.0/8 opens loopback; denyCidrs 127.0.0.9/32 closes that one address again")
  void mostSpecificDecides() {
    EgressPolicy policy = new EgressPolicy(List.of("127.0.0.9/32"), List.of("127.0.0.0/8"));

    assertThat(policy.allows(ip("127.0.0.1"))).isTrue();
    assertThat(policy.allows(ip("127.0.0.8"))).isTrue();
    assertThat(policy.allows(ip("127.0.0.9"))).isFalse();
    assertThat(policy.allows(ip("::ffff:127.0.0.9"))).isFalse();
    assertThat(policy.allows(ip("64:ff9b::7f00:9"))).isFalse();
    assertThat(policy.allows(ip("2002:7f00:0009::"))).isFalse();
    assertThat(policy.allows(ip("::ffff:127.0.0.10"))).isTrue();
    assertThat(policy.allows(ip("::1"))).as("IPv6 loopback stays denied: allowCidrs named IPv4 only").isFalse();
  }

  @Test
  @DisplayName("on a tie between an allow and a deny entry of the same length, allow wins")
  void tieAllows() {
    EgressPolicy policy = new EgressPolicy(List.of("127.0.0.0/24"), List.of("127.0.0.0/24"));

    assertThat(policy.allows(ip("127.0.0.5"))).isTrue();
    assertThat(policy.allows(ip("127.0.1.5"))).as("only the default /8 matches").isFalse();
  }

  @Test
  @DisplayName("a broader allow entry does not open what a more specific deny entry closes")
  void broaderAllowLoses() {
    EgressPolicy policy = new EgressPolicy(List.of("127.0.0.0/16"), List.of("127.0.0.0/8"));

    assertThat(policy.allows(ip("127.0.3.4"))).isFalse();
    assertThat(policy.allows(ip("127.1.3.4"))).isTrue();
  }

  @Test
  @DisplayName("loopback for the transport rule: 127/8, ::1 and IPv4 loopback embedded in IPv6")
  void loopback() {
    assertThat(EgressPolicy.isLoopback(ip("127.0.0.9"))).isTrue();
    assertThat(EgressPolicy.isLoopback(ip("::1"))).isTrue();
    assertThat(EgressPolicy.isLoopback(ip("::ffff:127.0.0.2"))).isTrue();
    assertThat(EgressPolicy.isLoopback(ip("64:ff9b::7f00:1"))).isTrue();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"localhost", "127.0.0.1/33", "::1/129", "127.0.0/8", "127.0.0.01", "256.0.0.1", "x/8",
      "127.0.0.1/", "", "fe80::1%lo"})
  @DisplayName("a block that is not an IP literal with a prefix in range is refused, without any name lookup")
  void badBlocks(String text) {
    assertThatThrownBy(() -> Cidr.parse(text)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @DisplayName("a host name is not a literal: it comes back null, never looked up")
  void namesAreNotLiterals() {
    assertThat(Cidr.literal("localhost")).isNull();
    assertThat(Cidr.literal("s1")).isNull();
    assertThat(Cidr.literal("abc:def")).as("not an IPv6 literal either").isNull();
    assertThat(Cidr.literal("[::1]")).isNotNull();
  }
}
