package queen.server.ops;

import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** The Retention contract on plain PostgreSQL. */
class RetentionTest extends RetentionContract {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("RETENTION_INTERVAL", "86400000"));

  @Override
  TestBroker broker() {
    return broker;
  }
}
