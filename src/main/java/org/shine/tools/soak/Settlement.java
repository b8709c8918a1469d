package org.shine.tools.soak;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.KeyFile;
import org.shine.tools.ledger.LedgerResult;
import org.shine.tools.ledger.MessageLedger;
import org.shine.tools.soak.SoakUsers.UserPair;

/**
 * The end of a soak's load: reads every conversation on all four servers, page by page, into the ledger until it is
 * clean, every sender copy is delivered and the hub pollers saw every final revision sent to them, or {@code
 * --settle-s} runs out; the last reading counts.
 */
final class Settlement {
  private static final int PAGE = 200;

  private final SoakSettings settings;
  private final SoakUsers users;
  private final MessageLedger ledger;
  private final HubPollers hub;

  Settlement(SoakSettings settings, SoakUsers users, MessageLedger ledger, HubPollers hub) {
    this.settings = settings;
    this.users = users;
    this.ledger = ledger;
    this.hub = hub;
  }

  /** The ledger's result once settled or out of time; {@code elapsed} heads each "settling" line. */
  LedgerResult settle(Supplier<String> elapsed) {
    long deadline = System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(settings.settleS());
    List<String> names = settings.names();
    Map<String, ShineClient> readers = new ConcurrentHashMap<>();
    try {
      while (true) {
        readAll(readers, names);
        LedgerResult result = ledger.result(names.subList(2, 4), names.subList(0, 2));
        long hubMissing = hubMissing();
        boolean settled = result.ok() && result.unsettled(Set.of("delivered")) == 0 && hubMissing == 0
            && hub.duplicates() == 0;
        if (settled || System.currentTimeMillis() > deadline) {
          return result;
        }
        System.out.printf(Locale.ROOT, "%s settling: lost %d, not delivered yet %d, hub missing %d, wrong entries %s%n",
            elapsed.get(), result.lost(), result.unsettled(Set.of("delivered")), hubMissing, result.problems());
        SoakThreads.sleepQuietly(5_000);
      }
    } finally {
      readers.values().forEach(ShineClient::close);
    }
  }

  /** One round: every pair's conversation as its sender sees it on s1, s2 and its recipient on s3, s4. */
  private void readAll(Map<String, ShineClient> readers, List<String> names) {
    ledger.clearObservations();
    for (UserPair pair : users.pairs()) {
      for (int s = 0; s < 4; s++) {
        boolean senderSide = s < 2;
        String name = names.get(s);
        String owner = senderSide ? pair.sender : pair.recipient;
        ShineClient reader = reader(readers, name + "|" + owner, settings.url(s), owner,
            senderSide ? pair.senderKey : pair.recipientKey);
        ledger.observe(name, senderSide, history(reader, senderSide ? pair.recipient : pair.sender));
      }
    }
  }

  /** Accepted messages to polling users whose final revision no hub event carried. */
  long hubMissing() {
    Set<String> polling = new HashSet<>();
    for (int i = 0; i < settings.hubUsers(); i++) {
      polling.add(users.pairs().get(i).recipient);
    }
    return ledger.messages().stream()
        .filter(m -> m.accepted() && !m.uncertain && polling.contains(m.recipient))
        .filter(m -> !hub.saw(m.baseKey, m.acceptedRevision.get()))
        .count();
  }

  private ShineClient reader(Map<String, ShineClient> readers, String id, String url, String login, KeyFile key) {
    ShineClient reader = readers.get(id);
    if (reader == null || reader.closed()) {
      reader = users.login(url, login, key, null).await();
      readers.put(id, reader);
    }
    return reader;
  }

  /** The owner's whole conversation with {@code peer}, newest first, page by page. */
  private static List<JsonNode> history(ShineClient reader, String peer) {
    List<JsonNode> entries = new ArrayList<>();
    long before = Long.MAX_VALUE;
    while (true) {
      JsonNode page = reader.request("GetDirectMessages", ShineClient.object().put("peer", peer)
          .put("beforeCreatedAtMs", before).put("limit", PAGE), 30_000).await().path("messages");
      page.forEach(entries::add);
      if (page.size() < PAGE) {
        return entries;
      }
      before = Long.parseLong(page.get(page.size() - 1).path("baseKey").asText().split("\\|")[2]);
    }
  }
}
