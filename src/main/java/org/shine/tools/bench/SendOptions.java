package org.shine.tools.bench;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** The command line of {@code bench send} (a picocli mixin), as given; {@link SendSettings} checks it. */
final class SendOptions {
  static final String DESCRIPTION = "SendMessagePair over C connections, one sender each writing to its own"
      + " recipient: accepted/s, delivered/s, latency percentiles (HdrHistogram), lost and duplicate pushes, CPU and"
      + " transactions per pair; ends with one RESULT key=value line.";

  @Option(names = "--server", required = true, paramLabel = "URL", description = "the senders' server")
  String server;

  @Option(names = "--clients", defaultValue = "50", paramLabel = "C", description = "connections, one sender each")
  int clients;

  @Option(names = "--rate", defaultValue = "0", paramLabel = "R",
      description = "0: a closed loop with W sends in flight per sender; R: an open loop of R pairs/s in all"
          + " (latency from the intended send time)")
  long rate;

  @Option(names = "--window", defaultValue = "10", paramLabel = "W", description = "sends in flight per sender")
  int window;

  @Option(names = "--seconds", defaultValue = "20", paramLabel = "S", description = "seconds measured")
  int seconds;

  @Option(names = "--warmup", defaultValue = "5", paramLabel = "S", description = "seconds of warm-up, not measured")
  int warmup;

  @Option(names = "--body", defaultValue = "200", paramLabel = "BYTES", description = "bytes per body")
  int body;

  @Option(names = "--tag", paramLabel = "TAG", description = "login prefix of the bench's users (default: random)")
  String tag;

  @Option(names = "--recipients", defaultValue = "online", paramLabel = "online|offline",
      description = "each recipient holds a live session on --recipient-node, the first --recipient-server, or"
          + " --server")
  String recipients;

  @Option(names = "--free-on", paramLabel = "arrival|answer",
      description = "a closed loop's slot is freed when the recipient gets the pair (default when online) or on the"
          + " 200 answer (default when offline)")
  String freeOn;

  @Option(names = "--slot-timeout-ms", defaultValue = "10000", paramLabel = "T",
      description = "a slot is freed anyway after T ms")
  long slotTimeoutMs;

  @Option(names = "--grace", defaultValue = "10", paramLabel = "S",
      description = "after the run, how long arrivals are awaited before a pair counts as lost")
  int grace;

  @Option(names = "--recipient-server", paramLabel = "URL",
      description = "recipients live on this server instead (once or twice: federated)")
  List<String> recipientServers = new ArrayList<>();

  @Option(names = "--recipient-node", paramLabel = "URL",
      description = "recipients' sessions on this node of their first server instead (another node of a cluster:"
          + " their cards still name the server's own address)")
  String recipientNode;

  @Option(names = "--sender-sibling", paramLabel = "URL",
      description = "senders have this second server too (pairs are forwarded and synced)")
  String senderSibling;

  @Option(names = "--compression", defaultValue = "none", paramLabel = "offer|none",
      description = "every session offers permessage-deflate, as browsers and Node do")
  String compression;

  @Option(names = "--server-pid", paramLabel = "[NAME=]PID",
      description = "CPU per pair of that process (and of PostgreSQL, the bench); repeatable")
  List<String> serverPids = new ArrayList<>();

  @Option(names = "--db-name", paramLabel = "NAME",
      description = "transactions per pair in that database (pg_stat_database at SHINE_DB_*); repeatable")
  List<String> dbNames = new ArrayList<>();

  @Option(names = "--metrics", defaultValue = "on", paramLabel = "on|off",
      description = "scrape /metrics of every server involved for shine_* counters")
  String metrics;

  @Option(names = "--scenario", defaultValue = "send", paramLabel = "NAME", description = "names the RESULT line")
  String scenario;

  @Option(names = "--flood-rate", defaultValue = "0", paramLabel = "R",
      description = "beside the load, R pairs/s from other senders on --server to a login routed only to"
          + " --flood-peer (issue 16, attack 3); 0: none")
  long floodRate;

  @Option(names = "--flood-peer", defaultValue = "tarpit", paramLabel = "tarpit|answering|dead",
      description = "the flood's recipient server, a listener of the bench: never answers ReceiveIncomingMessage,"
          + " or answers it at once (the control); or dead: one login per --dead-route, each routed only to that"
          + " server, which is down")
  String floodPeer;

  @Option(names = "--dead-route", paramLabel = "LOGIN=URL",
      description = "with --flood-peer dead: a server that is down (a loopback URL where nothing listens); repeat"
          + " for several")
  List<String> deadRoutes = new ArrayList<>();

  @Option(names = "--flood-host", defaultValue = "127.0.0.66", paramLabel = "ADDRESS",
      description = "the loopback address (127.0.0.0/8) the flood's peer listens on; its route is named after it")
  String floodHost;
}
