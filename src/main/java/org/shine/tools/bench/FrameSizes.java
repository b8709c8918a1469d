package org.shine.tools.bench;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.zip.Deflater;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;

/**
 * What permessage-deflate would save on SendMessagePair frames: their size as sent, deflated one by one (no context
 * takeover), and deflated as a stream (context takeover, the default of the extension); for the bench's own bodies
 * and for random bodies of the same size (as an encrypted body would be).
 */
final class FrameSizes {
  private static final int SAMPLE = 200;

  private FrameSizes() {
  }

  /** Both lines: the pairs sent, and pairs with random bodies of {@code bodySize} signed by {@code signer}. */
  static void print(List<SignedPair> pairs, int bodySize, java.util.function.Function<byte[], SignedPair> signer) {
    print("bench body", pairs);
    java.util.Random random = new java.util.Random(1);
    List<SignedPair> randomBodies = new java.util.ArrayList<>();
    for (int i = 0; i < Math.min(SAMPLE, pairs.size()); i++) {
      byte[] body = new byte[bodySize];
      random.nextBytes(body);
      randomBodies.add(signer.apply(body));
    }
    print("random body", randomBodies);
  }

  private static void print(String what, List<SignedPair> pairs) {
    int n = Math.min(SAMPLE, pairs.size());
    long plain = 0;
    long alone = 0;
    long stream = 0;
    byte[] out = new byte[1 << 20];
    Deflater streaming = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
    for (int i = 0; i < n; i++) {
      byte[] frame = frame(pairs.get(i), i);
      plain += frame.length;
      Deflater single = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
      single.setInput(frame);
      single.finish();
      alone += single.deflate(out);
      single.end();
      streaming.setInput(frame);
      stream += streaming.deflate(out, 0, out.length, Deflater.SYNC_FLUSH);
    }
    streaming.end();
    if (n > 0) {
      System.out.printf(Locale.ROOT, "SendMessagePair frame (%s): %d bytes as sent; deflated %d bytes alone"
          + " (%.0f %%), %d bytes in a stream (%.0f %%); mean of %d frames%n", what, plain / n, alone / n,
          100.0 * alone / plain, stream / n, 100.0 * stream / plain, n);
    }
  }

  private static byte[] frame(SignedPair pair, int i) {
    var payload = ShineClient.object()
        .put("incomingBlobB64", Base64.getEncoder().encodeToString(pair.incoming().bytes()))
        .put("outgoingBlobB64", Base64.getEncoder().encodeToString(pair.outgoing().bytes()));
    var frame = ShineClient.object().put("op", "SendMessagePair").put("requestId", "c-" + (i + 1));
    frame.set("payload", payload);
    return frame.toString().getBytes(StandardCharsets.UTF_8);
  }
}
