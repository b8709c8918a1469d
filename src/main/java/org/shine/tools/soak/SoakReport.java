package org.shine.tools.soak;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.shine.tools.ledger.LedgerResult;
import org.shine.tools.probe.JvmProbe;
import org.shine.tools.soak.HeapSampler.Sample;

/**
 * What a soak prints: the progress line every 10 s (operations, answers in flight, errors, restarts, each server's
 * last heap after GC and descriptors) and, at the end, the ledger, the hub's numbers, heap and descriptors against
 * the baseline (bound +20 %) and the {@code RESULT} line; the end's verdict is the exit code.
 */
final class SoakReport {
  private static final double GROWTH_BOUND = 1.20;

  private final SoakSettings settings;
  private final SoakCounters counters;
  private final ServerProcesses servers;
  private final HeapSampler heap;
  private final Restarts restarts;
  private final HubPollers hub;
  private volatile long startMs = System.currentTimeMillis();

  SoakReport(SoakSettings settings, SoakCounters counters, ServerProcesses servers, HeapSampler heap,
      Restarts restarts, HubPollers hub) {
    this.settings = settings;
    this.counters = counters;
    this.servers = servers;
    this.heap = heap;
    this.restarts = restarts;
    this.hub = hub;
  }

  /** The load's start, from which {@link #elapsed()} counts. */
  void started(long startMs) {
    this.startMs = startMs;
  }

  /** {@code mm:ss} since the load's start. */
  String elapsed() {
    long s = (System.currentTimeMillis() - startMs) / 1000;
    return String.format(Locale.ROOT, "%02d:%02d", s / 60, s % 60);
  }

  void progress(int inFlight) {
    StringBuilder line = new StringBuilder(elapsed()).append(" ops ").append(counters.ops())
        .append(" in flight ").append(inFlight).append(" errors ").append(counters.errors())
        .append(" restarts ").append(restarts.count()).append(" |");
    for (String name : settings.names()) {
      line.append(String.format(Locale.ROOT, " %s heap %s fds %d", name, HeapSampler.mb(heap.lastHeapKb(name)),
          JvmProbe.fds(servers.pidOf(name))));
    }
    System.out.println(line);
  }

  /** The end's report; 0 when nothing is lost, repeated, undelivered, unpolled or grown beyond the bound, else 1. */
  int report(LedgerResult result, long hubMissing, Map<String, Sample> baseline, Map<String, Sample> last) {
    System.out.println();
    System.out.println("== soak ledger ==");
    result.lines().forEach(System.out::println);
    long notDelivered = result.unsettled(Set.of("delivered"));
    System.out.printf(Locale.ROOT, "operations %s; errors %s; restarts %d%n", counters.ops(), counters.errors(),
        restarts.count());
    System.out.printf(Locale.ROOT, "hub: %d events to %d polling users, %d repeated under a new delivery id, %d"
        + " final revisions never polled%n", hub.events(), settings.hubUsers(), hub.duplicates(), hubMissing);
    boolean grew = resources(baseline, last);
    boolean ok = result.ok() && notDelivered == 0 && hubMissing == 0 && hub.duplicates() == 0 && !grew;
    System.out.printf(Locale.ROOT, "RESULT soak=%s sent=%d accepted=%d delivered=%d lost=%d duplicated=%d"
            + " not_delivered=%d hub_missing=%d hub_duplicates=%d restarts=%d resources=%s%n", ok ? "pass" : "fail",
        result.sent(), result.accepted(), result.delivered(), result.lost(),
        result.duplicatesInHistory() + result.duplicatePushes(), notDelivered, hubMissing, hub.duplicates(),
        restarts.count(), grew ? "grew" : "within");
    return ok ? 0 : 1;
  }

  /** One line per server, baseline → end; true when one grew beyond the bound or was not measured. */
  private boolean resources(Map<String, Sample> baseline, Map<String, Sample> last) {
    boolean grew = false;
    System.out.println("== resources: heap after GC and descriptors, baseline → end (bound +20 %) ==");
    for (String name : settings.names()) {
      Sample before = baseline == null ? null : baseline.get(name);
      Sample after = last.get(name);
      boolean heapGrew = before != null && before.heapKb() > 0 && after.heapKb() > before.heapKb() * GROWTH_BOUND;
      boolean fdsGrew = before != null && before.fds() > 0 && after.fds() > before.fds() * GROWTH_BOUND;
      boolean unknown = before == null || before.heapKb() < 0 || after.heapKb() < 0 || after.fds() < 0;
      grew |= heapGrew || fdsGrew || unknown;
      System.out.printf(Locale.ROOT, "%s heap %s → %s (%s)  fds %d → %d (%s)%s%n", name,
          before == null ? "?" : HeapSampler.mb(before.heapKb()), HeapSampler.mb(after.heapKb()),
          ratio(before == null ? -1 : before.heapKb(), after.heapKb()), before == null ? -1 : before.fds(),
          after.fds(), ratio(before == null ? -1 : before.fds(), after.fds()),
          heapGrew || fdsGrew ? "  GREW BEYOND THE BOUND" : unknown ? "  NOT MEASURED" : "");
    }
    return grew;
  }

  private static String ratio(long before, long after) {
    return before <= 0 || after < 0 ? "?" : String.format(Locale.ROOT, "%+.0f %%", 100.0 * (after - before) / before);
  }
}
