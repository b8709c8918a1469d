package org.shine.tools.chaos;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.shine.server.cli.CliFailure;

/**
 * The options of one {@code chaos load} run, checked: the scenario's name, each server's nodes (a server's WebSocket
 * URL, or the URLs of its nodes), the routes cards name, the users, rate, window, load and settle times, the tag in
 * the users' logins, and the file that says the script's faults are over.
 */
record ChaosSettings(String scenario, List<List<String>> senderNodes, List<List<String>> recipientNodes,
    Map<String, String> routes, int users, long rate, int window, int seconds, int settleS, boolean bothSenders,
    long requestTimeoutMs, String tag, Path faultsDone) {

  static ChaosSettings of(String scenario, List<String> senderServers, List<String> recipientServers,
      List<String> routeOptions, int users, long rate, int window, int seconds, int settleS, String bothSenders,
      long requestTimeoutMs, String tag, Path faultsDone) {
    List<List<String>> senders = nodes(senderServers, "sender-server");
    List<List<String>> recipients = nodes(recipientServers, "recipient-server");
    Map<String, String> routes = new HashMap<>();
    for (String route : routeOptions) {
      int eq = route.indexOf('=');
      if (eq <= 0) {
        throw CliFailure.usage("--route takes LOGIN=URL: " + route);
      }
      routes.put(route.substring(0, eq), route.substring(eq + 1));
    }
    if (!bothSenders.equals("on") && !bothSenders.equals("off")) {
      throw CliFailure.usage("--both-senders takes on or off");
    }
    ChaosSettings settings = new ChaosSettings(scenario, senders, recipients, routes, users, rate, window, seconds, settleS,
        bothSenders.equals("on"), requestTimeoutMs, tag, faultsDone);
    if (settings.bothSenders() && senders.size() != 2) {
      throw CliFailure.usage("--both-senders on needs two --sender-server");
    }
    if (settings.users() < 1 || settings.rate() < 1 || settings.window() < 1 || settings.seconds() < 1) {
      throw CliFailure.usage("--users, --rate, --window and --seconds must be positive");
    }
    if (!settings.tag().matches("[a-z0-9]{1,12}")) {
      throw CliFailure.usage("--tag takes 1-12 lower-case letters or digits");
    }
    return settings;
  }

  private static List<List<String>> nodes(List<String> values, String option) {
    if (values.isEmpty() || values.size() > 2) {
      throw CliFailure.usage("--" + option + " must be given once or twice");
    }
    return values.stream().map(v -> List.of(v.split(","))).toList();
  }
}
