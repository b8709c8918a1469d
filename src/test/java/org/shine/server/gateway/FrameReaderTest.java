package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.util.Json;

/** The envelope of PROTOCOL §2 as the gateway reads a text frame: what is a request, and what each bad frame earns. */
class FrameReaderTest {
  private static final int LIMIT = 64;
  private final FrameReader reader = new FrameReader(Json.MAPPER, LIMIT);

  @Test
  @DisplayName("a frame of op, requestId and payload is a request carrying all three; a string or number requestId"
      + " is kept as sent")
  void request() {
    FrameReader.Request request = reader.read("{\"op\":\"GetUserCard\",\"requestId\":7,\"payload\":{\"login\":\"bob\"}}");

    assertThat(request.op()).isEqualTo("GetUserCard");
    assertThat(request.requestId().isNumber()).isTrue();
    assertThat(request.requestId().asInt()).isEqualTo(7);
    assertThat(request.payload().path("login").asText()).isEqualTo("bob");
    assertThat(reader.read("{\"op\":\"X\",\"requestId\":\"r1\"}").requestId().asText()).isEqualTo("r1");
  }

  @Test
  @DisplayName("a frame without a payload is a request with an empty object payload")
  void missingPayloadIsEmpty() {
    FrameReader.Request request = reader.read("{\"op\":\"AuthChallenge\",\"requestId\":\"r\"}");

    assertThat(request.payload().isObject()).isTrue();
    assertThat(request.payload().size()).isZero();
  }

  @Test
  @DisplayName("text that is not JSON is 400 BAD_JSON echoing nothing")
  void notJson() {
    FrameReader.BadFrame bad = bad("{\"op\":\"X\",");

    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.code()).isEqualTo(ErrorCode.BAD_JSON);
    assertThat(bad.getMessage()).startsWith("frame is not valid JSON: ");
    assertThat(bad.op()).isNull();
    assertThat(bad.requestId()).isNull();
  }

  @Test
  @DisplayName("a JSON value that is not an object is 400 BAD_ENVELOPE")
  void notAnObject() {
    assertBad("[1,2]", 400, ErrorCode.BAD_ENVELOPE, "a frame must be a JSON object");
    assertBad("\"text\"", 400, ErrorCode.BAD_ENVELOPE, "a frame must be a JSON object");
  }

  @Test
  @DisplayName("a field beside op, requestId and payload is 400 UNKNOWN_FIELD naming it, echoing op and requestId")
  void unknownField() {
    FrameReader.BadFrame bad = assertBad("{\"op\":\"X\",\"requestId\":\"r\",\"extra\":1}", 400, ErrorCode.UNKNOWN_FIELD,
        "unknown envelope field extra");

    assertThat(bad.op()).isEqualTo("X");
    assertThat(bad.requestId().asText()).isEqualTo("r");
  }

  @Test
  @DisplayName("op not a string, requestId neither string nor number, payload not an object: 400 BAD_ENVELOPE each")
  void fieldTypes() {
    assertBad("{\"op\":1,\"requestId\":\"r\"}", 400, ErrorCode.BAD_ENVELOPE, "op must be a string");
    assertBad("{\"requestId\":\"r\"}", 400, ErrorCode.BAD_ENVELOPE, "op must be a string");
    FrameReader.BadFrame noId = assertBad("{\"op\":\"X\",\"requestId\":true}", 400, ErrorCode.BAD_ENVELOPE,
        "requestId must be a string or a number");
    assertThat(noId.op()).isEqualTo("X");
    assertThat(noId.requestId()).isNull();
    assertBad("{\"op\":\"X\",\"requestId\":1,\"payload\":[]}", 400, ErrorCode.BAD_ENVELOPE,
        "payload must be a JSON object");
  }

  @Test
  @DisplayName("a frame over maxFrameBytes in UTF-8 bytes is 413 FRAME_TOO_LARGE, also when its chars are fewer than"
      + " the limit")
  void tooLarge() {
    String ascii = "{\"op\":\"X\",\"requestId\":1,\"payload\":{\"v\":\"" + "a".repeat(LIMIT) + "\"}}";
    FrameReader.BadFrame bad = assertBad(ascii, 413, ErrorCode.FRAME_TOO_LARGE, "frame exceeds " + LIMIT + " bytes");
    assertThat(bad.op()).isEqualTo("X");

    // 30 chars of three bytes each: under the limit in chars, over it in bytes
    String wide = "{\"op\":\"X\",\"requestId\":1,\"payload\":{\"v\":\"" + "€".repeat(10) + "\"}}";
    assertThat(wide.length()).isLessThanOrEqualTo(LIMIT);
    assertBad(wide, 413, ErrorCode.FRAME_TOO_LARGE, "frame exceeds " + LIMIT + " bytes");
    assertBad("{" + " ".repeat(LIMIT) + "\"op\"", 413, ErrorCode.FRAME_TOO_LARGE, "frame exceeds " + LIMIT + " bytes");
  }

  @Test
  @DisplayName("an unpaired surrogate escape anywhere is 400 BAD_JSON; an op or requestId holding one is not echoed")
  void unpairedSurrogate() {
    FrameReader.BadFrame inPayload = assertBad("{\"op\":\"X\",\"requestId\":\"r\",\"payload\":{\"v\":\"\\uD800\"}}",
        400, ErrorCode.BAD_JSON,
        "a string in the frame holds an unpaired surrogate escape (\\uD800-\\uDFFF): not Unicode text");
    assertThat(inPayload.op()).isEqualTo("X");
    assertThat(inPayload.requestId().asText()).isEqualTo("r");

    FrameReader.BadFrame inEnvelope = bad("{\"op\":\"X\\uDC00\",\"requestId\":\"\\uD800\"}");
    assertThat(inEnvelope.code()).isEqualTo(ErrorCode.BAD_JSON);
    assertThat(inEnvelope.op()).isNull();
    assertThat(inEnvelope.requestId()).isNull();
  }

  @Test
  @DisplayName("a binary frame is 400 BAD_ENVELOPE asking for JSON text frames")
  void binary() {
    FrameReader.BadFrame bad = FrameReader.binary();

    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.code()).isEqualTo(ErrorCode.BAD_ENVELOPE);
    assertThat(bad.getMessage()).isEqualTo("binary frames are not supported; send JSON text frames");
  }

  private FrameReader.BadFrame assertBad(String text, int status, String code, String message) {
    FrameReader.BadFrame bad = bad(text);
    assertThat(bad.status()).as("status of %s", text).isEqualTo(status);
    assertThat(bad.code()).as("code of %s", text).isEqualTo(code);
    assertThat(bad.getMessage()).as("message of %s", text).isEqualTo(message);
    return bad;
  }

  private FrameReader.BadFrame bad(String text) {
    try {
      reader.read(text);
    } catch (FrameReader.BadFrame bad) {
      return bad;
    }
    throw new AssertionError(text + " was read as a request");
  }
}
