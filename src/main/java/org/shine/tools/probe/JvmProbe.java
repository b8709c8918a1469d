package org.shine.tools.probe;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server process seen from outside, as an operator would: its heap after a full GC ({@code jcmd PID GC.run}, then
 * {@code GC.heap_info}), its class histogram ({@code GC.class_histogram}, which collects first), its open file
 * descriptors ({@code /proc/PID/fd}) and its resident memory ({@code VmRSS}). Each reads -1 (or an empty histogram)
 * where the process or {@code jcmd} cannot be reached.
 */
public final class JvmProbe {
  private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");
  /** {@code "   1:        123456       7890123  [B (java.base@17)"}. */
  private static final Pattern HISTOGRAM_ROW = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");
  private static final long JCMD_WAIT_S = 60;

  private JvmProbe() {
  }

  /** Instances and bytes of one class in a histogram. */
  public record Count(long instances, long bytes) {
  }

  /** What one class grew by between two histograms. */
  public record Growth(String className, long instances, long bytes) {
  }

  /** The process at one moment: heap after a full GC (KiB), fds, RSS (KiB), and its class histogram if taken. */
  public record Snapshot(long heapKb, long fds, long rssKb, Map<String, Count> histogram) {
    /** Reads process {@code pid} (null: nothing, every figure -1); the histogram only when {@code histogram}. */
    public static Snapshot of(Long pid, boolean histogram) {
      if (pid == null) {
        return new Snapshot(-1, -1, -1, Map.of());
      }
      Map<String, Count> classes = histogram ? JvmProbe.histogram(pid) : Map.of();
      return new Snapshot(heapAfterGcKb(pid), JvmProbe.fds(pid), JvmProbe.rssKb(pid), classes);
    }

    /** {@code heap after a full GC 18.5 MiB, 43 open fds, RSS 197 MiB}. */
    public String describe() {
      return heapKb < 0 ? "(no --server-pid)" : String.format(Locale.ROOT,
          "heap after a full GC %.1f MiB, %d open fds, RSS %.0f MiB", heapKb / 1024.0, fds, rssKb / 1024.0);
    }
  }

  /** Heap in use right after a full GC, in KiB. */
  public static long heapAfterGcKb(long pid) {
    if (pid <= 0 || jcmd(pid, "GC.run") == null) {
      return -1;
    }
    String info = jcmd(pid, "GC.heap_info");
    Matcher used = info == null ? null : HEAP_USED.matcher(info);
    return used != null && used.find() ? Long.parseLong(used.group(1)) : -1;
  }

  /** The live objects by class (the histogram collects before it counts). */
  public static Map<String, Count> histogram(long pid) {
    Map<String, Count> classes = new HashMap<>();
    String text = pid <= 0 ? null : jcmd(pid, "GC.class_histogram");
    if (text == null) {
      return classes;
    }
    for (String line : text.split("\n")) {
      Matcher row = HISTOGRAM_ROW.matcher(line);
      if (row.find()) {
        classes.merge(row.group(3), new Count(Long.parseLong(row.group(1)), Long.parseLong(row.group(2))),
            (a, b) -> new Count(a.instances + b.instances, a.bytes + b.bytes));
      }
    }
    return classes;
  }

  /** The classes that grew most in bytes from {@code before} to {@code after}, largest first, at most {@code top}. */
  public static List<Growth> growth(Map<String, Count> before, Map<String, Count> after, int top) {
    List<Growth> grown = new ArrayList<>();
    after.forEach((name, count) -> {
      Count was = before.getOrDefault(name, new Count(0, 0));
      grown.add(new Growth(name, count.instances - was.instances, count.bytes - was.bytes));
    });
    grown.sort((a, b) -> Long.compare(b.bytes, a.bytes));
    return grown.subList(0, Math.min(top, grown.size()));
  }

  /** The growth as table rows per unit ({@code per}: sessions, polls): bytes and instances each, and the class. */
  public static List<String> growthLines(List<Growth> grown, long per) {
    List<String> lines = new ArrayList<>();
    lines.add(String.format(Locale.ROOT, "  %10s %10s  %s", "bytes/each", "objs/each", "class"));
    for (Growth g : grown) {
      lines.add(String.format(Locale.ROOT, "  %10.0f %10.2f  %s", (double) g.bytes / per, (double) g.instances / per,
          g.className));
    }
    return lines;
  }

  /** Open file descriptors. */
  public static long fds(long pid) {
    String[] entries = pid <= 0 ? null : new File("/proc/" + pid + "/fd").list();
    return entries == null ? -1 : entries.length;
  }

  /** Resident memory, in KiB. */
  public static long rssKb(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException e) {
      return -1;
    }
    return -1;
  }

  private static String jcmd(long pid, String command) {
    try {
      Process process = new ProcessBuilder("jcmd", Long.toString(pid), command).redirectErrorStream(true).start();
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return process.waitFor(JCMD_WAIT_S, TimeUnit.SECONDS) && process.exitValue() == 0 ? out : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }
}
