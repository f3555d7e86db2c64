package queen.server.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;

/** Applies acknowledgements: the only thing that moves a cursor. */
public final class AckStore {
  private static final String ACK = "select * from queen.log_ack_v1(?, ?, ?, ?, ?)";

  private final Database db;

  public AckStore(Database db) {
    this.db = db;
  }

  /** Applies the acks in one transaction; outcomes come back in input order. */
  public List<AckOutcome> ack(String group, List<AckItem> items) {
    return db.transaction(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(ACK)) {
            ps.setString(1, group);
            ps.setArray(
                2, c.createArrayOf("uuid", items.stream().map(AckItem::partitionId).toArray()));
            ps.setArray(
                3, c.createArrayOf("text", items.stream().map(AckItem::transactionId).toArray()));
            ps.setArray(4, c.createArrayOf("uuid", items.stream().map(AckItem::leaseId).toArray()));
            ps.setArray(5, c.createArrayOf("text", items.stream().map(AckItem::status).toArray()));
            List<AckOutcome> out = new ArrayList<>(items.size());
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(
                    new AckOutcome(
                        rs.getInt("idx"),
                        rs.getBoolean("success"),
                        rs.getString("error"),
                        rs.getString("queue_name"),
                        rs.getString("partition_name"),
                        rs.getBoolean("lease_released"),
                        rs.getBoolean("dlq")));
              }
            }
            return out;
          }
        });
  }
}
