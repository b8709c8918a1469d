package org.shine.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The package table of {@code docs/architecture.md} is the rule: every reference between the project's packages in
 * {@code src/main/java} — an import, or a fully qualified name in the code (comments and literals aside) — must be
 * allowed there, and every package must have a row. ("every package above" allows the packages of the rows above
 * it; "but X, Y" takes some out.) The product never depends on its test bench: no file under
 * {@code org.shine.server} imports or names {@code org.shine.tools}.
 */
class ArchitectureTest {
  private static final Path SOURCES = Path.of("src/main/java/org/shine/server");
  private static final Path DOC = Path.of("docs/architecture.md");
  private static final Pattern ROW = Pattern.compile("^\\| (`[a-z]+`|root) \\|[^|]*\\| (.*) \\|$");
  private static final Pattern IMPORT = Pattern.compile("^import (?:static )?org\\.shine\\.server\\.([a-z]+)\\.",
      Pattern.MULTILINE);
  /** An import of, or a fully-qualified name in, the test bench's tree (even spaced: {@code org . shine . tools}). */
  private static final Pattern TOOLS = Pattern.compile("\\borg\\s*\\.\\s*shine\\s*\\.\\s*tools\\b");
  private static final Pattern ROOT_IMPORT = Pattern.compile("^import (?:static )?org\\.shine\\.server\\.[A-Z]",
      Pattern.MULTILINE);
  /** A fully qualified name in code, not part of a longer name; import and package lines are taken out first. */
  private static final Pattern QUALIFIED = Pattern.compile("(?<![\\w.])org\\.shine\\.server\\.([a-z]+)\\.");
  private static final Pattern ROOT_QUALIFIED = Pattern.compile("(?<![\\w.])org\\.shine\\.server\\.[A-Z]");
  private static final Pattern IMPORT_OR_PACKAGE = Pattern.compile("^(?:import|package) [^\\n]*$", Pattern.MULTILINE);

  @Test
  @DisplayName("a fully qualified name in code is a reference as an import is; one in a comment or a string is not")
  void qualifiedNamesCount() {
    String source = """
        package org.shine.server.model;

        import org.shine.server.dm.DmKeys;

        /** Built from {@link org.shine.server.gateway.Session}. */
        final class Sample {
          // org.shine.server.cli.ShineCli reads it
          String name = "org.shine.server.hub.HubService";
          org.shine.server.config.AppConfig.Delivery delivery;
          Object root = org.shine.server.Main.class;
        }
        """;
    assertThat(references(source)).containsExactlyInAnyOrder("dm", "config", "root");
  }

  @Test
  @DisplayName("every import between packages is allowed by docs/architecture.md, and every package is listed")
  void importsFollowTheTable() throws IOException {
    Map<String, Set<String>> allowed = allowedByDoc();
    Map<String, Set<String>> actual = importsInCode();
    assertThat(allowed.keySet()).as("packages in docs/architecture.md").containsAll(actual.keySet());
    List<String> violations = new ArrayList<>();
    actual.forEach((pkg, imports) -> imports.stream()
        .filter(target -> !target.equals(pkg) && !allowed.get(pkg).contains(target))
        .forEach(target -> violations.add(pkg + " -> " + target)));
    assertThat(violations).as("imports not allowed by docs/architecture.md").isEmpty();
  }

  @Test
  @DisplayName("no product source imports or names the test bench (org.shine.tools): shine-server.jar runs without it")
  void productNeverNamesTheTools() throws IOException {
    List<String> offenders = new ArrayList<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        Files.readAllLines(file).stream().filter(line -> TOOLS.matcher(line).find()).findFirst()
            .ifPresent(line -> offenders.add(SOURCES.relativize(file) + ": " + line.trim()));
      }
    }
    assertThat(offenders).as("product sources naming org.shine.tools").isEmpty();
  }

  private static Map<String, Set<String>> allowedByDoc() throws IOException {
    Map<String, Set<String>> allowed = new LinkedHashMap<>();
    for (String line : Files.readAllLines(DOC)) {
      Matcher row = ROW.matcher(line);
      if (!row.matches()) {
        continue;
      }
      String pkg = row.group(1).replace("`", "");
      String rule = row.group(2).trim();
      Set<String> targets = new TreeSet<>();
      if (rule.startsWith("every package above")) {
        targets.addAll(allowed.keySet());
        int but = rule.indexOf(" but ");
        if (but >= 0) {
          for (String excluded : names(rule.substring(but + 5))) {
            targets.remove(excluded);
          }
        }
      } else if (!rule.equals("—")) {
        targets.addAll(names(rule));
      }
      allowed.put(pkg, targets);
    }
    assertThat(allowed).as("the package table of docs/architecture.md").isNotEmpty();
    return allowed;
  }

  private static List<String> names(String list) {
    List<String> names = new ArrayList<>();
    Matcher name = Pattern.compile("`([a-z]+)`").matcher(list);
    while (name.find()) {
      names.add(name.group(1));
    }
    return names;
  }

  private static Map<String, Set<String>> importsInCode() throws IOException {
    Map<String, Set<String>> imports = new TreeMap<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        Path dir = SOURCES.relativize(file).getParent();
        String pkg = dir == null ? "root" : dir.toString().replace('/', '.');
        imports.computeIfAbsent(pkg, p -> new TreeSet<>()).addAll(references(Files.readString(file)));
      }
    }
    return imports;
  }

  /** The project packages one source file refers to, by import or by a fully qualified name in its code. */
  private static Set<String> references(String text) {
    Set<String> targets = new TreeSet<>();
    Matcher imported = IMPORT.matcher(text);
    while (imported.find()) {
      targets.add(imported.group(1));
    }
    if (ROOT_IMPORT.matcher(text).find()) {
      targets.add("root");
    }
    String code = IMPORT_OR_PACKAGE.matcher(codeOnly(text)).replaceAll("");
    Matcher qualified = QUALIFIED.matcher(code);
    while (qualified.find()) {
      targets.add(qualified.group(1));
    }
    if (ROOT_QUALIFIED.matcher(code).find()) {
      targets.add("root");
    }
    return targets;
  }

  /** The text with comments, string, text-block and char literals blanked (line breaks kept). */
  private static String codeOnly(String text) {
    StringBuilder code = new StringBuilder(text.length());
    int i = 0;
    while (i < text.length()) {
      int end;
      if (text.startsWith("//", i)) {
        end = text.indexOf('\n', i);
      } else if (text.startsWith("/*", i)) {
        end = text.indexOf("*/", i + 2);
        end = end < 0 ? -1 : end + 2;
      } else if (text.startsWith("\"\"\"", i)) {
        end = text.indexOf("\"\"\"", i + 3);
        end = end < 0 ? -1 : end + 3;
      } else if (text.charAt(i) == '"' || text.charAt(i) == '\'') {
        end = literalEnd(text, i);
      } else {
        code.append(text.charAt(i++));
        continue;
      }
      end = end < 0 ? text.length() : end;
      for (; i < end; i++) {
        code.append(text.charAt(i) == '\n' ? '\n' : ' ');
      }
    }
    return code.toString();
  }

  /** The index after the string or char literal that opens at {@code start}. */
  private static int literalEnd(String text, int start) {
    char quote = text.charAt(start);
    for (int i = start + 1; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\\') {
        i++;
      } else if (c == quote || c == '\n') {
        return i + 1;
      }
    }
    return text.length();
  }
}
