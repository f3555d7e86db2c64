package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/**
 * Rules the schema keeps, checked on the migrated schema of this build: that it runs on Citus as on
 * plain PostgreSQL (no Citus needed), and that the broker's own vacuum reaches every table.
 */
class SchemaRulesTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  @Test
  void noSqlLanguageFunctionReadsATableBecauseOnCitusItWouldReadTheEmptyShellTables() {
    assertThat(
            broker.sqlText(
                "select coalesce(string_agg(p.proname, ', ' order by p.proname), '')"
                    + " from pg_proc p join pg_language l on l.oid = p.prolang"
                    + " where p.pronamespace = 'queen'::regnamespace and l.lanname = 'sql'"
                    + " and p.prosrc ~* '(from|join)\\s+queen\\.[a-z_]+\\s'"
                    + " and p.prosrc !~* '(from|join)\\s+queen\\.[a-z_]+\\s*\\('"))
        .as("SQL-language functions of the queen schema that read a table")
        .isEmpty();
  }

  @Test
  void theRetentionCyclesVacuumCoversEveryTableBecauseAutovacuumMayBeOff() {
    String tables =
        broker.sqlText(
            "select string_agg(c.relname, ',' order by c.relname) from pg_class c"
                + " where c.relnamespace = 'queen'::regnamespace and c.relkind in ('r', 'p')"
                + " and c.relname <> 'flyway_schema_history'");
    assertThat(AutovacuumStore.TABLES).containsExactlyInAnyOrder(tables.split(","));
  }
}
