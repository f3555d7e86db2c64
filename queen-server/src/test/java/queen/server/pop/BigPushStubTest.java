package queen.server.pop;

import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** Stubs of big pushes on one PostgreSQL. */
class BigPushStubTest extends BigPushStubContract {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  @Override
  TestBroker broker() {
    return broker;
  }
}
