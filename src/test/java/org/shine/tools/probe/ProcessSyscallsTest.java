package org.shine.tools.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ProcessSyscalls} on this very process: its writes to a file are counted, a process that is gone counts 0. */
class ProcessSyscallsTest {
  @TempDir
  Path dir;

  @Test
  @DisplayName("a hundred writes of this process are counted as at least a hundred, and reported per unit")
  void countsOwnWrites() throws IOException {
    long self = ProcessHandle.current().pid();
    ProcessSyscalls probe = new ProcessSyscalls(Map.of("self", self));
    Map<String, long[]> before = probe.sample();
    Path file = dir.resolve("written");
    for (int i = 0; i < 100; i++) {
      Files.writeString(file, "line " + i); // one open, write and close each
    }
    Map<String, long[]> after = probe.sample();

    long writes = after.get("self")[1] - before.get("self")[1];
    assertThat(writes).isGreaterThanOrEqualTo(100);
    assertThat(ProcessSyscalls.writesPerUnit(before, after, 100).get("self")).isGreaterThanOrEqualTo(1.0);
    assertThat(ProcessSyscalls.report(before, after, 100, "pair")).startsWith("  syscalls server self")
        .contains("writes per pair");
    assertThat(ProcessSyscalls.writesPerUnit(before, after, 0).get("self")).isNaN();
  }

  @Test
  @DisplayName("a process that is not there counts nothing, and the report says so per unit instead of failing")
  void goneProcess() {
    long gone = Long.MAX_VALUE;
    Map<String, long[]> sample = new ProcessSyscalls(Map.of("gone", gone)).sample();

    assertThat(sample.get("gone")).containsExactly(0, 0);
    assertThat(ProcessSyscalls.report(sample, sample, 0, "pair")).contains("n/a reads").contains("n/a writes");
  }
}
