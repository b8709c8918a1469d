package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The node's connection bounds (PROTOCOL §11 {@code maxConnections}, {@code maxConnectionsPerIp}). */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ConnectionBudgetTest {

  @Test
  @DisplayName("at most max connections are open in all; a released place can be taken again")
  void totalBound() {
    ConnectionBudget budget = new ConnectionBudget(3, 0);
    assertThat(budget.tryAcquire("10.0.0.1")).isNull();
    assertThat(budget.tryAcquire("10.0.0.2")).isNull();
    assertThat(budget.tryAcquire("10.0.0.3")).isNull();

    assertThat(budget.tryAcquire("10.0.0.4")).contains("maximum of 3 connections");
    assertThat(budget.open()).isEqualTo(3);

    budget.release("10.0.0.2");
    assertThat(budget.open()).isEqualTo(2);
    assertThat(budget.tryAcquire("10.0.0.4")).isNull();
    assertThat(budget.tryAcquire("10.0.0.5")).isNotNull();
    assertThat(budget.open()).isEqualTo(3);
  }

  @Test
  @DisplayName("maxConnectionsPerIp 0 lets every place go to one address")
  void noPerAddressBound() {
    ConnectionBudget budget = new ConnectionBudget(5, 0);
    for (int i = 0; i < 5; i++) {
      assertThat(budget.tryAcquire("127.0.0.1")).isNull();
    }
    assertThat(budget.tryAcquire("127.0.0.1")).isNotNull();
  }

  @Test
  @DisplayName("one address holds at most maxPerAddress places while others still get theirs")
  void perAddressBound() {
    ConnectionBudget budget = new ConnectionBudget(10, 2);
    assertThat(budget.tryAcquire("127.0.0.1")).isNull();
    assertThat(budget.tryAcquire("127.0.0.1")).isNull();

    assertThat(budget.tryAcquire("127.0.0.1")).contains("maximum of 2 connections from one address");
    // the refusal took no place from the total
    assertThat(budget.open()).isEqualTo(2);
    assertThat(budget.tryAcquire("127.0.0.2")).isNull();
    assertThat(budget.tryAcquire("127.0.0.2")).isNull();
    assertThat(budget.tryAcquire("127.0.0.2")).isNotNull();
    assertThat(budget.open()).isEqualTo(4);

    budget.release("127.0.0.1");
    assertThat(budget.tryAcquire("127.0.0.1")).isNull();
    assertThat(budget.tryAcquire("127.0.0.1")).isNotNull();
  }

  @Test
  @DisplayName("the total bound applies before the per-address one, and releasing every place empties the budget")
  void bothBoundsAndFullRelease() {
    ConnectionBudget budget = new ConnectionBudget(3, 2);
    assertThat(budget.tryAcquire("a")).isNull();
    assertThat(budget.tryAcquire("b")).isNull();
    assertThat(budget.tryAcquire("c")).isNull();
    assertThat(budget.tryAcquire("d")).contains("maximum of 3 connections");

    budget.release("a");
    budget.release("b");
    budget.release("c");
    assertThat(budget.open()).isZero();
    // every address starts again from zero
    assertThat(budget.tryAcquire("a")).isNull();
    assertThat(budget.tryAcquire("a")).isNull();
    assertThat(budget.tryAcquire("a")).contains("from one address");
  }
}
