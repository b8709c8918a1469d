package org.shine.tools.soak;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.shine.server.adapter.HubClient;
import org.shine.server.dm.DmContainer;
import org.shine.server.util.Json;
import org.shine.tools.soak.SoakUsers.UserPair;

/**
 * The soak's hub polling: the first {@code --hub-users} recipients each long-poll their other server's hub on a
 * thread of their own and ack every event after it is seen; what they saw (each message's revisions, events repeated
 * under a new delivery id) is checked at the end.
 */
final class HubPollers {
  private final SoakSettings settings;
  private final SoakCounters counters;
  private final Map<String, Long> deliveries = new ConcurrentHashMap<>();
  private final Set<String> messages = ConcurrentHashMap.newKeySet();
  private final LongAdder duplicates = new LongAdder();
  private final List<Thread> pollers = new ArrayList<>();
  private volatile boolean on = true;

  HubPollers(SoakSettings settings, SoakCounters counters) {
    this.settings = settings;
    this.counters = counters;
  }

  /** One thread per polling recipient, logged in to its hub before this returns. */
  void start(List<UserPair> pairs) {
    for (int i = 0; i < settings.hubUsers(); i++) {
      UserPair pair = pairs.get(i);
      String httpUrl = SoakSettings.httpOf(settings.url(2 + (i + 1) % 2));
      HubClient hub = new HubClient(httpUrl);
      HubClient.Tokens tokens;
      try {
        tokens = hub.login(pair.recipient, pair.recipientKey, null);
      } catch (IOException | InterruptedException e) {
        throw new IllegalStateException("hub login of " + pair.recipient + " at " + httpUrl + " failed", e);
      }
      HubClient.Tokens first = tokens;
      pollers.add(SoakThreads.thread("soak-hub-" + i, () -> poll(hub, pair, first)));
    }
  }

  /** Ends every poller after its poll under way (at most 20 s each). */
  void stop() throws InterruptedException {
    on = false;
    for (Thread poller : pollers) {
      poller.join(TimeUnit.SECONDS.toMillis(20));
    }
  }

  /** True when some hub event carried revision {@code revision} of {@code baseKey}. */
  boolean saw(String baseKey, long revision) {
    return messages.contains(baseKey + "|" + revision);
  }

  long events() {
    return deliveries.size();
  }

  /** Events that came again under another delivery id. */
  long duplicates() {
    return duplicates.sum();
  }

  private void poll(HubClient hub, UserPair pair, HubClient.Tokens first) {
    HubClient.Tokens tokens = first;
    while (on) {
      try {
        HttpResponse<String> response = hub.poll(tokens.accessToken(), 5);
        counters.op("hub-poll");
        switch (response.statusCode()) {
          case 200 -> tokens = onEvent(hub, pair, tokens, response);
          case 204, 408 -> { }
          case 401 -> tokens = renew(hub, pair, tokens);
          default -> error("hub " + response.statusCode());
        }
      } catch (IOException e) {
        error("hub unreachable");
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private static HubClient.Tokens renew(HubClient hub, UserPair pair, HubClient.Tokens tokens)
      throws IOException, InterruptedException {
    HubClient.Tokens renewed = hub.refresh(tokens.refreshToken());
    return renewed != null ? renewed : hub.login(pair.recipient, pair.recipientKey, null);
  }

  /** Takes an event and ACKs it; answers the tokens to go on with (renewed when the access token ran out between). */
  private HubClient.Tokens onEvent(HubClient hub, UserPair pair, HubClient.Tokens tokens,
      HttpResponse<String> response) throws IOException, InterruptedException {
    String deliveryId = response.headers().firstValue("X-Delivery-Id").orElse("");
    JsonNode event = Json.MAPPER.readTree(response.body());
    Long id = Long.parseLong(deliveryId);
    Long before = deliveries.putIfAbsent(event.path("eventKey").asText(), id);
    if (before != null && !before.equals(id)) {
      duplicates.increment();
    }
    counters.op("hub-event");
    if ("IncomingDirectMessage".equals(event.path("op").asText())) {
      DmContainer container = SoakUsers.container(event.path("payload").path("blobB64").asText());
      if (container != null) {
        messages.add(container.baseKey() + "|" + container.revision());
      }
    }
    HttpResponse<String> ack = hub.ack(tokens.accessToken(), deliveryId);
    if (ack.statusCode() == 401) {
      // the access token expired after the poll that brought the event: renew it and ACK again, as an adapter does
      tokens = renew(hub, pair, tokens);
      ack = hub.ack(tokens.accessToken(), deliveryId);
    }
    if (ack.statusCode() != 200) {
      error("hub ack " + ack.statusCode());
    }
    return tokens;
  }

  /** A failed poll: counted, and the next one a second later (the server may be restarting). */
  private void error(String code) {
    counters.error(code);
    SoakThreads.sleepQuietly(1_000);
  }
}
