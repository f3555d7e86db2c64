package queen.server.http;

import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** The 64-consumer wildcard test with QUEEN_HOTLIST=0: the SQL scan picks the candidates. */
class SqlScanConcurrentWildcardPopTest extends ConcurrentWildcardPopContract {
  @RegisterExtension static final TestBroker broker = new TestBroker(Map.of("QUEEN_HOTLIST", "0"));

  @Override
  TestBroker broker() {
    return broker;
  }
}
