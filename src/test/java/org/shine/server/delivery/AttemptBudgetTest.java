package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.delivery.AttemptBudget.Ticket;

class AttemptBudgetTest {
  private static final String TARPIT = "ws://127.1.0.9:7000/ws";
  private static final String HONEST = "ws://127.0.0.1:7103/ws";
  private static final String OTHER = "ws://127.0.0.1:7104/ws";

  @Test
  @DisplayName("at most maxRunning attempts run; the others wait first come, first served and run as places free")
  void runningPlaces() {
    AttemptBudget budget = new AttemptBudget(2, 10, 10, 10);
    List<Future<Ticket>> entered = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      entered.add(budget.enter("s" + i));
    }
    assertThat(entered).extracting(Future::succeeded).containsExactly(true, true, false, false);
    assertThat(budget.running()).isEqualTo(2);
    assertThat(budget.waiting()).isEqualTo(2);

    budget.finished(entered.get(1).result());

    assertThat(entered).extracting(Future::succeeded).containsExactly(true, true, true, false);
    assertThat(budget.running()).isEqualTo(2);
  }

  @Test
  @DisplayName("one sender's attempts beyond perSender wait in its line, holding no running place, while other"
      + " senders' attempts run")
  void perSender() {
    AttemptBudget budget = new AttemptBudget(4, 2, 10, 10);
    List<Future<Ticket>> mallory = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      mallory.add(budget.enter("mallory"));
    }
    Future<Ticket> alice = budget.enter("alice");

    assertThat(mallory).extracting(Future::succeeded).containsExactly(true, true, false, false, false);
    assertThat(budget.holding("mallory")).isEqualTo(2);
    assertThat(alice.succeeded()).as("alice runs on a place mallory's waiting attempts do not hold").isTrue();
    assertThat(budget.running()).isEqualTo(3);

    budget.finished(mallory.get(0).result());

    assertThat(mallory.get(2).succeeded()).as("mallory's next attempt takes the freed sender place").isTrue();
    assertThat(budget.holding("mallory")).isEqualTo(2);
  }

  @Test
  @DisplayName("an attempt whose destination is full gives back its running place and its sender's: attempts to"
      + " other servers run meanwhile, and it runs once the destination has room")
  void perDestination() {
    AttemptBudget budget = new AttemptBudget(2, 10, 1, 10);
    Ticket first = budget.enter("m1").result();
    assertThat(budget.toward(first, List.of(TARPIT)).succeeded()).isTrue();
    Ticket second = budget.enter("m2").result();

    Future<Ticket> parked = budget.toward(second, List.of(TARPIT));

    assertThat(parked.isComplete()).isFalse();
    assertThat(budget.running()).isEqualTo(1);
    assertThat(budget.holding("m2")).isZero();
    assertThat(budget.holdingTowards(TARPIT)).isEqualTo(1);
    Ticket honest = budget.enter("alice").result();
    assertThat(budget.toward(honest, List.of(HONEST)).succeeded()).as("an honest attempt runs beside").isTrue();

    budget.finished(honest);
    budget.finished(first);

    assertThat(parked.succeeded()).as("the waiting attempt runs once the tarpit's place is free").isTrue();
    assertThat(budget.holdingTowards(TARPIT)).as("it holds its destination without naming it again").isEqualTo(1);
    assertThat(budget.holding("m2")).isEqualTo(1);
    budget.finished(second);
    assertNothingHeld(budget);
  }

  @Test
  @DisplayName("a destination's place counts a call in flight: once the call is over the next attempt calls, while"
      + " the first still records its outcome")
  void placeFreedWhenTheCallIsOver() {
    AttemptBudget budget = new AttemptBudget(4, 10, 1, 10);
    Ticket first = budget.enter("alice").result();
    budget.toward(first, List.of(HONEST)).result();
    budget.calling(first, HONEST);
    Ticket second = budget.enter("bob").result();
    Future<Ticket> waits = budget.toward(second, List.of(HONEST));
    assertThat(waits.isComplete()).as("one call in flight fills a destination of one place").isFalse();

    budget.answered(first, HONEST);

    assertThat(waits.succeeded()).as("the answer frees the place before the first attempt finishes").isTrue();
    assertThat(budget.holdingTowards(HONEST)).isEqualTo(1);
    assertThat(budget.running()).as("the first attempt still runs (it records its outcome)").isEqualTo(2);
    budget.answered(first, HONEST);
    assertThat(budget.holdingTowards(HONEST)).as("a second answer of the same call gives nothing back").isEqualTo(1);
    budget.finished(first);
    budget.finished(second);
    assertNothingHeld(budget);
  }

  @Test
  @DisplayName("a call still out when its attempt finishes (the other route answered first) keeps its place until"
      + " it is over")
  void callOutlivesItsAttempt() {
    AttemptBudget budget = new AttemptBudget(4, 10, 1, 10);
    Ticket first = budget.enter("alice").result();
    budget.toward(first, List.of(HONEST, OTHER)).result();
    budget.calling(first, HONEST);
    budget.calling(first, OTHER);
    budget.answered(first, HONEST);

    budget.finished(first);

    assertThat(budget.running()).isZero();
    assertThat(budget.holding("alice")).isZero();
    assertThat(budget.holdingTowards(HONEST)).isZero();
    assertThat(budget.holdingTowards(OTHER)).as("the slow call still holds its place").isEqualTo(1);
    Ticket second = budget.enter("bob").result();
    Future<Ticket> waits = budget.toward(second, List.of(OTHER));
    assertThat(waits.isComplete()).isFalse();

    budget.answered(first, OTHER);

    assertThat(waits.succeeded()).isTrue();
    budget.finished(second);
    assertNothingHeld(budget);
  }

  @Test
  @DisplayName("an attempt to two servers waits until both have room, and then holds a place at each")
  void twoDestinations() {
    AttemptBudget budget = new AttemptBudget(4, 10, 1, 10);
    Ticket other = budget.enter("bob").result();
    budget.toward(other, List.of(OTHER));
    Ticket both = budget.enter("alice").result();

    Future<Ticket> waiting = budget.toward(both, List.of(HONEST, OTHER));

    assertThat(waiting.isComplete()).isFalse();
    assertThat(budget.holdingTowards(HONEST)).as("no place is held while waiting").isZero();
    budget.finished(other);
    assertThat(waiting.succeeded()).isTrue();
    assertThat(budget.holdingTowards(HONEST)).isEqualTo(1);
    assertThat(budget.holdingTowards(OTHER)).isEqualTo(1);
    budget.finished(both);
    assertNothingHeld(budget);
  }

  @Test
  @DisplayName("a full line turns the attempt away: it fails TURNED_AWAY at once and holds nothing")
  void fullLine() {
    AttemptBudget budget = new AttemptBudget(10, 1, 1, 1);
    Ticket running = budget.enter("mallory").result();
    Future<Ticket> waiting = budget.enter("mallory");
    Future<Ticket> away = budget.enter("mallory");

    assertThat(waiting.isComplete()).isFalse();
    assertThat(away.failed()).isTrue();
    assertThat(away.cause()).isSameAs(AttemptBudget.TURNED_AWAY);
    assertThat(budget.waiting()).isEqualTo(1);
    budget.finished(running);
    budget.finished(waiting.result());

    // the same at a destination: one holds the tarpit's place, one waits for it, the third is turned away
    Ticket first = budget.enter("m1").result();
    Ticket second = budget.enter("m2").result();
    Ticket third = budget.enter("m3").result();
    budget.toward(first, List.of(TARPIT));
    Future<Ticket> secondWaits = budget.toward(second, List.of(TARPIT));
    Future<Ticket> thirdAway = budget.toward(third, List.of(TARPIT));

    assertThat(secondWaits.isComplete()).isFalse();
    assertThat(thirdAway.failed()).isTrue();
    assertThat(thirdAway.cause()).isSameAs(AttemptBudget.TURNED_AWAY);
    assertThat(budget.holding("m3")).isZero();
    assertThat(budget.running()).isEqualTo(1);
    budget.finished(third);
    budget.finished(first);
    budget.finished(secondWaits.result());
    assertNothingHeld(budget);
  }

  @Test
  @DisplayName("only a running attempt names its destinations, and only once")
  void towardOnce() {
    AttemptBudget budget = new AttemptBudget(1, 1, 1, 1);
    Ticket ticket = budget.enter("alice").result();
    budget.toward(ticket, List.of(HONEST));
    assertThatThrownBy(() -> budget.toward(ticket, List.of(OTHER))).isInstanceOf(IllegalStateException.class);
  }

  @Test
  @DisplayName("10,000 attempts of random senders to random servers, finished in random order: the bounds hold at"
      + " every step, every attempt runs or is turned away, and at the end no place is held")
  void noLeak() {
    Random random = new Random(20_241_201L);
    int maxRunning = 8;
    int perSender = 3;
    int perDestination = 4;
    AttemptBudget budget = new AttemptBudget(maxRunning, perSender, perDestination, 20);
    List<String> senders = List.of("a", "b", "c", "d", "e");
    List<String> servers = List.of(TARPIT, HONEST, OTHER, "ws://127.0.0.1:7105/ws");
    List<Ticket> running = new ArrayList<>();
    int[] outcomes = new int[2];
    int attempts = 10_000;
    int entered = 0;
    while (entered < attempts || !running.isEmpty()) {
      if (entered < attempts && (running.isEmpty() || random.nextInt(3) > 0)) {
        entered++;
        budget.enter(senders.get(random.nextInt(senders.size()))).onComplete(ar -> {
          if (ar.failed()) {
            outcomes[1]++;
            return;
          }
          List<String> to = new ArrayList<>();
          int n = random.nextInt(3);
          for (int k = 0; k < n; k++) {
            to.add(servers.get(random.nextInt(servers.size())));
          }
          budget.toward(ar.result(), to).onComplete(admitted -> {
            if (admitted.failed()) {
              outcomes[1]++;
            } else {
              running.add(admitted.result());
            }
          });
        });
      } else if (!running.isEmpty()) {
        Ticket done = running.remove(random.nextInt(running.size()));
        outcomes[0]++;
        budget.finished(done);
      }
      assertThat(budget.running()).isLessThanOrEqualTo(maxRunning);
      senders.forEach(s -> assertThat(budget.holding(s)).isLessThanOrEqualTo(perSender));
      servers.forEach(s -> assertThat(budget.holdingTowards(s)).isLessThanOrEqualTo(perDestination));
    }
    assertThat(outcomes[0] + outcomes[1]).isEqualTo(attempts);
    assertThat(outcomes[1]).as("some were turned away, most ran").isPositive().isLessThan(attempts / 2);
    assertNothingHeld(budget);
  }

  private static void assertNothingHeld(AttemptBudget budget) {
    assertThat(budget.running()).isZero();
    assertThat(budget.waiting()).isZero();
    assertThat(budget.keysInUse()).isZero();
  }
}
