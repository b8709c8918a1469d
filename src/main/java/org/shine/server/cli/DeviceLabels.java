package org.shine.server.cli;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** The label a device key gets in the card when the user names none: the host name, else {@code cli}. */
final class DeviceLabels {
  /** The longest label a card takes (PROTOCOL §4 v3). */
  static final int MAX = 32;

  private DeviceLabels() {
  }

  static String ofThisHost() {
    String name = System.getenv("HOSTNAME");
    if (name == null || name.isBlank()) {
      try {
        name = InetAddress.getLocalHost().getHostName();
      } catch (UnknownHostException | SecurityException e) {
        name = null;
      }
    }
    if (name == null || name.isBlank()) {
      return "cli";
    }
    String trimmed = name.strip();
    return trimmed.length() > MAX ? trimmed.substring(0, MAX) : trimmed;
  }
}
