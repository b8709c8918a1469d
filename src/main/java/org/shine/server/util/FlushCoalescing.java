package org.shine.server.util;

import io.netty.channel.ChannelPipeline;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.vertx.core.http.WebSocketBase;
import io.vertx.core.internal.http.WebSocketInternal;

/**
 * Frames written to one WebSocket in one run of its event loop leave in one socket write.
 *
 * <p>Vert.x flushes every frame written outside a read of the frame's own connection at once, one {@code write}
 * system call each. Most of a server's frames are written so: an answer after a database statement, a batch of
 * calls to a peer after the batch's store, a push after another connection's request. A peer connection carries
 * many of them at a time (a store of eight copies answers eight calls on one connection), and a warm profile of
 * four servers spends a fifth of their CPU in socket system calls. Netty's {@link FlushConsolidationHandler}, put
 * first in the socket's pipeline, turns a flush outside a read into one task at the end of the event loop's current
 * run, so the frames of that run leave together; within a read it waits for the read's end, as Vert.x already does.
 * A frame is never held past the run that wrote it, so no timer and no latency bound is needed; a socket that is
 * no longer writable, or closes, is flushed at once.
 */
public final class FlushCoalescing {
  /** The handler's name in the pipeline. */
  public static final String HANDLER = "shine-flush-coalescing";
  /** Flush anyway after this many consolidated flushes in one run: a bound on what waits in one socket buffer. */
  public static final int FLUSH_AFTER_FRAMES = 64;

  private FlushCoalescing() {
  }

  /**
   * Puts the coalescing first in the socket's pipeline, once. Returns false for a socket that is not a Vert.x
   * WebSocket over a Netty channel (nothing is changed then: every frame is flushed by itself, as before).
   */
  public static boolean install(WebSocketBase socket) {
    if (!(socket instanceof WebSocketInternal internal)) {
      return false;
    }
    ChannelPipeline pipeline = internal.channelHandlerContext().pipeline();
    if (pipeline.get(HANDLER) == null) {
      pipeline.addFirst(HANDLER, new FlushConsolidationHandler(FLUSH_AFTER_FRAMES, true));
    }
    return true;
  }
}
