package queen.server.ops;

import java.util.Map;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.CitusCluster;
import queen.server.TestBroker;

/** The partition cleanup contract on a Citus cluster, when one is configured. */
@EnabledIfEnvironmentVariable(
    named = CitusCluster.URL_VARIABLE,
    matches = ".+",
    disabledReason = CitusCluster.NOT_CONFIGURED)
class CitusPartitionCleanupTest extends PartitionCleanupContract {
  @RegisterExtension
  static final TestBroker broker = TestBroker.onCitus(Map.of("RETENTION_INTERVAL", "86400000"));

  @Override
  TestBroker broker() {
    return broker;
  }
}
