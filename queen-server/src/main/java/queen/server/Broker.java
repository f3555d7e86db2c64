package queen.server;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.bridge.SLF4JBridgeHandler;
import queen.server.ack.AckRegistry;
import queen.server.ack.AckService;
import queen.server.ack.DeadLetterService;
import queen.server.ack.ReleaseListener;
import queen.server.ack.TransactionService;
import queen.server.codec.PayloadCipher;
import queen.server.http.AckRoutes;
import queen.server.http.AnalyticsRoutes;
import queen.server.http.ConfigureRoutes;
import queen.server.http.ConsumerGroupRoutes;
import queen.server.http.DashboardRoutes;
import queen.server.http.DeadLetterRoutes;
import queen.server.http.Departures;
import queen.server.http.Gate;
import queen.server.http.HealthRoutes;
import queen.server.http.HttpApi;
import queen.server.http.MaintenanceRoutes;
import queen.server.http.MessageRoutes;
import queen.server.http.MetricsRoutes;
import queen.server.http.Payloads;
import queen.server.http.PopRoutes;
import queen.server.http.PushRoutes;
import queen.server.http.ResourceRoutes;
import queen.server.http.RouteTable;
import queen.server.http.StatusRoutes;
import queen.server.http.StreamRoutes;
import queen.server.http.TraceRoutes;
import queen.server.http.TransactionRoutes;
import queen.server.mesh.Hints;
import queen.server.ops.Autovacuum;
import queen.server.ops.BrokerSampler;
import queen.server.ops.ConsumerGroups;
import queen.server.ops.LagSnapshot;
import queen.server.ops.MaxWaitSweeper;
import queen.server.ops.ProcessMeters;
import queen.server.ops.Retention;
import queen.server.ops.StateRefresher;
import queen.server.ops.Statistics;
import queen.server.pop.HotLists;
import queen.server.pop.PopService;
import queen.server.pop.PopSettings;
import queen.server.pop.SegmentCache;
import queen.server.push.BufferedPush;
import queen.server.push.PartitionDirectory;
import queen.server.push.PayloadSealing;
import queen.server.push.PushService;
import queen.server.store.AckStore;
import queen.server.store.AnalyticsStore;
import queen.server.store.AutovacuumStore;
import queen.server.store.ConsumerGroupStore;
import queen.server.store.Database;
import queen.server.store.DeadLetterStore;
import queen.server.store.MessageRemoval;
import queen.server.store.MessageStore;
import queen.server.store.Notifications;
import queen.server.store.PopStore;
import queen.server.store.PushStore;
import queen.server.store.QueueRemoval;
import queen.server.store.QueueStore;
import queen.server.store.ResourceStore;
import queen.server.store.RetentionStore;
import queen.server.store.StatsStore;
import queen.server.store.StreamStore;
import queen.server.store.SystemStore;
import queen.server.store.TraceStore;
import queen.server.store.TransactionStore;
import queen.server.streams.StreamCycles;

/**
 * One running broker: the database pool (schema migrated), the services, the background tasks and
 * the web server. Brokers hold only caches and schedules; everything a user relies on is in
 * PostgreSQL, so several brokers can serve one database and a restarted broker loses nothing.
 */
public final class Broker implements AutoCloseable {
  static {
    // pgjdbc logs through java.util.logging; route it to the same place as ours
    if (!SLF4JBridgeHandler.isInstalled()) {
      SLF4JBridgeHandler.removeHandlersForRootLogger();
      SLF4JBridgeHandler.install();
    }
  }

  private final List<AutoCloseable> resources;
  private final Listener server;
  private final List<RouteTable.Route> routes;
  private final Runnable stopWaiting;
  private final boolean migrated;
  private final AtomicBoolean closed = new AtomicBoolean();

  private Broker(
      List<AutoCloseable> resources,
      Listener server,
      List<RouteTable.Route> routes,
      Runnable stopWaiting,
      boolean migrated) {
    this.resources = resources;
    this.server = server;
    this.routes = routes;
    this.stopWaiting = stopWaiting;
    this.migrated = migrated;
  }

