package org.shine.tools.probe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Read and write system calls of named processes, from {@code /proc/<pid>/io} ({@code syscr}, {@code syscw}): a
 * socket's reads and writes are most of them in a server, so per unit of work they count the frames and database
 * round trips that left in a socket write of their own. A count, not a time: the machine's load does not change it.
 */
public final class ProcessSyscalls {
  private final Map<String, Long> processes;

  /** {@code processes}: name → pid, in the order to report. */
  public ProcessSyscalls(Map<String, Long> processes) {
    this.processes = new LinkedHashMap<>(processes);
  }

  /** Reads and writes so far of each process ({@code {syscr, syscw}}); a process without the file counts none. */
  public Map<String, long[]> sample() {
    Map<String, long[]> counts = new LinkedHashMap<>();
    processes.forEach((name, pid) -> counts.put(name, read(pid)));
    return counts;
  }

  /** One line per process: reads and writes per unit of work between two samples. */
  public static String report(Map<String, long[]> before, Map<String, long[]> after, long units, String unit) {
    StringBuilder text = new StringBuilder();
    after.forEach((name, now) -> {
      long[] then = before.getOrDefault(name, new long[2]);
      text.append(String.format(Locale.ROOT, "  syscalls %-39s %7s reads, %7s writes per %s%n", "server " + name,
          perUnit(now[0] - then[0], units), perUnit(now[1] - then[1], units), unit));
    });
    return text.toString();
  }

  /** Writes per unit of each process between two samples (NaN without units). */
  public static Map<String, Double> writesPerUnit(Map<String, long[]> before, Map<String, long[]> after, long units) {
    Map<String, Double> perUnit = new LinkedHashMap<>();
    after.forEach((name, now) -> perUnit.put(name, units == 0 ? Double.NaN
        : (double) (now[1] - before.getOrDefault(name, new long[2])[1]) / units));
    return perUnit;
  }

  private static String perUnit(long count, long units) {
    return units == 0 ? "n/a" : String.format(Locale.ROOT, "%.2f", (double) count / units);
  }

  static long[] read(long pid) {
    long[] counts = new long[2];
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "io"))) {
        if (line.startsWith("syscr:")) {
          counts[0] = Long.parseLong(line.substring(6).trim());
        } else if (line.startsWith("syscw:")) {
          counts[1] = Long.parseLong(line.substring(6).trim());
        }
      }
    } catch (IOException | RuntimeException e) {
      // gone, not ours to read, or no /proc: it counts nothing
    }
    return counts;
  }
}
