package queen.server.ops;

import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** The partition cleanup contract on plain PostgreSQL. */
class PartitionCleanupTest extends PartitionCleanupContract {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("RETENTION_INTERVAL", "86400000"));

  @Override
  TestBroker broker() {
    return broker;
  }
}
