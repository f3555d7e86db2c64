package queen.server.http;

import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** The 64-consumer wildcard test on the hot-list path (the default). */
class HotListConcurrentWildcardPopTest extends ConcurrentWildcardPopContract {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  @Override
  TestBroker broker() {
    return broker;
  }
}
