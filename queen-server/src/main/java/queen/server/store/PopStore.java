package queen.server.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** Claims work: calls the pop functions and returns raw segment slices for the broker to cut. */
public final class PopStore {
  private static final String SPECIFIC =
      "select * from queen.log_pop_specific_v1(?, ?, ?, ?, ?, ?, ?, ?)";

  private final Database db;

  public PopStore(Database db) {
    this.db = db;
  }

  /** Claims from one named partition; empty when the queue or partition does not exist. */
  public Optional<PartitionClaim> popSpecific(SpecificPop pop) {
    return db.transaction(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(SPECIFIC)) {
            ps.setString(1, pop.queue());
            ps.setString(2, pop.partition());
            ps.setString(3, pop.group());
            ps.setObject(4, pop.workerId());
            ps.setInt(5, pop.batch());
            ps.setBoolean(6, pop.autoAck());
            ps.setString(7, pop.newOnly() ? "new" : "all");
            Sql.setTimestamptz(ps, 8, pop.from());
            try (ResultSet rs = ps.executeQuery()) {
              List<PartitionClaim> claims = readClaims(rs);
              return claims.isEmpty() ? Optional.empty() : Optional.of(claims.getFirst());
            }
          }
        });
  }

  /** Folds rows (one per slice, or one verdict row) into one claim per partition. */
  private static List<PartitionClaim> readClaims(ResultSet rs) throws SQLException {
    List<PartitionClaim> claims = new ArrayList<>();
    UUID current = null;
    List<SegmentSlice> slices = null;
    while (rs.next()) {
      UUID pid = rs.getObject("partition_id", UUID.class);
      Verdict verdict = Verdict.of(rs.getString("verdict"));
      if (!pid.equals(current)) {
        current = pid;
        slices = new ArrayList<>();
        claims.add(
            new PartitionClaim(
                pid,
                rs.getString("partition_name"),
                rs.getString("queue_name"),
                verdict,
                Sql.instant(rs, "retry_at"),
                rs.getInt("attempt"),
                slices));
      }
      if (verdict == Verdict.DELIVERED) {
        slices.add(
            new SegmentSlice(
                rs.getLong("base_offset"),
                rs.getInt("start_idx"),
                rs.getInt("take"),
                rs.getInt("msg_count"),
                Sql.instant(rs, "created_at"),
                rs.getBytes("blob")));
      }
    }
    return claims;
  }
}
