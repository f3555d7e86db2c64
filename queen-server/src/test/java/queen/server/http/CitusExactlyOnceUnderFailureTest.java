package queen.server.http;

import java.util.Map;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.CitusCluster;
import queen.server.TestBroker;

/** The ExactlyOnceUnderFailure contract on a Citus cluster, when one is configured. */
@EnabledIfEnvironmentVariable(
    named = CitusCluster.URL_VARIABLE,
    matches = ".+",
    disabledReason = CitusCluster.NOT_CONFIGURED)
class CitusExactlyOnceUnderFailureTest extends ExactlyOnceUnderFailureContract {
  @RegisterExtension static final TestBroker broker = TestBroker.onCitus(Map.of());

  @Override
  TestBroker broker() {
    return broker;
  }

  /** A fifth of the plain run: three PostgreSQL servers share the two cores of a test machine. */
  @Override
  int perProducer() {
    return 1_000;
  }
}
