package queen.server.http;

import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** The Push contract on plain PostgreSQL. */
class PushTest extends PushContract {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  @Override
  TestBroker broker() {
    return broker;
  }
}
