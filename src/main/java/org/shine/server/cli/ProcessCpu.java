package org.shine.server.cli;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU time of processes from {@code /proc/<pid>/stat} (user + system, in clock ticks of 1/100 s, Linux's USER_HZ):
 * named server processes, this load generator, and every PostgreSQL process of the machine taken together.
 */
final class ProcessCpu {
  private static final double TICK_MS = 10.0;
  private final Map<String, List<Long>> groups = new LinkedHashMap<>();

  /** {@code servers}: pids of server processes to report one by one. */
  ProcessCpu(List<String> servers) {
    for (String pid : servers) {
      groups.put("server " + pid, List.of(Long.parseLong(pid)));
    }
    groups.put("load generator", List.of(ProcessHandle.current().pid()));
  }

  /** CPU milliseconds so far of each group (PostgreSQL's processes found now). */
  Map<String, Double> sample() {
    Map<String, Double> cpu = new LinkedHashMap<>();
    groups.forEach((name, pids) -> cpu.put(name, ticks(pids) * TICK_MS));
    cpu.put("postgresql (all backends)", ticks(postgresPids()) * TICK_MS);
    return cpu;
  }

  /** One line per group: CPU % of one core over the window and CPU µs per unit of work. */
  static String report(Map<String, Double> before, Map<String, Double> after, double seconds, long units,
      String unit) {
    StringBuilder text = new StringBuilder();
    after.forEach((name, ms) -> {
      double used = ms - before.getOrDefault(name, 0.0);
      text.append(String.format(java.util.Locale.ROOT, "  cpu %-26s %6.0f %% of a core, %7.0f µs per %s%n", name,
          100 * used / 1000 / seconds, units == 0 ? 0 : used * 1000 / units, unit));
    });
    return text.toString();
  }

  private static long ticks(List<Long> pids) {
    long total = 0;
    for (long pid : pids) {
      try {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        // fields after the command name, which may hold spaces, start after the last ')'
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        total += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
      } catch (IOException | RuntimeException e) {
        // the process is gone or /proc is not there: it counts nothing
      }
    }
    return total;
  }

  private static List<Long> postgresPids() {
    List<Long> pids = new ArrayList<>();
    try (DirectoryStream<Path> proc = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
      for (Path dir : proc) {
        try {
          if (Files.readString(dir.resolve("comm")).trim().startsWith("postgres")) {
            pids.add(Long.parseLong(dir.getFileName().toString()));
          }
        } catch (IOException | RuntimeException e) {
          // gone meanwhile
        }
      }
    } catch (IOException e) {
      return pids;
    }
    return pids;
  }
}
