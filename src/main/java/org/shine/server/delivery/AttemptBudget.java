package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which of the engine's attempts runs next (PROTOCOL §7.5 and the peer budget of §13): at most {@code maxRunning}
 * attempts run at once, at most {@code perSender} of them for one sending login and at most {@code perDestination}
 * of them calling one server (one route URL). An attempt whose sender or destination has no place left waits in
 * that key's line holding no running place, so attempts towards a server that never answers cannot make the
 * others wait; an attempt whose keys have room waits for a running place in one first-come line. A key's line
 * holds at most {@code lineCapacity} attempts; beyond, the attempt is turned away ({@link #TURNED_AWAY}): it is
 * not made, and its row stays {@code accepted} for the retry worker. Every attempt here already holds a place of
 * {@link AttemptSlots}, which bounds all lines together.
 *
 * <p>An attempt's destinations are known only once its recipient's routes are read, which it does holding a running
 * place: {@link #enter} admits it by its sender, {@link #toward} then by its destinations (giving back its places
 * and waiting in a line if one is full), and {@link #finished} gives back everything it holds, whatever the outcome.
 * A destination's place counts a call in flight (PROTOCOL §13), not the whole attempt: {@link #calling} marks the
 * call made, {@link #answered} gives that place back when its call is over (answered, refused or timed out), so the
 * next attempt calls while this one records its outcome; a call still out when its attempt finishes (the other
 * route answered first) keeps its place until it is over.
 * Futures complete after the budget's state is settled (never in the middle of a change), on the caller's thread.
 * Confined to one event loop.
 */
final class AttemptBudget {
  /** Why an attempt was not made: the line it had to wait in was full. */
  static final RuntimeException TURNED_AWAY = new TurnedAway();

  private final int maxRunning;
  private final int perSender;
  private final int perDestination;
  private final int lineCapacity;
  private final Map<String, Key> senders = new HashMap<>();
  private final Map<String, Key> destinations = new HashMap<>();
  /** Attempts whose keys have room, waiting for a running place, oldest first. */
  private final ArrayDeque<Ticket> ready = new ArrayDeque<>();
  private final ArrayDeque<Runnable> completions = new ArrayDeque<>();
  private boolean completing;
  private int running;

  AttemptBudget(int maxRunning, int perSender, int perDestination, int lineCapacity) {
    if (maxRunning < 1 || perSender < 1 || perDestination < 1 || lineCapacity < 1) {
      throw new IllegalArgumentException("every bound of the attempt budget must be positive");
    }
    this.maxRunning = maxRunning;
    this.perSender = perSender;
    this.perDestination = perDestination;
    this.lineCapacity = lineCapacity;
  }

  /**
   * An attempt of {@code sender} arrives: completes once it holds a running place and one of its sender's, or fails
   * with {@link #TURNED_AWAY} when its sender's line is full.
   */
  Future<Ticket> enter(String sender) {
    Ticket ticket = new Ticket(sender);
    admit(ticket);
    complete();
    return ticket.admitted.future();
  }

  /**
   * The running {@code ticket} calls {@code urls}: completes at once when each has a place (taken now), else gives
   * back the ticket's places, waits in the line of a full one and completes once it holds every place again and a
   * running place; fails with {@link #TURNED_AWAY} when that line is full.
   */
  Future<Ticket> toward(Ticket ticket, Collection<String> urls) {
    if (!ticket.running || ticket.destinations != null) {
      throw new IllegalStateException("only a running attempt names its destinations, once");
    }
    List<String> distinct = List.copyOf(new LinkedHashSet<>(urls));
    Key full = firstFull(distinct, destinations, perDestination);
    if (full == null) {
      for (String url : distinct) {
        key(destinations, url, perDestination).holding++;
      }
      ticket.destinations = new ArrayList<>(distinct);
      return Future.succeededFuture(ticket);
    }
    ticket.admitted = Promise.promise();
    giveBack(ticket);
    ticket.destinations = new ArrayList<>(distinct);
    park(ticket, full);
    startReady();
    complete();
    return ticket.admitted.future();
  }

  /** The running {@code ticket} has a call out towards {@code url}: its place there is held until {@link #answered}. */
  void calling(Ticket ticket, String url) {
    if (ticket.destinations != null && ticket.destinations.contains(url)) {
      ticket.calling.add(url);
    }
  }

  /** The call of {@code ticket} towards {@code url} is over: its place there goes to those waiting. */
  void answered(Ticket ticket, String url) {
    if (!ticket.calling.remove(url) || !ticket.destinations.remove(url)) {
      return;
    }
    Key key = destinations.get(url);
    key.holding--;
    wake(key);
    startReady();
    complete();
  }

  /**
   * The attempt of {@code ticket} is over (whatever its outcome): its places go to those waiting, but for a
   * destination whose call is still out ({@link #answered} gives that one back).
   */
  void finished(Ticket ticket) {
    giveBack(ticket);
    startReady();
    complete();
  }

  /** Attempts running now. */
  int running() {
    return running;
  }

  /** Attempts waiting: for a running place, or in a sender's or destination's line. */
  int waiting() {
    int waiting = ready.size();
    for (Key key : senders.values()) {
      waiting += key.line.size();
    }
    for (Key key : destinations.values()) {
      waiting += key.line.size();
    }
    return waiting;
  }

  /** Senders and destinations with an attempt holding or waiting for one of their places. */
  int keysInUse() {
    return senders.size() + destinations.size();
  }

  /** Attempts of {@code sender} holding one of its places now. */
  int holding(String sender) {
    Key key = senders.get(sender);
    return key == null ? 0 : key.holding;
  }

  /** Attempts holding a place towards {@code url} now. */
  int holdingTowards(String url) {
    Key key = destinations.get(url);
    return key == null ? 0 : key.holding;
  }

  /** Takes the ticket's places if every one has room, else puts it in the line of the first that has none. */
  private void admit(Ticket ticket) {
    Key full = firstFull(List.of(ticket.sender), senders, perSender);
    if (full == null && ticket.destinations != null) {
      full = firstFull(ticket.destinations, destinations, perDestination);
    }
    if (full != null) {
      park(ticket, full);
      return;
    }
    key(senders, ticket.sender, perSender).holding++;
    if (ticket.destinations != null) {
      for (String url : ticket.destinations) {
        key(destinations, url, perDestination).holding++;
      }
    }
    ticket.holdsKeys = true;
    if (ready.isEmpty() && running < maxRunning) {
      start(ticket);
    } else {
      ready.add(ticket);
    }
  }

  private void park(Ticket ticket, Key key) {
    if (key.line.size() >= lineCapacity) {
      dropIfUnused(key);
      Promise<Ticket> admitted = ticket.admitted;
      completions.add(() -> admitted.fail(TURNED_AWAY));
      return;
    }
    key.line.add(ticket);
  }

  private void start(Ticket ticket) {
    running++;
    ticket.running = true;
    Promise<Ticket> admitted = ticket.admitted;
    completions.add(() -> admitted.complete(ticket));
  }

  private void startReady() {
    while (running < maxRunning && !ready.isEmpty()) {
      start(ready.poll());
    }
  }

  /** Gives back the running place and the keys the ticket holds; each key's line moves on. */
  private void giveBack(Ticket ticket) {
    if (ticket.running) {
      ticket.running = false;
      running--;
    }
    if (!ticket.holdsKeys) {
      return;
    }
    ticket.holdsKeys = false;
    List<Key> freed = new ArrayList<>();
    freed.add(senders.get(ticket.sender));
    if (ticket.destinations != null) {
      for (String url : ticket.destinations) {
        if (!ticket.calling.contains(url)) {
          freed.add(destinations.get(url));
        }
      }
      // what is left is held by calls still out; answered() gives each back
      ticket.destinations.removeIf(url -> !ticket.calling.contains(url));
    }
    for (Key key : freed) {
      key.holding--;
    }
    for (Key key : freed) {
      wake(key);
    }
  }

  /** Admits the oldest attempts of {@code key}'s line while it has room (each may then wait in another line). */
  private void wake(Key key) {
    while (key.holding < key.capacity && !key.line.isEmpty()) {
      admit(key.line.poll());
    }
    dropIfUnused(key);
  }

  private void dropIfUnused(Key key) {
    if (key.holding == 0 && key.line.isEmpty()) {
      key.owner.remove(key.name, key);
    }
  }

  private static Key firstFull(List<String> names, Map<String, Key> keys, int capacity) {
    for (String name : names) {
      Key key = keys.get(name);
      if (key != null && key.holding >= capacity) {
        return key;
      }
    }
    return null;
  }

  private static Key key(Map<String, Key> keys, String name, int capacity) {
    return keys.computeIfAbsent(name, n -> new Key(keys, n, capacity));
  }

  /** Completes the futures of this change, after the state is settled; a completion may change the budget again. */
  private void complete() {
    if (completing) {
      return;
    }
    completing = true;
    try {
      Runnable next;
      while ((next = completions.poll()) != null) {
        next.run();
      }
    } finally {
      completing = false;
    }
  }

  /** One attempt as the budget sees it: its sender, its destinations once known, and what it holds. */
  static final class Ticket {
    private final String sender;
    private List<String> destinations;
    /** Destinations this attempt has a call out to (each keeps its place until the call is over). */
    private final Set<String> calling = new HashSet<>(2);
    private Promise<Ticket> admitted = Promise.promise();
    private boolean running;
    private boolean holdsKeys;

    private Ticket(String sender) {
      this.sender = sender;
    }
  }

  /** A sender or a destination: how many attempts hold one of its places, and who waits for one. */
  private static final class Key {
    private final Map<String, Key> owner;
    private final String name;
    private final int capacity;
    private final ArrayDeque<Ticket> line = new ArrayDeque<>();
    private int holding;

    private Key(Map<String, Key> owner, String name, int capacity) {
      this.owner = owner;
      this.name = name;
      this.capacity = capacity;
    }
  }

  private static final class TurnedAway extends RuntimeException {
    private TurnedAway() {
      super("the attempt's line is full: its row stays accepted for the retry worker", null, false, false);
    }
  }
}
