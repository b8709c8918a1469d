package org.shine.tools.bench;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import org.HdrHistogram.Histogram;
import org.shine.tools.bench.SendBench.Sample;
import org.shine.tools.bench.SendBench.Setup;
import org.shine.tools.bench.SendRun.Sender;
import org.shine.tools.probe.ProcessCpu;
import org.shine.tools.probe.ProcessSyscalls;

/**
 * The report of one {@code bench send} run: what users saw (accepted and delivered per second, latencies, lost and
 * duplicate pushes, errors), the cost per pair (CPU per process, transactions per database, the servers' own
 * counters) and the one {@code RESULT key=value ...} line that {@code scripts/bench.sh} reads; its exit code is 0
 * only when nothing failed, was lost, repeated or left unanswered.
 */
final class SendReport {
  private SendReport() {
  }

  /** Prints the report and answers the run's exit code. */
  static int report(SendSettings settings, Setup setup, SendRun run, Sample before, Sample after,
      ProcessCpu cpu, long openSessions, FloodLoad flood) {
    double window = settings.seconds();
    long accepted = run.acceptedInWindow.sum();
    long delivered = run.deliveredInWindow.sum();
    // the unit of cost: a pair that reached its recipient; with nobody online, a pair accepted
    long pairs = settings.recipientsOnline() ? delivered : accepted;
    String unit = settings.recipientsOnline() ? "delivered pair" : "accepted pair";
    Histogram arrival = run.arrivalMicros();
    Histogram accept = run.acceptMicros();
    long lost = settings.recipientsOnline() ? run.missing() : 0;
    long late = setup.senders().stream().mapToLong(Sender::signedLate).sum();

    System.out.printf(Locale.ROOT, "warm-up: %d pairs sent, %d error answers%n", run.warmupSent.sum(),
        run.warmupErrors.sum());
    System.out.printf(Locale.ROOT, "window %.0f s: accepted %.0f pairs/s (200 answers), delivered %.0f pairs/s"
        + " (first pushes to recipient sessions)%n", window, accepted / window, delivered / window);
    if (arrival.getTotalCount() > 0) {
      System.out.printf(Locale.ROOT, "send→recipient latency ms: p50 %s  p90 %s  p99 %s  max %s  (%d pairs)%n",
          ms(arrival, 50), ms(arrival, 90), ms(arrival, 99), ms(arrival.getMaxValue()), arrival.getTotalCount());
    }
    if (accept.getTotalCount() > 0) {
      System.out.printf(Locale.ROOT, "accept latency ms: p50 %s  p90 %s  p99 %s  max %s  (%d answers)%n",
          ms(accept, 50), ms(accept, 90), ms(accept, 99), ms(accept.getMaxValue()), accept.getTotalCount());
    }
    System.out.printf(Locale.ROOT, "pairs sent in the window: %d; accepted %d %s; arrived %d; lost %s"
            + " (accepted, not pushed within %d s after the last answer); duplicate pushes %d; slot timeouts %d;"
            + " pushes of unknown pairs %d%n", run.measuredSent.sum(), run.measuredAccepted.sum(), run.states(),
        run.measuredArrived.sum(), settings.recipientsOnline() ? Long.toString(lost) : "n/a", settings.graceS(),
        run.duplicates.sum(), run.slotTimeouts.sum(), run.unexpectedPushes.sum());
    System.out.printf(Locale.ROOT, "errors: %s%s%n", run.errors().isEmpty() ? "none" : run.errors(),
        run.unanswered() == 0 ? "" : "; sends never answered: " + run.unanswered());
    System.out.printf(Locale.ROOT, "per second from the start (warm-up %d s, then the window of %d s),"
        + " second:accepted/delivered/errors: %s%n", settings.warmup(), settings.seconds(), run.timeline());
    if (settings.recipientsOnline()) {
      System.out.printf(Locale.ROOT, "recipient sessions still open at the end: %d of %d%n", openSessions,
          setup.recipients().size());
    }
    if (late > 0) {
      System.out.printf(Locale.ROOT, "note: %d pairs were signed during the run (the pre-signed ones ran out)%n",
          late);
    }
    if (flood != null) {
      System.out.println(flood.report());
    }
    double cpuSeconds = (after.nanos() - before.nanos()) / 1e9;
    System.out.print(cpu.report(before.cpu(), after.cpu(), cpuSeconds, pairs, unit));
    System.out.print(ProcessSyscalls.report(before.syscalls(), after.syscalls(), pairs, unit));
    Map<String, Double> cpuPerPair = ProcessCpu.perUnit(before.cpu(), after.cpu(), pairs);
    Map<String, Double> commitsPerPair = new LinkedHashMap<>();
    after.commits().forEach((db, n) -> commitsPerPair.put(db, pairs == 0 ? Double.NaN
        : (double) (n - before.commits().getOrDefault(db, n)) / pairs));
    commitsPerPair.forEach((db, perPair) -> System.out.printf(Locale.ROOT,
        "  transactions in %-31s %8.2f per %s%n", db, perPair, unit));
    Map<String, Double> countersPerPair = new LinkedHashMap<>();
    Map<String, Double> counterDeltas = new LinkedHashMap<>();
    after.counters().forEach((server, counters) -> counters.forEach((name, value) -> {
      double delta = value - before.counters().getOrDefault(server, Map.of()).getOrDefault(name, 0.0);
      if (delta != 0 && pairs > 0) {
        countersPerPair.put(server + " " + name, delta / pairs);
        counterDeltas.put(server + " " + name, delta);
      }
    }));
    countersPerPair.forEach((name, perPair) -> System.out.printf(Locale.ROOT,
        "  metric %-60s %8.2f per %s (%.0f in the window)%n", name, perPair, unit, counterDeltas.get(name)));

    StringJoiner result = new StringJoiner(" ", "RESULT ", "");
    result.add("scenario=" + settings.scenario());
    result.add("loop=" + (settings.openLoop() ? "open" : "closed"));
    result.add("rate=" + settings.rate());
    result.add("clients=" + settings.clients());
    result.add("window=" + settings.window());
    result.add("recipients=" + (settings.recipientsOnline() ? "online" : "offline"));
    result.add("free_on=" + (settings.openLoop() ? "na" : settings.freeOnArrival() ? "arrival" : "answer"));
    result.add("body=" + settings.body());
    result.add("seconds=" + settings.seconds());
    result.add("compression=" + (settings.offerCompression() ? "offer" : "none"));
    result.add(String.format(Locale.ROOT, "accepted_per_s=%.0f", accepted / window));
    result.add(String.format(Locale.ROOT, "delivered_per_s=%.0f", delivered / window));
    result.add("p50_ms=" + ms(arrival, 50));
    result.add("p90_ms=" + ms(arrival, 90));
    result.add("p99_ms=" + ms(arrival, 99));
    result.add("max_ms=" + (arrival.getTotalCount() == 0 ? "na" : ms(arrival.getMaxValue())));
    result.add("accept_p50_ms=" + ms(accept, 50));
    result.add("accept_p99_ms=" + ms(accept, 99));
    result.add("sent=" + run.measuredSent.sum());
    result.add("accepted=" + run.measuredAccepted.sum());
    result.add("arrived=" + run.measuredArrived.sum());
    result.add("lost=" + (settings.recipientsOnline() ? Long.toString(lost) : "na"));
    result.add("dup=" + run.duplicates.sum());
    result.add("slot_timeouts=" + run.slotTimeouts.sum());
    result.add("errors=" + run.errorCount());
    result.add("unanswered=" + run.unanswered());
    run.errors().forEach((code, n) -> result.add("error_" + key(code) + "=" + n));
    result.add("sessions_open=" + (settings.recipientsOnline() ? openSessions + "/" + setup.recipients().size()
        : "na"));
    result.add("per=" + (settings.recipientsOnline() ? "delivered" : "accepted"));
    cpuPerPair.forEach((name, us) -> {
      String field = switch (name) {
        case ProcessCpu.POSTGRES -> "pg_us_per_pair";
        case ProcessCpu.POSTGRES_BACKENDS -> "pg_backends_us_per_pair";
        case ProcessCpu.BENCH -> "bench_us_per_pair";
        default -> "cpu_us_per_pair_" + key(name);
      };
      result.add(field + "=" + (pairs == 0 ? "na" : String.format(Locale.ROOT, "%.0f", us)));
    });
    ProcessSyscalls.writesPerUnit(before.syscalls(), after.syscalls(), pairs).forEach((name, perPair) -> result.add(
        "syscw_per_pair_" + key(name) + "=" + (perPair.isNaN() ? "na" : String.format(Locale.ROOT, "%.2f", perPair))));
    commitsPerPair.forEach((db, perPair) -> result.add("commits_per_pair_" + key(db) + "="
        + (perPair.isNaN() ? "na" : String.format(Locale.ROOT, "%.2f", perPair))));
    countersPerPair.forEach((name, perPair) -> result.add(String.format(Locale.ROOT, "m_%s=%.3f", key(name),
        perPair)));
    if (flood != null) {
      flood.addResult(result);
    }
    ProcessCpu.percentOfCore(before.cpu(), after.cpu(), cpuSeconds).forEach((name, percent) -> result.add(String.format(
        Locale.ROOT, "cpu_pct_%s=%.0f", key(name), percent)));
    System.out.println(result);
    return run.errorCount() == 0 && lost == 0 && run.duplicates.sum() == 0 && run.unanswered() == 0 ? 0 : 1;
  }

  /** A RESULT key part: letters, digits and single underscores. */
  static String key(String text) {
    return text.replaceAll("[^A-Za-z0-9]+", "_").replaceAll("^_|_$", "");
  }

  /** A percentile of a histogram of microseconds, in milliseconds with one decimal ("na" when empty). */
  static String ms(Histogram histogram, double percentile) {
    return histogram.getTotalCount() == 0 ? "na" : ms(histogram.getValueAtPercentile(percentile));
  }

  /** Microseconds in milliseconds with one decimal. */
  static String ms(long micros) {
    return String.format(Locale.ROOT, "%.1f", micros / 1000.0);
  }
}
