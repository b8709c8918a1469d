package org.shine.server.adapter;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.dm.KeyFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reference receiving adapter: a supervisor that runs Phase 1 receive cycles (restarting an ended cycle
 * after a capped backoff with jitter, and stopping for good when the refresh token is rejected or on stop), a
 * Phase 2 processor thread that verifies each event's container against its author's card and opens its encrypted
 * body with the key file's encryption keys before the handler sees it, and a status line every few seconds. Library
 * users give it an {@link EventHandler}.
 */
public final class HubAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(HubAdapter.class);
  private static final long BACKOFF_START_MS = 500;
  private static final long BACKOFF_MAX_MS = 30_000;
  /** What the adapter says once at start when it has no encryption keys to open bodies with. */
  public static final String PASSED_ON_UNTOUCHED = "the key file holds no encryption keys: bodies are passed on as the"
      + " server has them, encrypted ones are not decrypted here (containers are still verified against their"
      + " authors' cards)";
  private final Settings settings;
  private final Inbox inbox;
  private final HubClient hub;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final ReceiveCycle.Hooks hooks;
  private Thread receiver;
  private Thread processorThread;
  private Thread statusThread;
  private final ReceiveCycle.TokenHolder tokens;
  private volatile ReceiveCycle current;
  private volatile long received;
  private volatile long acked;
  private final InboxProcessor processor;
  private final EventBodies bodies;

  public HubAdapter(Settings settings, Inbox inbox, EventHandler handler) {
    this(settings, inbox, handler, ReceiveCycle.Hooks.NONE);
  }

  HubAdapter(Settings settings, Inbox inbox, EventHandler handler, ReceiveCycle.Hooks hooks) {
    this.settings = Objects.requireNonNull(settings);
    this.inbox = Objects.requireNonNull(inbox);
    this.hub = new HubClient(settings.serverHttpUrl());
    this.tokens = new ReceiveCycle.TokenHolder(null);
    ContainerVerifier verifier = ContainerVerifier.inline(settings.login(), new HubCards(hub, tokens));
    this.bodies = EventBodies.with(settings.key().encryptionKeys());
    this.processor = new InboxProcessor(inbox, handler, verifier, bodies, settings.delaysMs(), settings.leaseMs());
    this.hooks = hooks;
  }

  /**
   * Logs in (challenge + token) and starts the threads; says once, when the key file holds no encryption keys, that
   * bodies are handed on as the server has them.
   */
  public void start() throws Exception {
    tokens.set(hub.login(settings.login(), settings.key(), settings.serverLogin()));
    if (!bodies.opens()) {
      LOG.warn(PASSED_ON_UNTOUCHED);
    }
    receiver = thread("adapter-receive", this::supervise, false);
    processorThread = thread("adapter-process", this::process, true);
    if (settings.statusEvery().toMillis() > 0) {
      statusThread = thread("adapter-status", this::status, true);
    }
  }

  /** Signals stop and waits for the receiver to end its cycle (at most one poll wait). */
  public void stop() throws InterruptedException {
    stop.set(true);
    if (receiver != null) {
      receiver.interrupt();
      receiver.join(Duration.ofSeconds(5).toMillis());
    }
    if (processorThread != null) {
      processorThread.interrupt();
    }
    if (statusThread != null) {
      statusThread.interrupt();
    }
  }

  /** Waits until the receiver stops for good (refresh rejected, or stop). */
  public void awaitTermination() throws InterruptedException {
    receiver.join();
  }

  public boolean stoppedForGood() {
    return receiver != null && !receiver.isAlive();
  }

  private static Thread thread(String name, Runnable body, boolean daemon) {
    Thread thread = new Thread(body, name);
    thread.setDaemon(daemon);
    thread.start();
    return thread;
  }

  private void supervise() {
    long backoff = BACKOFF_START_MS;
    while (!stop.get()) {
      ReceiveCycle cycle = new ReceiveCycle(hub, inbox, tokens, settings.waitS(), stop, hooks);
      current = cycle;
      ReceiveCycle.End end;
      try {
        end = cycle.run();
      } catch (InterruptedException e) {
        break;
      } finally {
        received += cycle.received.get();
        acked += cycle.acked.get();
        current = null;
      }
      if (end == ReceiveCycle.End.STOPPED) {
        break;
      }
      if (end == ReceiveCycle.End.REFRESH_REJECTED) {
        LOG.error("the refresh token was rejected; the adapter stops (log in again to continue)");
        break;
      }
      long delay = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
      LOG.info("receive cycle ended ({}); restarting in {} ms", end, delay);
      backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
      try {
        Thread.sleep(delay);
      } catch (InterruptedException e) {
        break;
      }
    }
    LOG.info("receiver stopped");
  }

  private void process() {
    while (!stop.get()) {
      try {
        if (processor.runOnce() == 0) {
          Thread.sleep(settings.processIdleMs());
        }
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        LOG.warn("inbox processing failed: {}", e.toString());
        try {
          Thread.sleep(1_000);
        } catch (InterruptedException interrupted) {
          return;
        }
      }
    }
  }

  private void status() {
    while (!stop.get()) {
      try {
        Thread.sleep(settings.statusEvery().toMillis());
        Inbox.Counts counts = inbox.counts(System.currentTimeMillis());
        ReceiveCycle cycle = current;
        long inCycleReceived = cycle == null ? 0 : cycle.received.get();
        long inCycleAcked = cycle == null ? 0 : cycle.acked.get();
        LOG.info("adapter status: received {}, acked {}, processed {}, retrying {}, dead {}, rejected {}, lag {} ms",
            received + inCycleReceived, acked + inCycleAcked, counts.done(), counts.retrying(), counts.dead(),
            counts.rejected(), counts.oldestPendingAgeMs());
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        LOG.debug("status failed: {}", e.toString());
      }
    }
  }

  /** What the adapter needs: where, who, and how to poll and retry. */
  public record Settings(String serverHttpUrl, String serverLogin, String login, KeyFile key, long waitS,
      List<Long> delaysMs, long leaseMs, long processIdleMs, Duration statusEvery) {
    public Settings {
      delaysMs = List.copyOf(delaysMs);
    }

    /** The seed's defaults: long polls of 25 s, delays 10 s, 1 min, 5 min, 30 min, 2 h. */
    public static List<Long> defaultDelaysMs() {
      return List.of(10_000L, 60_000L, 300_000L, 1_800_000L, 7_200_000L);
    }
  }
}
