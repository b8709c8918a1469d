package org.shine.server.dm;

import java.util.regex.Pattern;

/** The login grammar shared by users and servers: {@code [a-z0-9_.-]{1,32}}. */
public final class Logins {
  public static final int MAX_LENGTH = 32;
  private static final Pattern LOGIN = Pattern.compile("[a-z0-9_.-]{1,32}");

  private Logins() {
  }

  public static boolean isValid(String login) {
    return login != null && LOGIN.matcher(login).matches();
  }
}
