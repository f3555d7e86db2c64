package queen.server.pop;

import java.util.Map;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.CitusCluster;
import queen.server.TestBroker;

/** Stubs of big pushes on a Citus cluster, when one is configured: the stub is made on a worker. */
@EnabledIfEnvironmentVariable(
    named = CitusCluster.URL_VARIABLE,
    matches = ".+",
    disabledReason = CitusCluster.NOT_CONFIGURED)
class CitusBigPushStubTest extends BigPushStubContract {
  @RegisterExtension static final TestBroker broker = TestBroker.onCitus(Map.of());

  @Override
  TestBroker broker() {
    return broker;
  }
}
