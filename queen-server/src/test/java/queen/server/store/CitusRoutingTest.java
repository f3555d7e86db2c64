package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.item;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.util.PSQLWarning;
import queen.server.CitusCluster;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * On Citus, each single-partition push, pop and ack goes to the one worker that holds the
 * partition: the statements the broker runs are called here with Citus logging every command it
 * sends to a worker ({@code citus.log_remote_commands}), and every logged command must name that
 * worker. The counts are the figures of docs/operations.md.
 */
@EnabledIfEnvironmentVariable(
    named = CitusCluster.URL_VARIABLE,
    matches = ".+",
    disabledReason = CitusCluster.NOT_CONFIGURED)
class CitusRoutingTest {
  @RegisterExtension static final TestBroker broker = TestBroker.onCitus(Map.of());

  private static final String QUEUE = "routed";
  private static final int PARTITIONS = 8;
  private static final String GROUP = "__QUEUE_MODE__";

  /** What one call sent to the workers: the servers it reached and the commands. */
  record Remote(Set<String> servers, List<String> sent) {
    int commands() {
      return sent.size();
    }

    /** How many of the commands name the table. */
    long reading(String table) {
      return sent.stream().filter(command -> command.contains(table)).count();
    }
  }

  @BeforeAll
  static void partitions() {
    List<ObjectNode> items = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      items.add(item(QUEUE, "r" + p, "seed-" + p, object().put("p", p)));
    }
    // a partition of its own for the ack by transactionId: the other test leaves leases behind
    items.add(item(QUEUE, "txn", "seed-txn", object()));
    assertThat(broker.post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
    // queue mode's first pop on a queue records its subscription, once per queue, in a reference
    // table written on every node (as a named group's does); written here, as the wildcard pops'
    // bulk seed would, so that each partition's first pop below reaches its own worker alone
    broker.sql(
        "insert into queen.consumer_groups_metadata (queue_id, consumer_group, subscription_mode)"
            + " select id, '__QUEUE_MODE__', 'all' from queen.queues where name = '"
            + QUEUE
            + "'");
  }

