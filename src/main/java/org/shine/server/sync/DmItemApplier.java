package org.shine.server.sync;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.db.SyncRepository.Sibling;
import org.shine.server.delivery.SyncedItem;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;
import org.shine.server.dm.DmKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stores one DmSyncBatch item pulled from a sibling (PROTOCOL §8 v3), or says why not: the item's shape and
 * containers are read here (a type whose containers are not of its kinds is malformed), the delivery instance
 * stores it as synced ({@code dm.apply-synced}: verified, clock-checked, idempotent), and a failure is handled by
 * {@link Triage}: quarantined (ACKed), left for the next run (not ACKed), or — a bad signature — checked again once
 * the author's card is refreshed, and quarantined only if it still fails.
 */
final class DmItemApplier {
  private static final Logger LOG = LoggerFactory.getLogger(DmItemApplier.class);
  /** The kinds of each item type's blobs, in order. */
  private static final Map<String, List<DmKind>> KINDS = Map.of(
      "pair", List.of(DmKind.INCOMING, DmKind.OUTGOING),
      "incoming", List.of(DmKind.INCOMING),
      "receipt", List.of(DmKind.READ_RECEIPT),
      "tombstone", List.of(DmKind.TOMBSTONE));
  private final EventBus bus;
  private final Quarantine quarantine;
  private final CardRefresh cards;

  DmItemApplier(EventBus bus, Quarantine quarantine, CardRefresh cards) {
    this.bus = Objects.requireNonNull(bus);
    this.quarantine = Objects.requireNonNull(quarantine);
    this.cards = Objects.requireNonNull(cards);
  }

  /** Stores {@code item} of an owner routed to both servers; answers its fate. */
  Future<ItemResult> apply(PullRun run, PulledItem item) {
    ParsedItem parsed;
    try {
      parsed = parse(item.owner(), item.json());
    } catch (MalformedItemException e) {
      return quarantine.put(item, e.author(), Triage.MALFORMED.reason(), e.getMessage());
    }
    return store(parsed, item.source())
        .map(v -> ItemResult.stored(item.syncId()))
        .recover(failure -> failed(run, item, parsed, failure, false));
  }

  /** Stores an item read by {@link #parse} as synced from {@code source}. */
  Future<Void> store(ParsedItem parsed, Sibling source) {
    SyncedItem synced = new SyncedItem(parsed.owner(), parsed.type().equals("pair"), parsed.blobs(),
        source.serverLogin(), source.url());
    return BusReplies.<Boolean>request(bus, Addresses.DM_APPLY_SYNCED, synced).mapEmpty();
  }

  private Future<ItemResult> failed(PullRun run, PulledItem item, ParsedItem parsed, Throwable failure,
      boolean refreshed) {
    Triage triage = Triage.of(failure);
    if (triage == Triage.RETRY) {
      LOG.debug("synced item left for the next run [syncId: {}, sibling: {}]: {}", item.syncId(),
          item.source().serverLogin(), failure.getMessage());
      return Future.succeededFuture(ItemResult.left(item.syncId()));
    }
    if (triage == Triage.BAD_SIGNATURE && !refreshed) {
      return run.refreshOnce(parsed.author(), author -> cards.refresh(author, item.source()))
          .map(refresh -> refresh.compose(changed -> store(parsed, item.source()))
              .map(v -> ItemResult.stored(item.syncId()))
              .recover(again -> failed(run, item, parsed, again, true)))
          // this run has refreshed as many cards as it may: the item waits for the next run
          .orElse(Future.succeededFuture(ItemResult.left(item.syncId())));
    }
    return quarantine.put(item, parsed.author(), triage.reason(), failure.getMessage());
  }

  /**
   * Reads a DM item of {@code owner}: a known type, {@code blobsB64} of standard base64, each a container of the
   * type's kind, one author. Throws {@link MalformedItemException} otherwise.
   */
  static ParsedItem parse(String owner, JsonNode json) throws MalformedItemException {
    String type = json.path("type").asText("");
    List<DmKind> kinds = KINDS.get(type);
    if (kinds == null) {
      throw new MalformedItemException(null, "unknown item type \"" + type + "\"");
    }
    JsonNode blobsB64 = json.path("blobsB64");
    if (!blobsB64.isArray() || blobsB64.size() != kinds.size()) {
      throw new MalformedItemException(null, "a " + type + " item carries " + kinds.size() + " blob(s) in blobsB64");
    }
    List<byte[]> blobs = new ArrayList<>();
    String author = null;
    for (int i = 0; i < kinds.size(); i++) {
      DmContainer container = container(blobsB64.get(i), i, author);
      if (container.kind() != kinds.get(i)) {
        throw new MalformedItemException(container.from(), "blob " + i + " of a " + type + " item is kind "
            + container.kind().code() + ", not " + kinds.get(i).code());
      }
      if (author != null && !author.equals(container.from())) {
        throw new MalformedItemException(author, "the blobs of a pair have different authors");
      }
      author = container.from();
      blobs.add(container.bytes());
    }
    return new ParsedItem(owner, type, blobs, author);
  }

  private static DmContainer container(JsonNode blob, int index, String author) throws MalformedItemException {
    if (!blob.isTextual()) {
      throw new MalformedItemException(author, "blob " + index + " is not a base64 string");
    }
    try {
      return DmCodec.parse(Base64.getDecoder().decode(blob.asText()));
    } catch (IllegalArgumentException e) {
      throw new MalformedItemException(author, "blob " + index + " is not standard base64");
    } catch (DmFormatException e) {
      throw new MalformedItemException(author, "blob " + index + " is not a SHiNE_DM container: " + e.getMessage());
    }
  }

  /** A DM item whose shape and containers are sound; {@code author} signed them. */
  record ParsedItem(String owner, String type, List<byte[]> blobs, String author) {
    ParsedItem {
      blobs = List.copyOf(blobs);
    }
  }
}
