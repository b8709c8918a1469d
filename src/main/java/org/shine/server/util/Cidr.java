package org.shine.server.util;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * An address block, {@code 127.0.0.0/8} or {@code fe80::/10} (a bare address is one address: /32 or /128). Parsed
 * from literals only, never by a name lookup.
 */
public record Cidr(byte[] network, int prefixLength, String text) {
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
  private static final Pattern IPV6 = Pattern.compile("[0-9a-fA-F:.]{2,45}");

  public Cidr {
    network = network.clone();
    if (prefixLength < 0 || prefixLength > network.length * 8) {
      throw new IllegalArgumentException("prefix length out of range: " + text);
    }
  }

  /** Parses {@code address[/prefix]}; fails with {@link IllegalArgumentException} naming what is wrong. */
  public static Cidr parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("a CIDR block must be a string");
    }
    int slash = text.indexOf('/');
    String address = slash < 0 ? text : text.substring(0, slash);
    InetAddress parsed = literal(address);
    if (parsed == null) {
      throw new IllegalArgumentException("not an IP address: " + text);
    }
    byte[] bytes = parsed.getAddress();
    int prefix = bytes.length * 8;
    if (slash >= 0) {
      String digits = text.substring(slash + 1);
      if (!digits.matches("\\d{1,3}")) {
        throw new IllegalArgumentException("not a prefix length: " + text);
      }
      prefix = Integer.parseInt(digits);
      if (prefix > bytes.length * 8) {
        throw new IllegalArgumentException("prefix length above " + bytes.length * 8 + ": " + text);
      }
    }
    return new Cidr(mask(bytes, prefix), prefix, text);
  }

  /**
   * The address of an IP literal ({@code 127.0.0.1}, {@code ::1}, {@code [::1]}), or null for anything else
   * (a host name is never looked up). An IPv4-mapped IPv6 literal comes back as the IPv4 address.
   */
  public static InetAddress literal(String host) {
    if (host == null) {
      return null;
    }
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    boolean v4 = IPV4.matcher(h).matches();
    if (!v4 && !(h.indexOf(':') >= 0 && IPV6.matcher(h).matches())) {
      return null;
    }
    if (v4) {
      for (String part : h.split("\\.")) {
        if (Integer.parseInt(part) > 255 || (part.length() > 1 && part.startsWith("0"))) {
          return null;
        }
      }
    }
    try {
      // a literal of these characters only: InetAddress parses it without a lookup
      return InetAddress.getByName(h);
    } catch (UnknownHostException | IllegalArgumentException e) {
      return null;
    }
  }

  /** True when {@code address} (of the same family) lies in this block. */
  public boolean contains(byte[] address) {
    if (address.length != network.length) {
      return false;
    }
    return Arrays.equals(mask(address, prefixLength), network);
  }

  private static byte[] mask(byte[] address, int prefix) {
    byte[] masked = address.clone();
    for (int i = 0; i < masked.length; i++) {
      int bits = Math.max(0, Math.min(8, prefix - i * 8));
      masked[i] &= (byte) (0xff << (8 - bits));
    }
    return masked;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Cidr c && c.prefixLength == prefixLength && Arrays.equals(c.network, network);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(network) + prefixLength;
  }

  @Override
  public String toString() {
    return text;
  }
}
