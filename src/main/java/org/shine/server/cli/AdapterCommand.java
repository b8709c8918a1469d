package org.shine.server.cli;

import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.shine.server.adapter.CommandHandler;
import org.shine.server.adapter.EventHandler;
import org.shine.server.adapter.HubAdapter;
import org.shine.server.adapter.Inbox;
import org.shine.server.adapter.PrintHandler;
import org.shine.server.dm.KeyFile;

/** {@code adapter run|dead|retry-dead}: the reference hub adapter from the shell. */
public final class AdapterCommand {
  static final String USAGE = String.join("\n",
      "adapter run --server http://HOST:PORT --key FILE [--login L] [--inbox FILE | --jdbc URL]",
      "            [--wait S (25; 0 = short polling)] [--exec COMMAND | --out FILE] [--delays 10s,1m,5m,30m,2h]",
      "            [--status-every S (10)]   receive events into a local inbox and process them",
      "adapter dead --inbox FILE|--jdbc URL         list events that used up every retry",
      "adapter retry-dead --inbox FILE|--jdbc URL   put them back for processing");
  private static final Set<String> OPTIONS = Set.of("server", "key", "login", "inbox", "jdbc", "wait", "exec",
      "out", "delays", "status-every", "server-login");

  private AdapterCommand() {
  }

  public static int run(String[] args) throws Exception {
    if (args.length == 0 || args[0].equals("help")) {
      System.out.println(USAGE);
      return args.length == 0 ? 2 : 0;
    }
    Args options = Args.parse(args, 1, OPTIONS);
    Inbox inbox = Inbox.open(options.optional("jdbc", options.optional("inbox", "adapter-inbox.db")));
    switch (args[0]) {
      case "dead" -> {
        for (Inbox.Row row : inbox.dead()) {
          System.out.println(row.eventKey() + "\tattempts " + row.attempts() + "\t" + row.lastError());
        }
        return 0;
      }
      case "retry-dead" -> {
        System.out.println(inbox.retryDead(System.currentTimeMillis()) + " events back to pending");
        return 0;
      }
      case "run" -> {
        return runAdapter(options, inbox);
      }
      default -> throw new Args.UsageException("unknown adapter command " + args[0] + "\n" + USAGE);
    }
  }

  private static int runAdapter(Args options, Inbox inbox) throws Exception {
    KeyFile key = KeyFile.read(Path.of(options.required("key")));
    String login = options.optional("login", key.login().orElse(null));
    if (login == null) {
      throw new Args.UsageException("--login is required when the key file names no login");
    }
    EventHandler handler;
    if (options.optional("exec", null) != null) {
      handler = new CommandHandler(options.required("exec"));
    } else if (options.optional("out", null) != null) {
      handler = new PrintHandler(new PrintStream(new FileOutputStream(options.required("out"), true), true,
          StandardCharsets.UTF_8));
    } else {
      handler = new PrintHandler(System.out);
    }
    HubAdapter.Settings settings = new HubAdapter.Settings(options.required("server"),
        options.optional("server-login", null), login, key, options.longValue("wait", 25),
        delays(options.optional("delays", null)), 60_000, 500,
        Duration.ofSeconds(options.longValue("status-every", 10)));
    HubAdapter adapter = new HubAdapter(settings, inbox, handler);
    adapter.start();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        adapter.stop();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }));
    adapter.awaitTermination();
    return 0;
  }

  /** "10s,1m,5m,30m,2h" in milliseconds; null gives the defaults. */
  static List<Long> delays(String spec) {
    if (spec == null) {
      return HubAdapter.Settings.defaultDelaysMs();
    }
    List<Long> delays = new ArrayList<>();
    for (String part : spec.split(",")) {
      String p = part.trim();
      long unit = p.endsWith("ms") ? 1 : p.endsWith("s") ? 1_000 : p.endsWith("m") ? 60_000
          : p.endsWith("h") ? 3_600_000 : -1;
      String digits = p.replaceAll("(ms|s|m|h)$", "");
      if (unit < 0 || digits.isEmpty() || !digits.chars().allMatch(Character::isDigit)) {
        throw new Args.UsageException("--delays takes a list like 10s,1m,5m,30m,2h");
      }
      delays.add(Long.parseLong(digits) * unit);
    }
    return delays;
  }
}
