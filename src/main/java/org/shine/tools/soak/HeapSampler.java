package org.shine.tools.soak;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.shine.tools.probe.JvmProbe;

/**
 * The servers' heap after a full GC ({@code jcmd PID GC.run}, then {@code GC.heap_info}) and open descriptors: a
 * sample of all four at the baseline and at the end, and the heap of each once a minute on a thread of its own
 * (jcmd takes seconds on a busy machine) for the progress line.
 */
final class HeapSampler {
  private static final long EVERY_MS = 60_000;

  /** Heap after a full GC (KiB) and open descriptors of one server process; -1 where unknown. */
  record Sample(long pid, long heapKb, long fds) {
  }

  private final SoakSettings settings;
  private final ServerProcesses servers;
  private final Map<String, Long> heapKb = new ConcurrentHashMap<>();
  private volatile boolean on = true;
  private Thread thread;

  HeapSampler(SoakSettings settings, ServerProcesses servers) {
    this.settings = settings;
    this.servers = servers;
  }

  void start() {
    thread = SoakThreads.thread("soak-heap", this::loop);
  }

  void stop() throws InterruptedException {
    on = false;
    thread.interrupt();
    thread.join();
  }

  /** The last heap after GC of server {@code name}, -1 before the first or when it could not be read. */
  long lastHeapKb(String name) {
    return heapKb.getOrDefault(name, -1L);
  }

  /** A sample of every server now, printed as one line headed {@code label} at {@code elapsed}. */
  Map<String, Sample> sampleAll(String label, String elapsed) {
    Map<String, Sample> samples = new LinkedHashMap<>();
    for (String name : settings.names()) {
      long pid = servers.pidOf(name);
      long heap = JvmProbe.heapAfterGcKb(pid);
      heapKb.put(name, heap);
      samples.put(name, new Sample(pid, heap, JvmProbe.fds(pid)));
    }
    StringBuilder line = new StringBuilder(label).append(" at ").append(elapsed).append(':');
    samples.forEach((name, s) -> line.append(String.format(Locale.ROOT, " %s heap %s fds %d", name,
        mb(s.heapKb()), s.fds())));
    System.out.println(line);
    return samples;
  }

  private void loop() {
    while (on) {
      for (String name : settings.names()) {
        heapKb.put(name, JvmProbe.heapAfterGcKb(servers.pidOf(name)));
      }
      try {
        SoakThreads.sleepUntil(System.currentTimeMillis() + EVERY_MS);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** KiB as {@code 12.3MB}, or {@code ?} when unknown. */
  static String mb(long kb) {
    return kb < 0 ? "?" : String.format(Locale.ROOT, "%.1fMB", kb / 1024.0);
  }
}
