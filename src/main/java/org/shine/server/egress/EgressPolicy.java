package org.shine.server.egress;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.util.Cidr;

/**
 * Which addresses this server may dial (PROTOCOL §13): a built-in deny list of loopback, private, link-local,
 * shared, benchmark, reserved and multicast blocks, to which {@code egress.denyCidrs} adds, and
 * {@code egress.allowCidrs} as exceptions; the most specific matching block decides and on a tie allow wins. An
 * IPv4 address embedded in IPv6 (mapped {@code ::ffff:0:0/96}, NAT64 {@code 64:ff9b::/96}, 6to4 {@code 2002::/16})
 * is checked as that IPv4 address. Immutable; safe to share.
 */
public final class EgressPolicy {
  /** PROTOCOL §13's default deny list. */
  public static final List<String> DEFAULT_DENY = List.of("127.0.0.0/8", "::1/128", "::/128", "0.0.0.0/8",
      "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "fe80::/10", "fc00::/7",
      "198.18.0.0/15", "240.0.0.0/4", "224.0.0.0/4", "ff00::/8");
  private static final byte[] NAT64 = {0, 0x64, (byte) 0xff, (byte) 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  private static final byte[] MAPPED = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff};

  private final List<Cidr> deny;
  private final List<Cidr> allow;

  public EgressPolicy(List<String> denyCidrs, List<String> allowCidrs) {
    List<Cidr> denied = new ArrayList<>();
    DEFAULT_DENY.forEach(text -> denied.add(Cidr.parse(text)));
    denyCidrs.forEach(text -> denied.add(Cidr.parse(text)));
    this.deny = List.copyOf(denied);
    this.allow = allowCidrs.stream().map(Cidr::parse).toList();
  }

  /** The policy of {@code config.egress()}. */
  public static EgressPolicy of(AppConfig config) {
    return new EgressPolicy(config.egress().denyCidrs(), config.egress().allowCidrs());
  }

  /** True when this server may connect to {@code address}. */
  public boolean allows(InetAddress address) {
    Objects.requireNonNull(address);
    byte[] checked = effective(address.getAddress());
    int denied = longestMatch(deny, checked);
    int allowed = longestMatch(allow, checked);
    return denied < 0 || allowed >= denied;
  }

  /** The address as checked: an IPv4 address embedded in IPv6 is that IPv4 address. */
  static byte[] effective(byte[] address) {
    if (address.length != 16) {
      return address;
    }
    if (startsWith(address, MAPPED) || startsWith(address, NAT64)) {
      return Arrays.copyOfRange(address, 12, 16);
    }
    if (address[0] == 0x20 && address[1] == 0x02) {
      return Arrays.copyOfRange(address, 2, 6);
    }
    return address;
  }

  private static boolean startsWith(byte[] address, byte[] prefix) {
    return Arrays.equals(address, 0, prefix.length, prefix, 0, prefix.length);
  }

  private static int longestMatch(List<Cidr> blocks, byte[] address) {
    int longest = -1;
    for (Cidr block : blocks) {
      if (block.prefixLength() > longest && block.contains(address)) {
        longest = block.prefixLength();
      }
    }
    return longest;
  }

  /** True for a loopback address (IPv4 embedded in IPv6 included): the one place plain ws may carry a session. */
  public static boolean isLoopback(InetAddress address) {
    byte[] checked = effective(address.getAddress());
    return checked.length == 4 ? checked[0] == 127 : address.isLoopbackAddress();
  }
}
