package org.shine.tools.soak;

import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.shine.tools.ledger.LedgerResult;
import org.shine.tools.ledger.MessageLedger;
import org.shine.tools.soak.HeapSampler.Sample;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code soak}: a bounded mixed load against four running servers (senders' routes [s1, s2], recipients' [s3, s4]) —
 * signed sends, edits, read receipts, tombstones ({@link SoakLoad}) and hub long polls ({@link HubPollers}) — with
 * one server restarted (SIGTERM, then the same command on the same database) every few minutes ({@link Restarts}),
 * a progress line every 10 s and, after the load settles ({@link Settlement}), the {@link MessageLedger} and the
 * servers' heap after GC and open descriptors ({@link HeapSampler}) against their level at the baseline ({@link
 * SoakReport}). This class holds the options and the run's order. The servers run from {@code --run-dir}: {@code
 * sN.json}, {@code sN.pid} (kept current across restarts), {@code sN.log}; a restarted one runs from {@code
 * --server-jar}. Exits 1 on a loss, a duplicate, a wrong entry or growth beyond the bound.
 */
@Command(name = "soak", mixinStandardHelpOptions = true, description = {
    "A bounded mixed load with restarts against four running servers (scripts/soak.sh starts them).",
    "Half sends, a fifth edits, a fifth receipts, a tenth deletes, and hub polls, with a server restarted every few"
        + " minutes; a progress line every 10 s, then the ledger and heap after GC and descriptors against their"
        + " baseline. Exit 1 on a loss, a duplicate, a wrong entry or growth beyond 20 %%."})
public final class SoakCommand implements Callable<Integer> {
  @Option(names = "--server", required = true, paramLabel = "NAME=URL",
      description = "four times: the senders' two servers, then the recipients' two")
  List<String> serverOptions;

  @Option(names = "--run-dir", required = true, paramLabel = "DIR",
      description = "where sN.json, sN.pid and sN.log of the servers are")
  Path runDir;

  @Option(names = "--server-jar", paramLabel = "JAR",
      description = "the product's jar a restarted server runs from (shine-server.jar beside this jar)")
  Path serverJar;

  @Option(names = "--seconds", defaultValue = "3600", paramLabel = "S", description = "seconds of load (3600)")
  long seconds;

  @Option(names = "--baseline-s", paramLabel = "B",
      description = "the baseline of heap and descriptors, B s in (300; a third of S when S < 900)")
  Long baselineS;

  @Option(names = "--restart-every-s", defaultValue = "180", paramLabel = "R",
      description = "every R s the next server of --restart is stopped and started again (180; 0: never)")
  long restartEveryS;

  @Option(names = "--restart", paramLabel = "s2,s3,s4,s1", description = "the order of the restarts")
  String restart;

  @Option(names = "--users", defaultValue = "20", paramLabel = "U", description = "sender/recipient pairs (20)")
  int users;

  @Option(names = "--rate", defaultValue = "20", paramLabel = "OPS", description = "operations/s (20)")
  int rate;

  @Option(names = "--hub-users", defaultValue = "4", paramLabel = "H",
      description = "recipients that also poll their other server's hub (4)")
  int hubUsers;

  @Option(names = "--settle-s", defaultValue = "180", paramLabel = "T",
      description = "seconds for everything to settle after the load (180)")
  long settleS;

  @Option(names = "--java-opts", defaultValue = "", paramLabel = "\"...\"",
      description = "JVM options of a restarted server")
  String javaOpts;

  private static final long PROGRESS_MS = 10_000;

  @Override
  public Integer call() {
    SoakSettings settings = SoakSettings.of(this);
    Vertx vertx = Vertx.vertx();
    try {
      return new Run(settings, vertx).soak();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    } finally {
      vertx.close().await();
    }
  }

  /** The parts of one run, made when the command runs (picocli builds every subcommand for any command line). */
  private static final class Run {
    final Vertx vertx;
    final SoakSettings settings;
    final MessageLedger ledger = new MessageLedger();
    final SoakCounters counters = new SoakCounters();
    final ServerProcesses servers;
    final SoakUsers users;
    final HubPollers hub;
    final Restarts restarts;
    final HeapSampler heap;
    final SoakReport report;

    Run(SoakSettings settings, Vertx vertx) {
      this.settings = settings;
      servers = new ServerProcesses(settings);
      users = new SoakUsers(vertx, settings, ledger);
      hub = new HubPollers(settings, counters);
      restarts = new Restarts(settings, servers);
      heap = new HeapSampler(settings, servers);
      report = new SoakReport(settings, counters, servers, heap, restarts, hub);
      this.vertx = vertx;
    }

    int soak() throws InterruptedException {
      users.prepare();
      hub.start(users.pairs());
      long startMs = System.currentTimeMillis();
      report.started(startMs);
      restarts.start(startMs);
      heap.start();
      SoakLoad load = new SoakLoad(vertx, settings.rate(), users.pairs(), ledger, counters);
      load.start();
      Map<String, Sample> baseline = underLoad(startMs, load);
      load.stop();
      heap.stop();
      restarts.stop();
      System.out.println("load ended; waiting for every server, the answers in flight and the deliveries to settle");
      settings.names().forEach(servers::awaitHealthy);
      load.awaitInFlight();
      Settlement settlement = new Settlement(settings, users, ledger, hub);
      LedgerResult result = settlement.settle(report::elapsed);
      hub.stop();
      users.reconnectAll();
      Map<String, Sample> last = heap.sampleAll("end", report.elapsed());
      return report.report(result, settlement.hubMissing(), baseline, last);
    }

    /** Until the load's end: a progress line every 10 s, and the baseline sample once due and no restart is on. */
    private Map<String, Sample> underLoad(long startMs, SoakLoad load) throws InterruptedException {
      Map<String, Sample> baseline = null;
      long end = startMs + TimeUnit.SECONDS.toMillis(settings.seconds());
      long baselineAt = startMs + TimeUnit.SECONDS.toMillis(settings.baselineS());
      long nextProgress = startMs + PROGRESS_MS;
      while (System.currentTimeMillis() < end) {
        SoakThreads.sleepUntil(Math.min(nextProgress, end));
        if (System.currentTimeMillis() >= nextProgress) {
          report.progress(load.inFlight());
          while (nextProgress <= System.currentTimeMillis()) {
            nextProgress += PROGRESS_MS;
          }
        }
        // a baseline of a server that is down or just starting would measure the restart, not the level
        if (baseline == null && System.currentTimeMillis() >= baselineAt && !restarts.restarting()) {
          baseline = heap.sampleAll("baseline", report.elapsed());
          if (baseline.values().stream().anyMatch(sample -> sample.heapKb() < 0 || sample.fds() < 0)) {
            System.out.println("baseline incomplete (a server is not answering); again in 10 s");
            baseline = null;
          }
        }
      }
      return baseline;
    }
  }
}
