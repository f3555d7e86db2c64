package queen.server.http;

import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** The ExactlyOnceUnderFailure contract on plain PostgreSQL. */
class ExactlyOnceUnderFailureTest extends ExactlyOnceUnderFailureContract {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  @Override
  TestBroker broker() {
    return broker;
  }

  @Override
  int perProducer() {
    return 5_000;
  }
}
