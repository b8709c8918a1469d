package org.shine.tools.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.shine.server.cli.CliContext;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.KeyFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Benchmarks: {@code bench codec} (container parse + signature verify, one thread), {@code bench send}
 * ({@link SendBench}: SendMessagePair over many WebSocket connections to live recipient sessions) and the others
 * below. Latency percentiles come from HdrHistogram; long runs report progress on stderr.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, description = "Benchmarks.",
    subcommands = {
        BenchCommand.Codec.class,
        BenchCommand.Send.class,
        BenchCommand.RetryClaim.class,
        BenchCommand.SyncPage.class,
        BenchCommand.CatchUp.class,
        BenchCommand.HubThroughput.class,
        BenchCommand.HubPolls.class,
        BenchCommand.Sessions.class,
        BenchCommand.SlowReader.class,
        BenchCommand.Spam.class,
        HelpCommand.class,
    })
public final class BenchCommand {
  private BenchCommand() {
  }

  @Command(name = "codec", mixinStandardHelpOptions = true,
      description = "Parse + verify N signed containers on one thread.")
  static final class Codec implements Callable<Integer> {
    @Option(names = "--count", defaultValue = "20000", paramLabel = "N", description = "containers (default 20000)")
    int count;

    @Override
    public Integer call() {
      return codec(count);
    }
  }

  @Command(name = "send", mixinStandardHelpOptions = true, description = SendOptions.DESCRIPTION)
  static final class Send implements Callable<Integer> {
    @Mixin
    SendOptions options;

    private final CliContext context;

    Send(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      return SendBench.run(options, context);
    }
  }

  @Command(name = "retry-claim", mixinStandardHelpOptions = true,
      description = {"Time the retry worker's claim of D due rows beside N terminal rows (fresh database NAME,",
          "PostgreSQL from SHINE_DB_* or 127.0.0.1:5432 postgres)."})
  static final class RetryClaim implements Callable<Integer> {
    @Option(names = "--terminal", defaultValue = "1000000", paramLabel = "N", description = "terminal rows")
    long terminal;

    @Option(names = "--due", defaultValue = "1000", paramLabel = "D", description = "due rows")
    int due;

    @Option(names = "--rounds", defaultValue = "20", paramLabel = "R", description = "claims timed")
    int rounds;

    @Option(names = "--db-name", defaultValue = "shine_bench_retry", paramLabel = "NAME", description = "database")
    String dbName;

    @Override
    public Integer call() {
      return RetryClaimBench.run(terminal, due, rounds, dbName);
    }
  }

  @Command(name = "sync-page", mixinStandardHelpOptions = true,
      description = {"Time the source's DmSyncBatch and UserSettingsSyncBatch page beside N synced outbox items",
          "(fresh database NAME, PostgreSQL from SHINE_DB_* or 127.0.0.1:5432 postgres)."})
  static final class SyncPage implements Callable<Integer> {
    @Option(names = "--synced", defaultValue = "1000000", paramLabel = "N", description = "synced items")
    long synced;

    @Option(names = "--pending", defaultValue = "1000", paramLabel = "P", description = "unsynced items")
    int pending;

    @Option(names = "--owners", defaultValue = "1000", paramLabel = "U",
        description = "users routed to this server and the puller")
    int owners;

    @Option(names = "--limit", defaultValue = "201", paramLabel = "L",
        description = "items asked of a page (sync.pageSize + 1, as the source asks)")
    int limit;

    @Option(names = "--rounds", defaultValue = "50", paramLabel = "R", description = "pages timed")
    int rounds;

    @Option(names = "--db-name", defaultValue = "shine_bench_syncpage", paramLabel = "NAME",
        description = "database")
    String dbName;

    @Override
    public Integer call() {
      return SyncPageBench.run(synced, pending, owners, limit, rounds, dbName);
    }
  }

  @Command(name = "catchup", mixinStandardHelpOptions = true,
      description = {"Two servers in-process; the second is down while N pairs are written on the first, then the",
          "time until it holds them all is measured."})
  static final class CatchUp implements Callable<Integer> {
    @Option(names = "--items", defaultValue = "100000", paramLabel = "N", description = "pairs written")
    long items;

    @Option(names = "--clients", defaultValue = "32", paramLabel = "C", description = "connections writing")
    int clients;

    private final CliContext context;

    CatchUp(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() throws Exception {
      return CatchUpBench.run(items, clients, context);
    }
  }

  @Command(name = "hub-throughput", mixinStandardHelpOptions = true,
      description = "Events/s through the hub and the reference adapter.")
  static final class HubThroughput implements Callable<Integer> {
    @Option(names = "--server", required = true, paramLabel = "URL", description = "ws://host:port/ws")
    String server;

    @Option(names = "--events", defaultValue = "2000", paramLabel = "N", description = "events sent")
    int events;

