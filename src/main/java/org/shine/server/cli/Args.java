package org.shine.server.cli;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Command-line options of the form {@code --name value} (repeatable) after a subcommand. */
public final class Args {
  private final Map<String, List<String>> options = new HashMap<>();

  private Args() {
  }

  /** Parses {@code args} from {@code start}; every name must be in {@code allowed}. */
  public static Args parse(String[] args, int start, Set<String> allowed) {
    Args parsed = new Args();
    for (int i = start; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--")) {
        throw new UsageException("unexpected argument: " + arg);
      }
      String name = arg.substring(2);
      String value;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else {
        if (i + 1 >= args.length) {
          throw new UsageException("option --" + name + " needs a value");
        }
        value = args[++i];
      }
      if (!allowed.contains(name)) {
        throw new UsageException("unknown option --" + name);
      }
      parsed.options.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    }
    return parsed;
  }

  public String required(String name) {
    String value = optional(name, null);
    if (value == null) {
      throw new UsageException("missing option --" + name);
    }
    return value;
  }

  public String optional(String name, String fallback) {
    List<String> values = options.get(name);
    return values == null ? fallback : values.get(values.size() - 1);
  }

  public List<String> all(String name) {
    return options.getOrDefault(name, List.of());
  }

  public long longValue(String name, long fallback) {
    String value = optional(name, null);
    if (value == null) {
      return fallback;
    }
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new UsageException("option --" + name + " must be a number: " + value);
    }
  }

  /** Bad command-line usage; the CLI prints it with the usage text and exits 2. */
  public static final class UsageException extends RuntimeException {
    public UsageException(String message) {
      super(message);
    }
  }
}
