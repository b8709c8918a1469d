package org.shine.tools.probe;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.shine.server.cli.CliFailure;

/**
 * CPU time of processes from {@code /proc/<pid>/stat} (user + system, in clock ticks of 1/100 s, Linux's USER_HZ):
 * named server processes, this load generator, and every PostgreSQL process of the machine taken together.
 */
public final class ProcessCpu {
  /** Key of this load generator's own process in a sample. */
  public static final String BENCH = "bench";
  /** Key of all PostgreSQL processes of the machine in a sample. */
  public static final String POSTGRES = "postgres";
  /** Key of the PostgreSQL backends connected to the named databases (without the shared background processes). */
  public static final String POSTGRES_BACKENDS = "postgres_backends";
  private static final double TICK_MS = 10.0;
  private final Map<String, Long> servers = new LinkedHashMap<>();
  private final Set<String> databases;

  /**
   * {@code servers}: server processes to report one by one, each {@code NAME=PID} (the name keys its figures) or a
   * bare {@code PID} (named {@code pid<PID>}); {@code databases}: the backends serving these are also summed
   * apart, since other databases of the same PostgreSQL may be busy with work that is not the bench's.
   */
  public ProcessCpu(List<String> servers, List<String> databases) {
    this.databases = Set.copyOf(databases);
    for (String server : servers) {
      int eq = server.indexOf('=');
      String name = eq < 0 ? "pid" + server : server.substring(0, eq);
      String pid = eq < 0 ? server : server.substring(eq + 1);
      try {
        this.servers.put(name, Long.parseLong(pid));
      } catch (NumberFormatException e) {
        throw CliFailure.usage("--server-pid takes PID or NAME=PID: " + server);
      }
    }
  }

  /** The server processes, name → pid, in the order given. */
  public Map<String, Long> servers() {
    return new LinkedHashMap<>(servers);
  }

  /** The server names, in the order given. */
  public List<String> serverNames() {
    return List.copyOf(servers.keySet());
  }

  /** CPU milliseconds so far of each server, of {@link #BENCH} and of {@link #POSTGRES} (its processes found now). */
  public Map<String, Double> sample() {
    Map<String, Double> cpu = new LinkedHashMap<>();
    servers.forEach((name, pid) -> cpu.put(name, ticks(List.of(pid)) * TICK_MS));
    cpu.put(BENCH, ticks(List.of(ProcessHandle.current().pid())) * TICK_MS);
    List<Long> postgres = postgresPids();
    cpu.put(POSTGRES, ticks(postgres) * TICK_MS);
    if (!databases.isEmpty()) {
      cpu.put(POSTGRES_BACKENDS, ticks(postgres.stream().filter(this::servesDatabase).toList()) * TICK_MS);
    }
    return cpu;
  }

  /** CPU µs of each key per unit of work between two samples. */
  public static Map<String, Double> perUnit(Map<String, Double> before, Map<String, Double> after, long units) {
    Map<String, Double> perUnit = new LinkedHashMap<>();
    after.forEach((name, ms) -> perUnit.put(name, units == 0 ? 0 : (ms - before.getOrDefault(name, 0.0)) * 1000
        / units));
    return perUnit;
  }

  /** CPU % of one core of each key between two samples {@code seconds} apart. */
  public static Map<String, Double> percentOfCore(Map<String, Double> before, Map<String, Double> after,
      double seconds) {
    Map<String, Double> percent = new LinkedHashMap<>();
    after.forEach((name, ms) -> percent.put(name, 100 * (ms - before.getOrDefault(name, 0.0)) / 1000 / seconds));
    return percent;
  }

  /** One line per key: CPU % of one core over the window and CPU µs per unit of work. */
  public String report(Map<String, Double> before, Map<String, Double> after, double seconds, long units, String unit) {
    StringBuilder text = new StringBuilder();
    after.forEach((name, ms) -> {
      double used = ms - before.getOrDefault(name, 0.0);
      text.append(String.format(Locale.ROOT, "  cpu %-44s %6.0f %% of a core, %7s µs per %s%n", label(name),
          100 * used / 1000 / seconds, units == 0 ? "n/a" : String.format(Locale.ROOT, "%.0f", used * 1000 / units),
          unit));
    });
    return text.toString();
  }

  private String label(String name) {
    if (servers.containsKey(name)) {
      return "server " + name + " (pid " + servers.get(name) + ")";
    }
    return switch (name) {
      case BENCH -> "load generator";
      case POSTGRES -> "postgresql (all its processes)";
      default -> "postgresql backends of " + String.join(",", new java.util.TreeSet<>(databases));
    };
  }

  /** A backend's process title reads {@code postgres: 15/main: USER DATABASE HOST(PORT) STATE}. */
  private boolean servesDatabase(long pid) {
    try {
      String title = new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
          java.nio.charset.StandardCharsets.UTF_8).replace('\0', ' ');
      for (String word : title.split(" +")) {
        if (databases.contains(word)) {
          return true;
        }
      }
      return false;
    } catch (IOException | RuntimeException e) {
      return false;
    }
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
