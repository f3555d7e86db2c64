package queen.server.ack;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import queen.server.codec.UuidV7;
import queen.server.pop.DeliveryListener;

class AckRegistryTest {
  private static DeliveryListener.Leased batch(int messages) {
    List<String> txns =
        IntStream.range(0, messages).mapToObj(i -> UUID.randomUUID().toString()).toList();
    return new DeliveryListener.Leased(UUID.randomUUID(), "q", "p", txns, messages - 1);
  }

  @Test
  void leasesAckedElsewhereHoldNoMoreThanItsTransactionIdBound() {
    // acks through another broker leave their leases here until they expire
    AckRegistry registry = new AckRegistry();
    int batch = 1_000;
    List<UUID> kept = new ArrayList<>();
    for (int i = 0; i < AckRegistry.MAX_IDS / batch + 10; i++) {
      UUID lease = UUID.randomUUID();
      DeliveryListener.Leased l = batch(batch);
      registry.leased(lease, "g", List.of(l));
      if (registry.get(lease, l.partitionId()) != null) {
        kept.add(lease);
      }
    }
    assertThat(registry.ids()).isEqualTo(AckRegistry.MAX_IDS);
    assertThat(kept).hasSize(AckRegistry.MAX_IDS / batch);

    UUID first = kept.getFirst();
    registry.remove(first, registry.partitions(first).iterator().next());
    assertThat(registry.ids()).isEqualTo(AckRegistry.MAX_IDS - batch);
    UUID next = UUID.randomUUID();
    DeliveryListener.Leased l = batch(batch);
    registry.leased(next, "g", List.of(l));
    assertThat(registry.get(next, l.partitionId())).as("room again").isNotNull();
  }

  /** A lease id as the brokers mint them, a UUIDv7 of the given millisecond. */
  private static UUID leaseAt(long millis) {
    return new UuidV7(InstantSource.fixed(Instant.ofEpochMilli(millis))).next();
  }

  /** One batch of ten on partition "p" of queue "q", leased to group "g" by each lease in turn. */
  private static DeliveryListener.Leased leasedTo(AckRegistry registry, UUID... leases) {
    DeliveryListener.Leased l = batch(10);
    for (UUID lease : leases) {
      registry.leased(lease, "g", List.of(l));
    }
    return l;
  }

  @Test
  void aReleaseHintOfAnotherBrokerForgetsTheLeaseItEnded() {
    AckRegistry registry = new AckRegistry();
    UUID lease = leaseAt(2_000);
    DeliveryListener.Leased l = leasedTo(registry, lease);
    registry.releasedElsewhere("q", "p", "other-group", lease);
    assertThat(registry.get(lease, l.partitionId())).as("another group's release").isNotNull();
    registry.releasedElsewhere("q", "p", "g", leaseAt(1_000));
    assertThat(registry.get(lease, l.partitionId()))
        .as("the release of an earlier lease: this one was issued here since")
        .isNotNull();

    registry.releasedElsewhere("q", "p", "g", lease);
    assertThat(registry.get(lease, l.partitionId())).isNull();
    assertThat(registry.size()).isZero();
    assertThat(registry.ids()).isZero();
  }

  @Test
  void aReleaseHintOfALaterLeaseForgetsTheEarlierOneRegisteredHere() {
    AckRegistry registry = new AckRegistry();
    UUID expired = leaseAt(1_000);
    DeliveryListener.Leased l = leasedTo(registry, expired);
    // it expired, the pair was leased again through another broker, and that lease ended there
    registry.releasedElsewhere("q", "p", "g", leaseAt(2_000));
    assertThat(registry.get(expired, l.partitionId())).isNull();
    assertThat(registry.ids()).isZero();
  }

  @Test
  void theLeaseAHintNamesGoesThoughALaterOneOfThePairWasIssuedHereSince() {
    AckRegistry registry = new AckRegistry();
    UUID ended = leaseAt(1_000);
    UUID since = leaseAt(2_000);
    DeliveryListener.Leased l = leasedTo(registry, ended, since);
    registry.releasedElsewhere("q", "p", "g", ended);
    assertThat(registry.get(ended, l.partitionId())).isNull();
    assertThat(registry.get(since, l.partitionId())).isNotNull();
    assertThat(registry.ids()).isEqualTo(10);
  }

  @Test
  void aReleaseHintNamingNoLeaseForgetsTheLeaseOfItsPartitionAndGroup() {
    AckRegistry registry = new AckRegistry();
    UUID lease = leaseAt(1_000);
    DeliveryListener.Leased l = leasedTo(registry, lease);
    // a broker from before leases rode on the hint, or acks that named none
    registry.releasedElsewhere("q", "p", "g", null);
    assertThat(registry.get(lease, l.partitionId())).isNull();
  }

  @Test
  void aGroupResetForgetsThatGroupsLeasesOnThatQueue() {
    AckRegistry registry = new AckRegistry();
    UUID reset = UUID.randomUUID();
    UUID otherGroup = UUID.randomUUID();
    UUID otherQueue = UUID.randomUUID();
    DeliveryListener.Leased a = batch(3);
    DeliveryListener.Leased b = batch(3);
    DeliveryListener.Leased c =
        new DeliveryListener.Leased(UUID.randomUUID(), "q2", "p", List.of("x"), 0);
    registry.leased(reset, "g", List.of(a));
    registry.leased(otherGroup, "h", List.of(b));
    registry.leased(otherQueue, "g", List.of(c));

    registry.groupReset("q", "g");
    assertThat(registry.get(reset, a.partitionId())).isNull();
    assertThat(registry.get(otherGroup, b.partitionId())).isNotNull();
    assertThat(registry.get(otherQueue, c.partitionId())).isNotNull();
    registry.groupReset(null, "g");
    assertThat(registry.get(otherQueue, c.partitionId())).as("every queue").isNull();
    assertThat(registry.size()).isEqualTo(1);
  }
}
