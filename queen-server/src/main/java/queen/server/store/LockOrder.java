package queen.server.store;

import java.util.Comparator;
import java.util.UUID;

/** The one order in which partition rows are locked, by pushes and acks alike. */
public final class LockOrder {
  private LockOrder() {}

  /** PostgreSQL orders uuids by unsigned bytes; locking in that order everywhere avoids cycles. */
  public static final Comparator<UUID> PARTITIONS =
      Comparator.comparing((UUID u) -> u.getMostSignificantBits(), Long::compareUnsigned)
          .thenComparing(UUID::getLeastSignificantBits, Long::compareUnsigned);
}
