package queen.server.http;

import java.util.Map;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.CitusCluster;
import queen.server.TestBroker;

/** The 64-consumer wildcard test on a Citus cluster, when one is configured. */
@EnabledIfEnvironmentVariable(
    named = CitusCluster.URL_VARIABLE,
    matches = ".+",
    disabledReason = CitusCluster.NOT_CONFIGURED)
class CitusConcurrentWildcardPopTest extends ConcurrentWildcardPopContract {
  @RegisterExtension static final TestBroker broker = TestBroker.onCitus(Map.of());

  @Override
  TestBroker broker() {
    return broker;
  }
}
