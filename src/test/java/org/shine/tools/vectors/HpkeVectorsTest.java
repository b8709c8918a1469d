package org.shine.tools.vectors;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.cli.CliContext;
import org.shine.server.util.Json;
import org.shine.tools.ToolsCli;

/**
 * The cross-check of encrypted bodies, Java side: the bodies the browser's {@code hpke.js} sealed (committed as
 * {@code hpke/js-body-vectors.json} by {@code web-tests/hpke-vectors.mjs}) open with {@code dm.BodyCipher}, the
 * committed Java ones still do, and {@code hpke-vectors} writes and checks files. Fresh JS bodies are checked by
 * {@code web-tests/hpke.test.mjs}, which runs {@code hpke-vectors check} on them.
 */
class HpkeVectorsTest {

  private static JsonNode resource(String name) throws IOException {
    try (InputStream in = HpkeVectorsTest.class.getResourceAsStream("/hpke/" + name)) {
      return Json.MAPPER.readTree(in);
    }
  }

  private static int run(ByteArrayOutputStream err, String... args) {
    CliContext context = new CliContext(InputStream.nullInputStream(), new PrintStream(new ByteArrayOutputStream()),
        new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), false);
    return ToolsCli.execute(context, args);
  }

  @Test
  @DisplayName("every body and key transfer the browser's hpke.js sealed opens in Java to its plaintext")
  void jsBodiesOpen() throws IOException {
    JsonNode vectors = resource("js-body-vectors.json");
    assertThat(vectors.path("writer").asText()).startsWith("JS");
    assertThat(vectors.path("bodies")).hasSizeGreaterThanOrEqualTo(4);
    assertThat(HpkeVectors.check(vectors)).isEmpty();
  }

  @Test
  @DisplayName("the committed Java bodies (opened by the browser's tests) still open in Java")
  void javaBodiesOpen() throws IOException {
    JsonNode vectors = resource("java-body-vectors.json");
    assertThat(vectors.path("writer").asText()).startsWith("Java");
    assertThat(HpkeVectors.check(vectors)).isEmpty();
  }

  @Test
  @DisplayName("hpke-vectors write makes a file check opens; check names a body that does not open and exits 1")
  void writeAndCheck(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("vectors.json");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertThat(run(err, "hpke-vectors", "write", file.toString())).isZero();
    assertThat(run(err, "hpke-vectors", "check", file.toString())).isZero();

    ObjectNode vectors = (ObjectNode) Json.MAPPER.readTree(file.toFile());
    ((ObjectNode) vectors.get("bodies").get(1)).put("revision", 7);
    Files.writeString(file, vectors.toString());
    assertThat(run(err, "hpke-vectors", "check", file.toString())).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("body 1: the encrypted body does not open");
  }
}