  @Test
  void singlePartitionPushPopAndAckEachReachOnlyThePartitionsWorker() throws Exception {
    List<String> figures = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      String name = "r" + p;
      UUID pid = partitionId(name);
      String worker = workerOf(pid);
      try (Connection c = broker.connect()) {
        logRemoteCommands(c);

        Remote push = push(c, pid, "routed-" + p);
        assertThat(push.servers()).as("push to %s", name).containsExactly(worker);

        // the first pop of the partition by the group creates its cursor, the next one finds it
        Pop first = pop(c, name);
        assertThat(first.remote().servers()).as("first pop of %s", name).containsExactly(worker);
        Remote ack = ackBatch(c, pid, first.lease(), first.batchEnd());
        assertThat(ack.servers()).as("ack of %s", name).containsExactly(worker);
        push(c, pid, "routed-again-" + p);
        Pop next = pop(c, name);
        assertThat(next.remote().servers()).as("next pop of %s", name).containsExactly(worker);
        figures.add(
            push.commands()
                + "/"
                + first.remote().commands()
                + "/"
                + next.remote().commands()
                + "/"
                + ack.commands());
      }
    }
    System.out.println(
        "remote commands per push/first pop/next pop/ack, per partition: " + figures);
  }

  @Test
  void anAckByTransactionIdReachesOnlyThePartitionsWorker() throws Exception {
    UUID pid = partitionId("txn");
    try (Connection c = broker.connect()) {
      logRemoteCommands(c);
      push(c, pid, "by-txn");
      UUID lease = pop(c, "txn").lease();
      try (PreparedStatement ps =
          c.prepareStatement(
              "select success from queen.log_ack_v1(?, ?, ?, ?, array['completed'])")) {
        ps.setString(1, GROUP);
        ps.setArray(2, c.createArrayOf("uuid", new Object[] {pid}));
        ps.setArray(3, c.createArrayOf("text", new Object[] {"by-txn"}));
        ps.setArray(4, c.createArrayOf("uuid", new Object[] {lease}));
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getBoolean(1)).isTrue();
        }
        assertThat(remote(ps).servers()).containsExactly(workerOf(pid));
      }
    }
  }

  @Test
  void creatingAPartitionReachesOnlyItsWorker() throws Exception {
    try (Connection c = broker.connect()) {
      logRemoteCommands(c);
      try (PreparedStatement ps =
          c.prepareStatement(
              "select partition_id from queen.log_ensure_partitions_v1(array[?], array['fresh'])")) {
        ps.setString(1, QUEUE);
        UUID pid;
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          pid = rs.getObject(1, UUID.class);
        }
        assertThat(remote(ps).servers()).containsExactly(workerOf(pid));
      }
    }
  }

  // a page of messages reads the segments of each shard's partitions in one statement: one per
  // partition took 2 s for a page of 200 at 1,000 partitions
  @Test
  void aPageOfMessagesReadsTheSegmentsOfEachShardOnce() throws Exception {
    String withMessages =
        " from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = '"
            + QUEUE
            + "' and p.newest_created_at is not null";
    long partitions = broker.sqlLong("select count(*)" + withMessages);
    long shards =
        broker.sqlLong(
            "select count(distinct get_shard_id_for_distribution_column('queen.log_partitions',"
                + " p.id))"
                + withMessages);
    assertThat(shards).as("two partitions share a shard").isLessThan(partitions);
    try (Connection c = broker.connect()) {
      logRemoteCommands(c);
      try (PreparedStatement ps =
          c.prepareStatement(
              "select count(*) from queen.messages_list_v1(?, null, null, null, null,"
                  + " '-infinity', 'infinity', 200, 0)")) {
        ps.setString(1, QUEUE);
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getLong(1)).isGreaterThanOrEqualTo(partitions);
        }
        assertThat(remote(ps).reading("log_segments")).isEqualTo(shards);
      }
    }
  }

  /** What a pop of one partition leased, and what it sent to the workers. */
  record Pop(UUID lease, long batchEnd, Remote remote) {}

  private static Pop pop(Connection c, String partition) throws SQLException {
    UUID lease = UUID.randomUUID();
    long batchEnd = -1;
    try (PreparedStatement ps =
        c.prepareStatement(
            "select base_offset, start_idx, take"
                + " from queen.log_pop_specific_v1(?, ?, ?, ?, 10, false)")) {
      ps.setString(1, QUEUE);
      ps.setString(2, partition);
      ps.setString(3, GROUP);
      ps.setObject(4, lease);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          batchEnd = rs.getLong(1) + rs.getInt(2) + rs.getInt(3) - 1;
        }
      }
      assertThat(batchEnd).as("the pop of %s delivered", partition).isGreaterThanOrEqualTo(0);
      return new Pop(lease, batchEnd, remote(ps));
    }
  }

  private static Remote push(Connection c, UUID pid, String transactionId) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "select * from queen.log_push_v1(?, array[1], array['\\x00'::bytea], array[1],"
                + " array[0], ?)")) {
      ps.setArray(1, c.createArrayOf("uuid", new Object[] {pid}));
      ps.setArray(2, c.createArrayOf("text", new Object[] {transactionId}));
      ps.executeQuery().close();
      return remote(ps);
    }
  }

  private static Remote ackBatch(Connection c, UUID pid, UUID lease, long batchEnd)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("select acked from queen.log_ack_batch_v1(?, ?, ?)")) {
      Array pids = c.createArrayOf("uuid", new Object[] {pid});
      ps.setArray(1, pids);
      ps.setArray(2, c.createArrayOf("uuid", new Object[] {lease}));
      ps.setArray(3, c.createArrayOf("bigint", new Object[] {batchEnd}));
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getBoolean(1)).as("the lease's batch was acked").isTrue();
      }
      return remote(ps);
    }
  }

  /** Every command Citus sends to a worker is reported to this session as a notice. */
  private static void logRemoteCommands(Connection c) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("set citus.log_remote_commands = on");
      st.execute("set client_min_messages = notice");
    }
  }

  /** The servers the statement's logged commands went to ("on server user@host:port ..."). */
  private static Remote remote(Statement st) throws SQLException {
    Set<String> servers = new TreeSet<>();
    List<String> sent = new ArrayList<>();
    for (SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
      if (w instanceof PSQLWarning pw
          && pw.getServerErrorMessage() != null
          && pw.getServerErrorMessage().getMessage().startsWith("issuing ")) {
        sent.add(pw.getServerErrorMessage().getMessage());
        String detail = pw.getServerErrorMessage().getDetail();
        String server = detail.substring(detail.indexOf('@') + 1, detail.indexOf(' ', 10));
        servers.add(server);
      }
    }
    st.clearWarnings();
    return new Remote(servers, sent);
  }

  private static UUID partitionId(String name) {
    return UUID.fromString(
        broker.sqlText(
            "select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
                + " where q.name = '"
                + QUEUE
                + "' and p.name = '"
                + name
                + "'"));
  }

  /** host:port of the worker holding the partition's shard. */
  private static String workerOf(UUID pid) {
    return broker.sqlText(
        "select nodename || ':' || nodeport from citus_shards"
            + " where table_name = 'queen.log_partitions'::regclass"
            + " and shardid = get_shard_id_for_distribution_column('queen.log_partitions', '"
            + pid
            + "'::uuid)");
  }
}