  /** Migrates the schema and starts serving; fails if PostgreSQL cannot be reached. */
  public static Broker start(BrokerConfig config) {
    InstantSource clock = InstantSource.system();
    List<AutoCloseable> resources = new ArrayList<>();
    Database db = Database.open(config.db());
    resources.add(db);
    // opened by the first admin read, closed after ten idle minutes: a broker nobody browses
    // holds no admin connection
    Database adminDb =
        Database.open(
            config.db().withPoolSize(config.adminPoolSize()),
            "queen-admin",
            0,
            config.adminStatementTimeout());
    resources.add(adminDb);
    try {
      boolean migrated = db.migrate();
      PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      FunctionCounter.builder("queen_db_calls", db, Database::calls)
          .description("Database transactions and autocommit calls run by this broker")
          .register(meters);
      resources.addFirst(new ProcessMeters(meters, db));
      Hints hints = new Hints(new Notifications(db, config.db()), config.hints(), meters);
      resources.addFirst(hints);
      QueueStore queues = new QueueStore(db);
      SystemStore system = new SystemStore(db);
      checkPayloadKeys(config.cipher(), system);
      DeadLetterStore deadLetters = new DeadLetterStore(db);

      PopSettings settings = new PopSettings();
      HotLists hot = new HotLists(meters);
      StatsStore statsStore = new StatsStore(db);
      BrokerSampler sampler =
          new BrokerSampler(BrokerSampler.hostname(), clock.instant(), db, hot::parkedByQueue);
      Statistics statistics = new Statistics(statsStore, sampler, config.statsInterval());
      resources.addFirst(statistics);
      statistics.start();
      AckRegistry registry = new AckRegistry();
      Gauge.builder("queen_ack_registry_partitions", registry, AckRegistry::size)
          .description("Partitions of leased deliveries remembered for the fast ack path")
          .register(meters);
      PayloadSealing sealing =
          new PayloadSealing(
              config.cipher(),
              id -> {
                system.registerPayloadKey(id);
                // the brokers lacking it learn of it sooner than at their next state refresh
                hints.refresh();
              });
      Payloads payloads = new Payloads(config.cipher());
      PushService push =
          new PushService(
              new PushStore(db),
              new PartitionDirectory(queues),
              clock,
              (queue, partition, count, bytes) -> {
                hot.pushed(queue, partition, count, bytes);
                statistics.pushed(queue, count);
                hints.pushed(queue, partition, count, bytes);
              },
              sealing,
              config.pushConcurrency());
      ReleaseListener released =
          (queue, partition, group, hasMore, lease) -> {
            hot.released(queue, partition, group, hasMore);
            hints.released(queue, partition, group, hasMore, lease);
          };
      AckService ack =
          new AckService(new AckStore(db), registry, released, config.ackConcurrency());
      PopService pop =
          new PopService(
              new PopStore(db),
              hot,
              settings,
              config.popWait(),
              config.popMaxBytes(),
              config.hotList(),
              config.db().poolSize(),
              clock,
              meters,
              new Deliveries(registry, ack, released),
              new SegmentCache(config.segmentCacheBytes(), meters));
      settings.onPopMaintenance(pop::wakeAll);
      pop.checkBeforeClaims(payloads::checkOpens);
      resources.addFirst(pop::close);
      Departures departures = Departures.start(config.departureScan());
      resources.addFirst(departures);
      TransactionService transactions =
          new TransactionService(new TransactionStore(db), push, registry, released);
      MaxWaitSweeper sweeper = new MaxWaitSweeper(deadLetters, config.sweepInterval(), statistics);
      resources.addFirst(sweeper);
      sweeper.start();
      Retention retention =
          new Retention(
              new RetentionStore(db), config.retention(), clock, meters, statistics::retained);
      resources.addFirst(retention);
      retention.start();
      Autovacuum autovacuum =
          new Autovacuum(
              new AutovacuumStore(db),
              config.analyzeInterval(),
              config.retention().vacuum() != Retention.Vacuum.OFF,
              meters);
      resources.addFirst(autovacuum);
      autovacuum.start();
      ConsumerGroupStore groupReads = new ConsumerGroupStore(adminDb);
      LagSnapshot lags = new LagSnapshot(groupReads, config.statsInterval(), clock);
      ConsumerGroups groups =
          new ConsumerGroups(
              new ConsumerGroupStore(db),
              (queue, group) -> {
                pop.groupReset(queue, group);
                registry.groupReset(queue, group);
                lags.forget();
              },
              hints::refresh);
      groups.start();
      BufferedPush buffered =
          new BufferedPush(
              push,
              sealing,
              config.buffer().dir(),
              config.buffer().maxBytes(),
              config.buffer().failover());
      resources.addFirst(buffered);
      buffered.register(meters);
      StateRefresher refresher =
          new StateRefresher(
              system,
              settings,
              groups,
              s -> {
                sealing.encryptedQueues(s.encryptedQueues());
                sealing.registeredKeys(s.payloadKeys());
                payloads.registeredKeys(s.payloadKeys());
                buffered.maintenance(s.pushMaintenance());
              },
              config.stateRefresh());
      resources.addFirst(refresher);
      refresher.start();
      // a switch set here: read again; what changed has committed, so the other brokers follow it
      // whatever the read did
      Runnable switched =
          () -> {
            try {
              refresher.refresh();
            } finally {
              hints.refresh();
            }
          };
      // a queue's options or a group changed: the gates' times may have changed too
      Runnable changed =
          () -> {
            try {
              switched.run();
            } finally {
              hot.releaseGates();
            }
          };
      hints.start(new HintsReceived(registry, hot, refresher, pop));
      buffered.start(); // after the first state read: a restart in maintenance must not drain
      ResourceStore resourceStore = new ResourceStore(adminDb);
      MessageStore messages = new MessageStore(adminDb);
      TraceStore traces = new TraceStore(db);
      // the admin pages' reads: on the admin pool, under its statement timeout, never holding the
      // connections of pushes and pops for a scan of a big table
      TraceStore traceReads = new TraceStore(adminDb);
      DeadLetterStore adminDeadLetters = new DeadLetterStore(adminDb);

      Gate gate = Gate.of(config.auth());
      HttpApi api =
          HttpApi.of(
              gate,
              List.of(
                  new HealthRoutes(db, version()),
                  new DashboardRoutes(),
                  new MetricsRoutes(meters, db, config.db().poolSize(), clock),
                  new ConfigureRoutes(
                      queues, changed, config.cipher() != null && config.cipher().canSeal()),
                  new PushRoutes(buffered, config.pushLimits()),
                  new PopRoutes(
                      pop, statistics, payloads, departures, config.popMaxTimeout().toMillis()),
                  new AckRoutes(ack, statistics),
                  new TransactionRoutes(transactions, statistics, config.pushLimits()),
                  new StreamRoutes(
                      new StreamCycles(new StreamStore(db), push, registry, released),
                      statistics,
                      config.pushLimits()),
                  new DeadLetterRoutes(
                      new DeadLetterService(
                          adminDeadLetters, clock, push.listener(), config.popMaxBytes()),
                      payloads),
                  new MaintenanceRoutes(system, settings, buffered, switched),
                  new ResourceRoutes(
                      resourceStore,
                      new QueueRemoval(
                          adminDb,
                          config.retention().batchSegments(),
                          config.retention().batchBytes()),
                      statsStore,
                      changed,
                      clock),
                  new StatusRoutes(
                      statsStore,
                      statistics,
                      resourceStore,
                      messages,
                      adminDeadLetters,
                      db,
                      clock,
                      buffered),
                  new AnalyticsRoutes(new AnalyticsStore(adminDb), clock),
                  new ConsumerGroupRoutes(groups, groupReads, resourceStore, lags),
                  new TraceRoutes(traces, traceReads, messages, clock, payloads),
                  new MessageRoutes(
                      messages, new MessageRemoval(adminDb), traceReads, clock, payloads)),
              config.maxBodyBytes(),
              config.cors());
      Listener server = Listener.start(config, api);
      sampler.listening(server.port());
      return new Broker(resources, server, api.routes(), pop::stopWaiting, migrated);
    } catch (RuntimeException e) {
      closeAll(resources);
      throw e;
    }
  }

