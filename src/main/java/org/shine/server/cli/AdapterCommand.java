package org.shine.server.cli;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.http.HttpConnectTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.shine.server.adapter.CommandHandler;
import org.shine.server.adapter.EventHandler;
import org.shine.server.adapter.HubAdapter;
import org.shine.server.adapter.HubClient;
import org.shine.server.adapter.Inbox;
import org.shine.server.adapter.PrintHandler;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code adapter run|dead|retry-dead}: the reference hub adapter from the shell. */
@Command(name = "adapter", mixinStandardHelpOptions = true,
    description = "The reference hub adapter: receive a user's events over HTTP into a local inbox, process them.",
    subcommands = {AdapterCommand.Run.class, AdapterCommand.Dead.class, AdapterCommand.RetryDead.class,
        AdapterCommand.Rejected.class, HelpCommand.class})
final class AdapterCommand {
  private AdapterCommand() {
  }

  /** Where the inbox lives. */
  static final class InboxOptions {
    @Option(names = "--inbox", paramLabel = "FILE", description = "a SQLite file (default adapter-inbox.db)")
    String file;

    @Option(names = "--jdbc", paramLabel = "URL", description = "a JDBC URL instead (PostgreSQL too)")
    String jdbc;

    Inbox open() {
      try {
        return Inbox.open(jdbc != null ? jdbc : file != null ? file : "adapter-inbox.db");
      } catch (Exception e) {
        throw new CliFailure(CliFailure.FAILED, "cannot open the inbox: " + CliErrors.describe(e));
      }
    }
  }

  @Command(name = "run", mixinStandardHelpOptions = true,
      description = {"Receive events into the inbox (commit, then ACK) and process them with retries.",
          "An event whose container does not verify against its author's card, or whose encrypted body does not open",
          "with the key file's encryption keys, is rejected (see: adapter rejected), never processed."})
  static final class Run implements Callable<Integer> {
    @Option(names = "--server", required = true, paramLabel = "URL",
        description = "the server serving the user: http://host:port (its ws://host:port/ws URL works too)")
    String server;

    @Option(names = "--key", required = true, paramLabel = "FILE", description = {"the user's key file: its device"
        + " key logs in; its encryption keys (format 2) open encrypted bodies, which a file without them passes on"
        + " as the server has them"})
    Path keyFile;

    @Option(names = "--login", paramLabel = "LOGIN", description = "the user (default: the login in the key file)")
    String login;

    @Option(names = "--server-login", paramLabel = "NAME", description = "the server's name (default: as it says)")
    String serverLogin;

    @Mixin
    InboxOptions inbox;

    @Option(names = "--wait", defaultValue = "25", paramLabel = "S", description = "long-poll seconds; 0 short-polls")
    long waitS;

    @ArgGroup(exclusive = true)
    Output output;

    @Option(names = "--delays", paramLabel = "LIST", description = "retry delays, e.g. 10s,1m,5m,30m,2h")
    String delays;

    @Option(names = "--status-every", defaultValue = "10", paramLabel = "S", description = "status line period")
    long statusEveryS;

    private final CliContext context;

    Run(CliContext context) {
      this.context = context;
    }

    /** What is done with each event. */
    static final class Output {
      @Option(names = "--exec", paramLabel = "COMMAND", description = "run COMMAND per event (stdin = the event)")
      String exec;

      @Option(names = "--out", paramLabel = "FILE", description = "append each event to FILE")
      Path out;
    }

    @Override
    public Integer call() throws Exception {
      ClientSupport.Identity user = ClientSupport.identity(keyFile, login);
      HubAdapter.Settings settings = new HubAdapter.Settings(httpUrl(server), serverLogin, user.login(), user.key(),
          waitS, AdapterCommand.delays(delays), 60_000, 500, Duration.ofSeconds(statusEveryS));
      HubAdapter adapter = new HubAdapter(settings, inbox.open(), handler());
      try {
        adapter.start();
      } catch (ConnectException | HttpConnectTimeoutException e) {
        throw new CliFailure(CliFailure.UNREACHABLE, "cannot reach the hub at " + settings.serverHttpUrl()
            + ": " + (e.getMessage() == null ? "connection refused" : e.getMessage()));
      } catch (HubClient.HubRefusedException e) {
        throw new CliFailure(e.status() == 404 ? CliFailure.NOT_FOUND : CliFailure.LOGIN_REFUSED, "the hub at "
            + settings.serverHttpUrl() + " refused the login of " + user.login() + ": " + CliErrors.describe(e)
            + (e.status() == 404 || e.status() == 421 ? " (is it a server of " + user.login() + "?)" : ""));
      } catch (IOException e) {
        throw new CliFailure(CliFailure.UNREACHABLE, "cannot reach the hub at " + settings.serverHttpUrl() + ": "
            + CliErrors.describe(e));
      }
      context.onStop(() -> {
        try {
          adapter.stop();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      context.err().println("adapter receiving for " + user.login() + " from " + settings.serverHttpUrl()
          + " (Ctrl-C to stop)");
      adapter.awaitTermination();
      return 0;
    }

    private EventHandler handler() throws IOException {
      if (output != null && output.exec != null) {
        return new CommandHandler(output.exec);
      }
      if (output != null && output.out != null) {
        return new PrintHandler(new PrintStream(new FileOutputStream(output.out.toFile(), true), true,
            StandardCharsets.UTF_8));
      }
      return new PrintHandler(new PrintStream(System.out, true, StandardCharsets.UTF_8));
    }
  }

  @Command(name = "dead", mixinStandardHelpOptions = true, description = "List events that used up every retry.")
  static final class Dead implements Callable<Integer> {
    @Mixin
    InboxOptions inbox;

    private final CliContext context;

    Dead(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() throws Exception {
      for (Inbox.Row row : inbox.open().dead()) {
        context.out().println(row.eventKey() + "\tattempts " + row.attempts() + "\t" + row.lastError());
      }
      return 0;
    }
  }

  @Command(name = "rejected", mixinStandardHelpOptions = true,
      description = "List events rejected because their container does not verify against its author's card or"
          + " their encrypted body does not open.")
  static final class Rejected implements Callable<Integer> {
    @Mixin
    InboxOptions inbox;

    private final CliContext context;

    Rejected(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() throws Exception {
      for (Inbox.Row row : inbox.open().rejected()) {
        context.out().println(row.eventKey() + "\t" + row.lastError());
      }
      return 0;
    }
  }

  @Command(name = "retry-dead", mixinStandardHelpOptions = true, description = "Put dead events back for processing.")
  static final class RetryDead implements Callable<Integer> {
    @Mixin
    InboxOptions inbox;

    private final CliContext context;

    RetryDead(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() throws Exception {
      context.out().println(inbox.open().retryDead(System.currentTimeMillis()) + " events back to pending");
      return 0;
    }
  }

  /** {@code http://host:port} of a server given by that or by its {@code ws://host:port/ws} URL. */
  static String httpUrl(String server) {
    String url = server.replaceFirst("^ws(s?)://", "http$1://").replaceAll("/ws/?$", "");
    if (!url.startsWith("http://") && !url.startsWith("https://")) {
      throw CliFailure.usage("--server takes the server's http://host:port (or its ws:// URL): " + server);
    }
    return url;
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
        throw CliFailure.usage("--delays takes a list like 10s,1m,5m,30m,2h");
      }
      delays.add(Long.parseLong(digits) * unit);
    }
    return delays;
  }
}