    private final CliContext context;

    HubThroughput(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() throws Exception {
      return HubBench.throughput(server, events, context);
    }
  }

  @Command(name = "hub-polls", mixinStandardHelpOptions = true,
      description = {"N concurrent long polls on one server (each renewed as it ends): heap per poll after a full GC,",
          "fds, the server's CPU while they wait, and the wake-up latency of W events alone vs beside them."})
  static final class HubPolls implements Callable<Integer> {
    @Option(names = "--server", required = true, paramLabel = "URL", description = "ws://host:port/ws")
    String server;

    @Option(names = "--polls", defaultValue = "5000", paramLabel = "N", description = "long polls held")
    int polls;

    @Option(names = "--wake", defaultValue = "200", paramLabel = "W", description = "polls woken by a send")
    int wake;

    @Option(names = "--server-pid", paramLabel = "PID", description = "the server process: heap, histogram, fds, CPU")
    Long serverPid;

    @Option(names = "--db-name", paramLabel = "NAME", description = "the server's database (its backends' CPU)")
    String dbName;

    @Option(names = "--top", defaultValue = "20", paramLabel = "T",
        description = "classes of the heap histogram's growth shown (0: no histogram)")
    int top;

    private final CliContext context;

    HubPolls(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() throws Exception {
      return HubBench.polls(server, polls, wake, serverPid, dbName, top, context);
    }
  }

  @Command(name = "sessions", mixinStandardHelpOptions = true, description = SessionsBench.DESCRIPTION)
  static final class Sessions implements Callable<Integer> {
    @Mixin
    SessionsBench.Options options;

    private final CliContext context;

    Sessions(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() throws Exception {
      return SessionsBench.run(options, context);
    }
  }

  @Command(name = "slow-reader", mixinStandardHelpOptions = true,
      description = {"A recipient session that never reads while N messages of B bytes are sent to it: how the",
          "sends are answered, whether the server closes the silent session, its heap after GC before and after."})
  static final class SlowReader implements Callable<Integer> {
    @Option(names = "--server", required = true, paramLabel = "URL", description = "ws://host:port/ws")
    String server;

    @Option(names = "--events", defaultValue = "6000", paramLabel = "N", description = "messages sent")
    int events;

    @Option(names = "--bytes", defaultValue = "30000", paramLabel = "B", description = "bytes per message")
    int bytes;

    @Option(names = "--server-pid", paramLabel = "PID", description = "the server process, for its heap")
    String serverPid;

    @Override
    public Integer call() throws Exception {
      return SlowReaderBench.run(server, events, bytes, serverPid);
    }
  }

  @Command(name = "spam", mixinStandardHelpOptions = true, description = SpamBench.DESCRIPTION)
  static final class Spam implements Callable<Integer> {
    @Mixin
    SpamBench.Options options;

    @Override
    public Integer call() {
      return SpamBench.run(options);
    }
  }

  private static int codec(int count) {
    KeyFile key = KeyFile.generate("alice");
    byte[] body = new byte[256];
    List<byte[]> blobs = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      blobs.add(DmCodec.sign(DmKind.OUTGOING, System.currentTimeMillis(), i, 0, "alice", "bob", "", body,
          key.privateKey()).bytes());
    }
    for (int round = 0; round < 3; round++) {
      long parseStart = System.nanoTime();
      List<DmContainer> parsed = new ArrayList<>(count);
      for (byte[] blob : blobs) {
        try {
          parsed.add(DmCodec.parse(blob));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
      long parseEnd = System.nanoTime();
      int valid = 0;
      for (DmContainer container : parsed) {
        valid += container.verifySignature(key.publicKey()) ? 1 : 0;
      }
      long verifyEnd = System.nanoTime();
      var decoded = org.shine.server.dm.Ed25519Signer.publicKey(key.publicKey());
      for (DmContainer container : parsed) {
        valid += container.verifySignature(decoded) ? 1 : 0;
      }
      long decodedEnd = System.nanoTime();
      if (valid != 2 * count) {
        throw new IllegalStateException("only " + valid + " of " + 2 * count + " signatures verified");
      }
      System.out.printf(Locale.ROOT, "round %d: parse %.0f containers/s, verify %.0f signatures/s (%.0f/s with the"
              + " key decoded once, as the server does), parse+verify %.0f containers/s (%d containers of %d-byte"
              + " body, 1 thread)%n", round + 1,
          count / seconds(parseStart, parseEnd), count / seconds(parseEnd, verifyEnd),
          count / seconds(verifyEnd, decodedEnd), count / seconds(parseStart, verifyEnd), count, body.length);
    }
    return 0;
  }

  private static double seconds(long startNanos, long endNanos) {
    return (endNanos - startNanos) / 1e9;
  }
}
