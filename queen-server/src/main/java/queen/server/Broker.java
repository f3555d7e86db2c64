package queen.server;

import io.helidon.webserver.WebServer;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.bridge.SLF4JBridgeHandler;
import queen.server.ack.AckService;
import queen.server.ack.DeadLetterService;
import queen.server.ack.TransactionService;
import queen.server.http.AckRoutes;
import queen.server.http.ConfigureRoutes;
import queen.server.http.DeadLetterRoutes;
import queen.server.http.HealthRoutes;
import queen.server.http.HttpApi;
import queen.server.http.PopRoutes;
import queen.server.http.PushRoutes;
import queen.server.http.TransactionRoutes;
import queen.server.ops.MaxWaitSweeper;
import queen.server.pop.PopService;
import queen.server.push.PartitionDirectory;
import queen.server.push.PushService;
import queen.server.store.AckStore;
import queen.server.store.Database;
import queen.server.store.DeadLetterStore;
import queen.server.store.PopStore;
import queen.server.store.PushStore;
import queen.server.store.QueueStore;
import queen.server.store.TransactionStore;

/**
 * One running broker: the database pool (schema migrated), the services, and the web server.
 * Brokers hold only caches; everything a user relies on is in PostgreSQL, so several brokers can
 * serve one database and a restarted broker loses nothing.
 */
public final class Broker implements AutoCloseable {
  static {
    // Helidon logs through java.util.logging; route it to the same place as ours
    if (!SLF4JBridgeHandler.isInstalled()) {
      SLF4JBridgeHandler.removeHandlersForRootLogger();
      SLF4JBridgeHandler.install();
    }
  }

  private final Database db;
  private final WebServer server;
  private final MaxWaitSweeper sweeper;
  private final AtomicBoolean closed = new AtomicBoolean();

  private Broker(Database db, WebServer server, MaxWaitSweeper sweeper) {
    this.db = db;
    this.server = server;
    this.sweeper = sweeper;
  }

  /** Migrates the schema and starts serving; fails if PostgreSQL cannot be reached. */
  public static Broker start(BrokerConfig config) {
    InstantSource clock = InstantSource.system();
    Database db = Database.open(config.db());
    try {
      db.migrate();
      QueueStore queues = new QueueStore(db);
      PushService push = new PushService(new PushStore(db), new PartitionDirectory(queues), clock);
      PopService pop = new PopService(new PopStore(db), clock);
      AckService ack = new AckService(new AckStore(db));
      TransactionService transactions = new TransactionService(new TransactionStore(db), push);
      DeadLetterStore deadLetters = new DeadLetterStore(db);
      WebServer server =
          WebServer.builder()
              .host(config.host())
              .port(config.port())
              .maxPayloadSize(config.maxBodyBytes())
              .shutdownHook(false)
              .directHandlers(HttpApi.directHandlers())
              .routing(
                  routing ->
                      HttpApi.install(
                          routing,
                          List.of(
                              new HealthRoutes(db, version()),
                              new ConfigureRoutes(queues),
                              new PushRoutes(push),
                              new PopRoutes(pop),
                              new AckRoutes(ack),
                              new TransactionRoutes(transactions),
                              new DeadLetterRoutes(new DeadLetterService(deadLetters, clock)))))
              .build()
              .start();
      MaxWaitSweeper sweeper = new MaxWaitSweeper(deadLetters, config.sweepInterval());
      sweeper.start();
      return new Broker(db, server, sweeper);
    } catch (RuntimeException e) {
      db.close();
      throw e;
    }
  }

  /** The port actually bound (useful with PORT=0). */
  public int port() {
    return server.port();
  }

  static String version() {
    String v = Broker.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }

  /** Stops accepting requests, lets in-flight ones finish, then closes the pool. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      sweeper.close();
      server.stop();
      db.close();
    }
  }
}
