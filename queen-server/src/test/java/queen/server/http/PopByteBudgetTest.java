package queen.server.http;

import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** The pop's byte budget on one PostgreSQL. */
class PopByteBudgetTest extends PopByteBudgetContract {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(Map.of("QUEEN_POP_MAX_BYTES", Integer.toString(BUDGET)));

  @Override
  TestBroker broker() {
    return broker;
  }
}