  /**
   * Refuses to start when payloads sealed with a key this broker lacks are stored: it could not
   * deliver them, and an autoAck pop would move the cursor past them before finding out.
   */
  private static void checkPayloadKeys(PayloadCipher cipher, SystemStore system) {
    Set<Integer> used = system.payloadKeys();
    Set<Integer> missing = Payloads.lacking(cipher, used);
    if (!missing.isEmpty()) {
      throw new BrokerConfig.InvalidConfigException(
          "payloads sealed with key "
              + PayloadCipher.describe(missing.iterator().next())
              + " are stored and this broker does not have that key: set it as"
              + " QUEEN_ENCRYPTION_KEY or add it to QUEEN_ENCRYPTION_KEYS_OLD");
    }
  }

  /** Every route declared, with the access it requires. */
  public List<RouteTable.Route> routes() {
    return routes;
  }

  /** Whether this start migrated the schema (Flyway ran). */
  public boolean migrated() {
    return migrated;
  }

  /** The port actually bound (useful with PORT=0). */
  public int port() {
    return server.port();
  }

  static String version() {
    String v = Broker.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }

  /**
   * Answers every parked long-poll with 204, stops accepting requests, lets in-flight ones finish
   * (up to SHUTDOWN_TIMEOUT_MS: their pushes and acks commit as usual), stops the background tasks,
   * then closes the pool. Idempotent.
   */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      // first: the long-polls that stopWaiting ends answer with Connection: close
      server.closeConnections();
      stopWaiting.run();
      server.stop();
      closeAll(resources);
    }
  }

  private static void closeAll(List<AutoCloseable> resources) {
    for (AutoCloseable r : resources) {
      try {
        r.close();
      } catch (Exception e) {
        org.slf4j.LoggerFactory.getLogger(Broker.class).warn("closing {} failed", r, e);
      }
    }
  }
}
