package org.shine.server.dm;

import java.util.regex.Pattern;

/**
 * The login grammar of users, {@code [a-z0-9_.-]{1,32}}, and of servers (PROTOCOL §6a v3): a DNS-like name
 * {@code [a-z0-9.-]{1,253}}, or a name of the user grammar as v1 and v2 servers were named.
 */
public final class Logins {
  public static final int MAX_LENGTH = 32;
  public static final int MAX_SERVER_LENGTH = 253;
  private static final Pattern LOGIN = Pattern.compile("[a-z0-9_.-]{1,32}");
  private static final Pattern SERVER_NAME = Pattern.compile("[a-z0-9.-]{1,253}");

  private Logins() {
  }

  public static boolean isValid(String login) {
    return login != null && LOGIN.matcher(login).matches();
  }

  /** A serverLogin: a v3 name ({@code [a-z0-9.-]{1,253}}) or a v1/v2 one (the user grammar). */
  public static boolean isServerName(String serverLogin) {
    return serverLogin != null && (SERVER_NAME.matcher(serverLogin).matches() || isValid(serverLogin));
  }
}
