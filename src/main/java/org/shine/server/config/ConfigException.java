package org.shine.server.config;

/** The configuration file is unreadable, names an unknown key, or holds an invalid value. */
public class ConfigException extends RuntimeException {
  public ConfigException(String message) {
    super(message);
  }

  public ConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
