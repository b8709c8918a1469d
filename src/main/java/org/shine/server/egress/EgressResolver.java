package org.shine.server.egress;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.shine.server.util.Cidr;

/**
 * Where a dial may go (PROTOCOL §13): resolves the host of a URL once (an IP literal without any lookup, a name on a
 * small worker pool of its own), checks EVERY address it resolves to against the {@link EgressPolicy}, and answers
 * one checked address to connect to — so no second lookup can swap it (DNS rebinding). A configured peer is always
 * allowed. A refused destination costs no connection attempt. Answers of name lookups are kept for
 * {@value #CACHE_MS} ms (at most {@value #MAX_CACHED} names); at most {@value #MAX_PENDING} lookups wait at once.
 * Thread-safe: shared by the verticles of a node.
 */
public final class EgressResolver implements AutoCloseable {
  static final long CACHE_MS = 30_000;
  static final int MAX_CACHED = 10_000;
  static final int MAX_PENDING = 256;
  private static final int LOOKUP_THREADS = 4;

  private final EgressPolicy policy;
  private final WorkerExecutor lookups;
  private final Lookup lookup;
  private final AtomicInteger pending = new AtomicInteger();
  private final Map<String, Resolved> cache = new LinkedHashMap<>(64, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Resolved> eldest) {
      return size() > MAX_CACHED;
    }
  };

  /** How a host name becomes addresses (the system resolver; tests may give another). */
  @FunctionalInterface
  public interface Lookup {
    InetAddress[] all(String host) throws UnknownHostException;
  }

  public EgressResolver(Vertx vertx, EgressPolicy policy) {
    this(vertx, policy, InetAddress::getAllByName);
  }

  public EgressResolver(Vertx vertx, EgressPolicy policy, Lookup lookup) {
    this.policy = Objects.requireNonNull(policy);
    this.lookup = Objects.requireNonNull(lookup);
    this.lookups = vertx.createSharedWorkerExecutor("shine-egress-lookup", LOOKUP_THREADS);
  }

  /** The policy this resolver checks against. */
  public EgressPolicy policy() {
    return policy;
  }

  /**
   * The checked destination of a ws://, wss://, http:// or https:// URL; fails with {@link RefusedException} when
   * the policy refuses one of its addresses (unless {@code configuredPeer}) or the host cannot be resolved.
   */
  public Future<Destination> resolve(String url, boolean configuredPeer) {
    URI uri;
    try {
      uri = new URI(url);
    } catch (Exception e) {
      return Future.failedFuture(new RefusedException("not a URL: " + url));
    }
    String host = uri.getHost();
    if (host == null) {
      return Future.failedFuture(new RefusedException("no host in " + url));
    }
    boolean secure = "wss".equals(uri.getScheme()) || "https".equals(uri.getScheme());
    int port = uri.getPort() > 0 ? uri.getPort() : secure ? 443 : 80;
    String bare = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    InetAddress literal = Cidr.literal(bare);
    Future<InetAddress[]> addresses = literal != null ? Future.succeededFuture(new InetAddress[] {literal})
        : lookUp(bare.toLowerCase(Locale.ROOT));
    return addresses.compose(all -> {
      if (!configuredPeer) {
        for (InetAddress address : all) {
          if (!policy.allows(address)) {
            return Future.failedFuture(new RefusedException("the egress policy refuses " + address.getHostAddress()
                + (literal != null ? "" : " (an address of " + bare + ")")));
          }
        }
      }
      InetAddress chosen = all[0];
      boolean loopback = Arrays.stream(all).allMatch(EgressPolicy::isLoopback);
      return Future.succeededFuture(new Destination(bare, port, secure, chosen, loopback));
    });
  }

  /** True when {@code literal} is an IP literal the policy refuses (a route that can never be dialed). */
  public boolean refusesLiteral(String host) {
    String bare = host != null && host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    InetAddress literal = Cidr.literal(bare);
    return literal != null && !policy.allows(literal);
  }

  private Future<InetAddress[]> lookUp(String host) {
    long now = System.currentTimeMillis();
    synchronized (cache) {
      Resolved known = cache.get(host);
      if (known != null && known.untilMs > now) {
        return Future.succeededFuture(known.addresses);
      }
    }
    if (pending.incrementAndGet() > MAX_PENDING) {
      pending.decrementAndGet();
      return Future.failedFuture(new RefusedException("too many host lookups are waiting; " + host
          + " is not looked up now"));
    }
    return lookups.<InetAddress[]>executeBlocking(() -> lookup.all(host), false)
        .onComplete(ar -> pending.decrementAndGet())
        .recover(failure -> Future.failedFuture(new RefusedException("cannot resolve " + host)))
        .compose(all -> {
          if (all == null || all.length == 0) {
            return Future.failedFuture(new RefusedException("no address for " + host));
          }
          synchronized (cache) {
            cache.put(host, new Resolved(all.clone(), System.currentTimeMillis() + CACHE_MS));
          }
          return Future.succeededFuture(all);
        });
  }

  /** Lookups waiting or running now. */
  int pending() {
    return pending.get();
  }

  @Override
  public void close() {
    lookups.close();
  }

  /**
   * A checked destination: the URL's host (for the Host header, SNI and certificate checks), its port, whether the
   * scheme is TLS, the address to connect to, and whether every address of the host is loopback.
   */
  public record Destination(String host, int port, boolean secure, InetAddress address, boolean loopback) {
    /**
     * PROTOCOL §6a v3 step 2: a server session (or a key fetch) needs TLS with the host verified, except to a
     * loopback address or a peer its operator configured {@code insecure}.
     */
    public boolean allowsSession(boolean insecurePeer) {
      return secure || loopback || insecurePeer;
    }
  }

  /** The policy refuses the destination, or its host cannot be resolved: nothing was dialed. */
  public static final class RefusedException extends RuntimeException {
    public RefusedException(String message) {
      super(message, null, false, false);
    }
  }

  private record Resolved(InetAddress[] addresses, long untilMs) {
  }
}
