package queen.server.http;

import java.util.Map;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.CitusCluster;
import queen.server.TestBroker;

/** The pop's byte budget on a Citus cluster, when one is configured. */
@EnabledIfEnvironmentVariable(
    named = CitusCluster.URL_VARIABLE,
    matches = ".+",
    disabledReason = CitusCluster.NOT_CONFIGURED)
class CitusPopByteBudgetTest extends PopByteBudgetContract {
  @RegisterExtension
  static final TestBroker broker =
      TestBroker.onCitus(Map.of("QUEEN_POP_MAX_BYTES", Integer.toString(BUDGET)));

  @Override
  TestBroker broker() {
    return broker;
  }
}
