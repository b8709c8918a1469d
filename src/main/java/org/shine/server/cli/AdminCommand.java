package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigLoader;
import org.shine.server.util.Json;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code admin}: the client of a node's admin API (PROTOCOL §12). Readable tables by default, the API's JSON with
 * {@code --json}. Exit codes: 0 done, 1 the API answered an error or cannot be reached, 2 a usage error.
 */
@Command(name = "admin", mixinStandardHelpOptions = true,
    description = "Read a node's backlog and peers, and make invite codes, through its admin API (admin.port in the"
        + " config).",
    subcommands = {AdminCommand.Peers.class, AdminCommand.Deliveries.class, AdminCommand.RetryPeer.class,
        AdminCommand.User.class, AdminCommand.SyncQuarantine.class, AdminCommand.Invite.class})
public final class AdminCommand implements Callable<Integer> {
  /** Exit code when the API answers an error or cannot be reached. */
  public static final int FAILED = 1;
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @Option(names = "--url", description = "the admin API's base URL, e.g. http://127.0.0.1:7190")
  String url;

  @Option(names = "--config", description = "the server's config file: the API is at admin.host:admin.port")
  Path config;

  @Option(names = "--json", description = "print the API's JSON answer instead of a table")
  boolean json;

  @Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getOut());
    return CommandLine.ExitCode.USAGE;
  }

  private String base() {
    if (url != null) {
      return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }
    if (config == null) {
      throw new CommandLine.ParameterException(spec.commandLine(), "give --config FILE or --url URL");
    }
    AppConfig loaded = ConfigLoader.load(config, System.getenv());
    if (loaded.admin().port() == 0) {
      throw new CommandLine.ParameterException(spec.commandLine(), "the admin API is off in " + config
          + " (admin.port is 0); set admin.port and restart the server");
    }
    String host = loaded.admin().host().contains(":") ? "[" + loaded.admin().host() + "]" : loaded.admin().host();
    return "http://" + host + ":" + loaded.admin().port();
  }

  /** Calls the API; prints the answer as JSON or through {@code table}; the exit code. */
  int call(String method, String path, TablePrinter table) {
    String target = base() + "/admin/v1" + path;
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    HttpResponse<String> response;
    try {
      HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(target)).timeout(TIMEOUT);
      request = method.equals("POST") ? request.POST(HttpRequest.BodyPublishers.noBody()) : request.GET();
      response = HttpClient.newBuilder().connectTimeout(TIMEOUT).build()
          .send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (ConnectException e) {
      err.println("error: cannot reach the admin API at " + target + " (is the server up, and admin.port set?)");
      return CliFailure.UNREACHABLE;
    } catch (IOException e) {
      err.println("error: admin API at " + target + ": " + e);
      return CliFailure.UNREACHABLE;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return FAILED;
    }
    JsonNode body;
    try {
      body = Json.MAPPER.readTree(response.body());
    } catch (IOException e) {
      err.println("error: " + target + " answered " + response.statusCode() + " without JSON");
      return FAILED;
    }
    if (response.statusCode() != 200) {
      if (json) {
        out.println(body.toPrettyString());
      }
      err.println("error: " + response.statusCode() + " " + body.path("error").path("code").asText() + ": "
          + body.path("error").path("message").asText());
      // the exit codes of README: 5 for an unknown user, message or row, as the client's commands
      return response.statusCode() == 404 ? CliFailure.NOT_FOUND : FAILED;
    }
    if (json) {
      out.println(body.toPrettyString());
    } else {
      table.print(body, out);
    }
    out.flush();
    return 0;
  }

  /** Renders one answer as text. */
  interface TablePrinter {
    void print(JsonNode body, PrintWriter out);
  }

  /** Columns padded to their widest cell. */
  static String table(List<String> header, List<List<String>> rows) {
    int[] widths = new int[header.size()];
    List<List<String>> all = new ArrayList<>();
    all.add(header);
    all.addAll(rows);
    for (List<String> row : all) {
      for (int i = 0; i < row.size(); i++) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    StringBuilder text = new StringBuilder();
    for (List<String> row : all) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.size(); i++) {
        line.append(i == row.size() - 1 ? row.get(i) : String.format("%-" + widths[i] + "s  ", row.get(i)));
      }
      text.append(line.toString().stripTrailing()).append('\n');
    }
    return text.toString();
  }

  private static String time(JsonNode ms) {
    return ms == null || ms.isNull() ? "-" : Instant.ofEpochMilli(ms.asLong()).toString();
  }

  private static String text(JsonNode value) {
    return value == null || value.isNull() || value.isMissingNode() ? "-" : value.asText();
  }

  /** {@code admin peers}. */
  @Command(name = "peers", mixinStandardHelpOptions = true,
      description = "This node's connections to other servers: state, last error, backoff, calls in flight.")
  static final class Peers implements Callable<Integer> {
    @ParentCommand
    AdminCommand admin;

    @Override
    public Integer call() {
      return admin.call("GET", "/peers", (body, out) -> {
        List<List<String>> rows = new ArrayList<>();
        for (JsonNode peer : body.path("peers")) {
          String state = peer.path("down").asBoolean() ? "down" : !peer.path("connected").asBoolean() ? "closed"
              : peer.path("authenticated").asBoolean() ? "authenticated" : "connected";
          rows.add(List.of(text(peer.get("serverLogin")), text(peer.get("url")), state,
              peer.path("backoffMs").asLong() == 0 ? "-" : peer.path("backoffMs").asLong() + " ms",
              text(peer.get("inFlight")), text(peer.get("waiting")), text(peer.get("lastError"))));
        }
        out.print(table(List.of("PEER", "URL", "STATE", "BACKOFF", "IN FLIGHT", "WAITING", "LAST ERROR"), rows));
        out.println(rows.size() + " peer connection(s) on " + text(body.get("serverLogin")));
      });
    }
  }

  /** {@code admin deliveries}. */
  @Command(name = "deliveries", mixinStandardHelpOptions = true,
      description = "Accepted or failed deliveries, oldest first, with their attempt and next due time.")
  static final class Deliveries implements Callable<Integer> {
    @ParentCommand
    AdminCommand admin;

    @Option(names = "--state", defaultValue = "accepted", description = "accepted or failed (default: accepted)")
    String state;

    @Option(names = "--limit", defaultValue = "50", description = "at most this many rows, 1 to 1000 (default 50)")
    int limit;

    @Override
    public Integer call() {
      return admin.call("GET", "/deliveries?state=" + URLEncoder.encode(state, StandardCharsets.UTF_8)
          + "&limit=" + limit, (body, out) -> {
            List<List<String>> rows = new ArrayList<>();
            for (JsonNode row : body.path("deliveries")) {
              rows.add(List.of(text(row.get("owner")), text(row.get("recipient")), text(row.get("state")),
                  text(row.get("attempts")), text(row.get("nextAttempt")), time(row.get("nextAttemptAtMs")),
                  time(row.get("acceptedAtMs")), text(row.get("baseKey")) + " r" + text(row.get("revision"))));
            }
            out.print(table(List.of("FROM", "TO", "STATE", "ATTEMPTS", "NEXT", "NEXT DUE", "ACCEPTED", "MESSAGE"),
                rows));
            out.println(rows.size() + " " + text(body.get("state")) + " deliveries");
          });
    }
  }

  /** {@code admin retry-peer SERVER}. */
  @Command(name = "retry-peer", mixinStandardHelpOptions = true,
      description = "Attempt now every accepted delivery routed to that server (as if it had just come back).")
  static final class RetryPeer implements Callable<Integer> {
    @ParentCommand
    AdminCommand admin;

    @Parameters(paramLabel = "SERVER", description = "the serverLogin")
    String serverLogin;

    @Override
    public Integer call() {
      return admin.call("POST", "/deliveries/retry-peer/" + URLEncoder.encode(serverLogin, StandardCharsets.UTF_8), (body, out) -> out.println(
          text(body.get("claimed")) + " accepted deliveries routed to " + text(body.get("serverLogin")) + " ("
              + text(body.get("url")) + ") attempted now"));
    }
  }

  /** {@code admin user LOGIN}. */
  @Command(name = "user", mixinStandardHelpOptions = true,
      description = "A user's card, routes, sessions on this node and unsynced outbox items per sibling.")
  static final class User implements Callable<Integer> {
    @ParentCommand
    AdminCommand admin;

    @Parameters(paramLabel = "LOGIN", description = "the user's login")
    String login;

    @Override
    public Integer call() {
      return admin.call("GET", "/users/" + URLEncoder.encode(login, StandardCharsets.UTF_8), (body, out) -> {
        out.println("user      " + text(body.get("login")) + (body.path("servedHere").asBoolean()
            ? " (served here)" : " (not served here)"));
        out.println("card      version " + text(body.path("card").get("version")) + ", key "
            + text(body.path("card").get("publicKeyB64")));
        out.println("sessions  " + text(body.get("sessions")) + " on this node");
        List<List<String>> rows = new ArrayList<>();
        for (JsonNode route : body.path("routes")) {
          JsonNode unsynced = body.path("unsyncedBySibling").get(route.path("serverLogin").asText());
          rows.add(List.of(text(route.get("serverLogin")), text(route.get("url")), unsynced == null ? "-"
              : unsynced.asText()));
        }
        out.print(table(List.of("ROUTE", "URL", "UNSYNCED"), rows));
        for (Map.Entry<String, JsonNode> extra : body.path("unsyncedBySibling").properties()) {
          if (rows.stream().noneMatch(row -> row.get(0).equals(extra.getKey()))) {
            out.println("unsynced for " + extra.getKey() + ": " + extra.getValue().asText());
          }
        }
      });
    }
  }

  /** {@code admin sync-quarantine}. */
  @Command(name = "sync-quarantine", mixinStandardHelpOptions = true,
      description = "Items pulled from a sibling that were ACKed but could not be stored, oldest first, with why.")
  static final class SyncQuarantine implements Callable<Integer> {
    @ParentCommand
    AdminCommand admin;

    @Option(names = "--owner", description = "only this user's items")
    String owner;

    @Option(names = "--limit", defaultValue = "50", description = "at most this many items, 1 to 1000 (default 50)")
    int limit;

    @Option(names = "--after", defaultValue = "0", description = "only items after this id (the nextAfterId shown)")
    long afterId;

    @Override
    public Integer call() {
      String query = "/sync-quarantine?limit=" + limit + "&afterId=" + afterId
          + (owner == null ? "" : "&owner=" + URLEncoder.encode(owner, StandardCharsets.UTF_8));
      return admin.call("GET", query, (body, out) -> {
        List<List<String>> rows = new ArrayList<>();
        for (JsonNode item : body.path("items")) {
          rows.add(List.of(text(item.get("id")), text(item.get("owner")), text(item.get("author")),
              text(item.get("sourceServerLogin")), text(item.get("type")), text(item.get("syncId")),
              text(item.get("reason")), time(item.get("receivedAtMs")), text(item.get("detail"))));
        }
        out.print(table(List.of("ID", "OWNER", "AUTHOR", "FROM", "TYPE", "SYNC ID", "REASON", "RECEIVED", "DETAIL"),
            rows));
        JsonNode next = body.get("nextAfterId");
        out.println(rows.size() + " quarantined item(s)" + (next == null || next.isNull() ? ""
            : "; more may follow: --after " + next.asText()));
      });
    }
  }

  /** {@code admin invite}. */
  @Command(name = "invite", mixinStandardHelpOptions = true,
      description = {"Make a one-time invite code for a new user of this server.",
          "With directory.registration \"invite\", a new user registers here with it (client register --invite CODE).",
          "Only its hash is kept; it is shown once."})
  static final class Invite implements Callable<Integer> {
    @ParentCommand
    AdminCommand admin;

    @Option(names = "--expires-in-s", defaultValue = "604800", paramLabel = "S",
        description = "valid for S seconds, 60 to 604800 (7 days, the default)")
    long expiresInS;

    @Override
    public Integer call() {
      return admin.call("POST", "/invites?expiresInS=" + expiresInS, (body, out) -> {
        out.println(text(body.get("code")));
        out.println("one use, valid until " + time(body.get("expiresAtMs")) + " (directory.registration here: "
            + text(body.get("registration")) + ")");
      });
    }
  }
}
