package org.shine.server.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.KeyFile;

/**
 * Benchmarks: {@code bench codec} (container parse + signature verify, one thread), {@code bench send}
 * ({@link SendBench}: SendMessagePair over many WebSocket connections to live recipient sessions) and the others
 * listed in {@link #USAGE}.
 */
public final class BenchCommand {
  static final String USAGE = String.join("\n",
      "bench codec [--count N]                        parse + verify N signed containers on one thread",
      SendBench.USAGE,
      "bench retry-claim [--terminal N] [--due D] [--rounds R] [--db-name NAME]",
      "       time the retry worker's claim of D due rows beside N terminal rows (fresh database NAME,",
      "       PostgreSQL from SHINE_DB_* or 127.0.0.1:5432 postgres)",
      "bench catchup [--items N] [--clients C]",
      "       two servers in-process; the second is down while N pairs are written on the first, then the",
      "       time until it holds them all is measured",
      "bench hub-throughput --server URL [--events N]     events/s through the hub and the reference adapter",
      "bench slow-reader --server URL [--events N] [--bytes B] [--server-pid PID]",
      "       a recipient session that never reads while N messages of B bytes are sent to it: how the sends",
      "       are answered, whether the server closes the silent session, its heap after GC before and after",
      "bench hub-polls --server URL [--polls N] [--wake W] [--server-pid PID]",
      "       N concurrent long polls (server RSS with --server-pid) and the wake-up latency of W of them");

  private BenchCommand() {
  }

  public static int run(String[] args) {
    if (args.length == 0 || args[0].equals("help")) {
      System.out.println(USAGE);
      return args.length == 0 ? 2 : 0;
    }
    return switch (args[0]) {
      case "codec" -> codec(Args.parse(args, 1, Set.of("count")));
      case "send" -> SendBench.run(Args.parse(args, 1, SendBench.OPTIONS));
      case "retry-claim" -> RetryClaimBench.run(Args.parse(args, 1, Set.of("terminal", "due", "rounds", "db-name")));
      case "catchup" -> catchUp(Args.parse(args, 1, Set.of("items", "clients")));
      case "hub-throughput" -> hub(() -> HubBench.throughput(Args.parse(args, 1, Set.of("server", "events"))));
      case "hub-polls" -> hub(() -> HubBench.polls(Args.parse(args, 1, Set.of("server", "polls", "wake",
          "server-pid"))));
      case "slow-reader" -> hub(() -> SlowReaderBench.run(Args.parse(args, 1, Set.of("server", "events", "bytes",
          "server-pid"))));
      default -> throw new Args.UsageException("unknown bench " + args[0] + "\n" + USAGE);
    };
  }

  private static int hub(java.util.concurrent.Callable<Integer> bench) {
    try {
      return bench.call();
    } catch (Args.UsageException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static int catchUp(Args options) {
    try {
      return CatchUpBench.run(options);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static int codec(Args options) {
    int count = (int) options.longValue("count", 20_000);
    KeyFile key = KeyFile.generate("alice");
    byte[] body = new byte[256];
    List<byte[]> blobs = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      blobs.add(DmCodec.sign(DmKind.OUTGOING, System.currentTimeMillis(), i, 0, "alice", "bob", "", body,
          key.privateKey()).bytes());
    }
    for (int round = 0; round < 3; round++) {
      long parseStart = System.nanoTime();
      List<DmContainer> parsed = new ArrayList<>(count);
      for (byte[] blob : blobs) {
        try {
          parsed.add(DmCodec.parse(blob));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
      long parseEnd = System.nanoTime();
      int valid = 0;
      for (DmContainer container : parsed) {
        valid += container.verifySignature(key.publicKey()) ? 1 : 0;
      }
      long verifyEnd = System.nanoTime();
      var decoded = org.shine.server.dm.Ed25519Signer.publicKey(key.publicKey());
      for (DmContainer container : parsed) {
        valid += container.verifySignature(decoded) ? 1 : 0;
      }
      long decodedEnd = System.nanoTime();
      if (valid != 2 * count) {
        throw new IllegalStateException("only " + valid + " of " + 2 * count + " signatures verified");
      }
      System.out.printf(Locale.ROOT, "round %d: parse %.0f containers/s, verify %.0f signatures/s (%.0f/s with the"
              + " key decoded once, as the server does), parse+verify %.0f containers/s (%d containers of %d-byte"
              + " body, 1 thread)%n", round + 1,
          count / seconds(parseStart, parseEnd), count / seconds(parseEnd, verifyEnd),
          count / seconds(verifyEnd, decodedEnd), count / seconds(parseStart, verifyEnd), count, body.length);
    }
    return 0;
  }

  private static double seconds(long startNanos, long endNanos) {
    return (endNanos - startNanos) / 1e9;
  }
}
