package queen.server.http;

import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** The long-poll contract with QUEEN_HOTLIST=0: candidates come from the SQL scan. */
class SqlScanLongPollTest extends LongPollContract {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(Map.of("QUEEN_HOTLIST", "0", "DB_POOL_SIZE", "10"));

  @Override
  TestBroker broker() {
    return broker;
  }

  @Override
  int parkedConsumers() {
    return 200;
  }
}
