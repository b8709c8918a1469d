package org.shine.tools.soak;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.shine.server.cli.CliFailure;

/**
 * The options of one soak run, checked: the four servers (senders' two, then recipients' two), where they run from,
 * the load's length, rate and users, the restarts and the jar a restarted server runs.
 */
record SoakSettings(Map<String, String> servers, Path runDir, Path serverJar, long seconds, long baselineS,
    long restartEveryS, List<String> restartOrder, int users, int rate, int hubUsers, long settleS,
    List<String> javaOpts) {

  /**
   * The command line's options as given ({@code --baseline-s}, {@code --restart} and {@code --server-jar} may be
   * missing); the server jar is needed, and looked for, only when servers are restarted.
   */
  static SoakSettings of(SoakCommand options) {
    Map<String, String> servers = servers(options.serverOptions);
    long seconds = options.seconds;
    long baseline = options.baselineS != null ? options.baselineS : seconds >= 900 ? 300 : seconds / 3;
    List<String> order = Arrays.stream((options.restart != null ? options.restart
        : String.join(",", rotation(servers))).split(",")).map(String::trim).filter(name -> !name.isEmpty()).toList();
    for (String name : order) {
      if (!servers.containsKey(name)) {
        throw CliFailure.usage("--restart names an unknown server: " + name);
      }
    }
    String opts = options.javaOpts.trim();
    SoakSettings settings = new SoakSettings(servers, options.runDir,
        options.serverJar != null || options.restartEveryS == 0 ? options.serverJar
            : ServerProcesses.siblingServerJar(), seconds, baseline,
        options.restartEveryS, order, options.users, options.rate, options.hubUsers, options.settleS,
        opts.isEmpty() ? List.of() : List.of(opts.split("\\s+")));
    settings.check();
    return settings;
  }

  private static Map<String, String> servers(List<String> serverOptions) {
    Map<String, String> servers = new LinkedHashMap<>();
    for (String server : serverOptions) {
      int eq = server.indexOf('=');
      if (eq <= 0) {
        throw CliFailure.usage("--server takes NAME=URL: " + server);
      }
      servers.put(server.substring(0, eq), server.substring(eq + 1));
    }
    if (servers.size() != 4) {
      throw CliFailure.usage("soak needs four --server NAME=URL (senders' two, then recipients' two)");
    }
    return servers;
  }

  private void check() {
    if (seconds < 1 || baselineS < 1 || baselineS >= seconds || restartEveryS < 0 || users < 1 || rate < 1
        || hubUsers < 0 || hubUsers > users || settleS < 1) {
      throw CliFailure.usage("bad soak options: S and T ≥ 1, 1 ≤ B < S, R ≥ 0, U and OPS ≥ 1, 0 ≤ H ≤ U");
    }
  }

  /** s2, s3, s4, s1: the sender's first server last, as it holds the most sessions. */
  private static List<String> rotation(Map<String, String> servers) {
    List<String> names = new ArrayList<>(servers.keySet());
    names.add(names.remove(0));
    return names;
  }

  List<String> names() {
    return List.copyOf(servers.keySet());
  }

  String url(int index) {
    return servers.get(names().get(index));
  }

  /** The HTTP base of a server's WebSocket URL ({@code ws://h:p/ws} → {@code http://h:p}). */
  static String httpOf(String wsUrl) {
    return wsUrl.replaceFirst("^ws", "http").replaceAll("/ws$", "");
  }
}
