package queen.server.ops;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import java.util.function.ToDoubleFunction;
import queen.server.store.Database;

/**
 * The broker process's own meters: the JVM's memory, collections and threads, CPU, uptime, and the
 * main connection pool's use (a pool that stays full shows as waiting pushes and pops).
 */
public final class ProcessMeters implements AutoCloseable {
  private final JvmGcMetrics gc = new JvmGcMetrics();

  public ProcessMeters(MeterRegistry meters, Database db) {
    new JvmMemoryMetrics().bindTo(meters);
    gc.bindTo(meters);
    new JvmThreadMetrics().bindTo(meters);
    new ProcessorMetrics().bindTo(meters);
    new UptimeMetrics().bindTo(meters);
    pool(meters, db, "queen_db_pool_active", "connections in use", Database.PoolState::active);
    pool(meters, db, "queen_db_pool_idle", "connections idle", Database.PoolState::idle);
    pool(
        meters,
        db,
        "queen_db_pool_waiting",
        "calls waiting for a connection",
        Database.PoolState::waiting);
  }

  private static void pool(
      MeterRegistry meters,
      Database db,
      String name,
      String what,
      ToDoubleFunction<Database.PoolState> value) {
    Gauge.builder(name, db, d -> value.applyAsDouble(d.poolState()))
        .description("The main pool's (DB_POOL_SIZE) " + what)
        .register(meters);
  }

  @Override
  public void close() {
    gc.close();
  }
}
