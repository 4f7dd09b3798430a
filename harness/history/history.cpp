#include "harness/history/history.h"

#include "harness/core/exit_codes.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <thread>

namespace ib {

namespace {

// The first layout. A new file is made by running it and then every migration, so the migration path
// runs on every new database, not only on old ones.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE runs (id INTEGER PRIMARY KEY, start_time TEXT NOT NULL, host TEXT NOT NULL, version TEXT NOT NULL,
                   git_sha TEXT NOT NULL, results_file TEXT NOT NULL, exit_code INTEGER);
CREATE TABLE tenants (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), scenario TEXT NOT NULL,
                      mode TEXT NOT NULL, tenant TEXT NOT NULL, workload TEXT NOT NULL, p95_slowdown REAL,
                      p95_ci_low REAL, p95_ci_high REAL, median_slowdown REAL, verdict TEXT NOT NULL);
)sql";

// Version 1 -> 2.
constexpr const char* kMigrateV1ToV2 = R"sql(
ALTER TABLE runs ADD COLUMN command TEXT NOT NULL DEFAULT 'run';
ALTER TABLE runs ADD COLUMN suite TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN backend TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN verdict TEXT NOT NULL DEFAULT '';
ALTER TABLE tenants ADD COLUMN params_key TEXT NOT NULL DEFAULT '';
ALTER TABLE tenants ADD COLUMN repetitions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tenants ADD COLUMN repetitions_measured INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tenants ADD COLUMN cutoff REAL;
ALTER TABLE tenants ADD COLUMN verdict_reason TEXT NOT NULL DEFAULT '';
CREATE INDEX tenants_by_key ON tenants(scenario, mode, tenant, workload, params_key);
CREATE TABLE repetitions (tenant_id INTEGER NOT NULL REFERENCES tenants(id), repetition INTEGER NOT NULL,
                          run_status TEXT NOT NULL, colocated_status TEXT NOT NULL, verdict TEXT NOT NULL,
                          throughput_exclusive REAL, throughput_colocated REAL, throughput_unit TEXT NOT NULL);
CREATE TABLE checks (run_id INTEGER NOT NULL REFERENCES runs(id), check_id TEXT NOT NULL, title TEXT NOT NULL,
                     status TEXT NOT NULL, evidence TEXT NOT NULL, threshold TEXT NOT NULL);
)sql";

// Version 2 -> 3: a matrix's packing on its runs row (its cells are tenants rows).
constexpr const char* kMigrateV2ToV3 = R"sql(
ALTER TABLE runs ADD COLUMN matrix_devices INTEGER;
ALTER TABLE runs ADD COLUMN matrix_workloads INTEGER;
)sql";

// migrations[v - 1] takes version v to v + 1.
constexpr const char* kMigrations[] = {kMigrateV1ToV2, kMigrateV2ToV3};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kHistorySchemaVersion - 1);

HistoryProblem problem_of(const SQLite::Exception& e) {
  switch (e.getErrorCode()) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT: return HistoryProblem::not_a_database;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return HistoryProblem::locked;
    default: return HistoryProblem::other;
  }
}

// Runs `body` and turns SQLite's exceptions into one HistoryError naming the file.
template <typename F>
auto guarded(const std::string& path, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const SQLite::Exception& e) {
    const HistoryProblem p = problem_of(e);
    std::string what = e.what();
    if (p == HistoryProblem::not_a_database) what += " (not a history database, or a damaged one)";
    if (p == HistoryProblem::locked) what += " (another writer held it past the busy timeout)";
    throw HistoryError(path, p, "history database: " + what);
  }
}

int user_version(SQLite::Database& db) { return db.execAndGet("PRAGMA user_version").getInt(); }

// Brings the file to kHistorySchemaVersion; call inside a write transaction.
void migrate(SQLite::Database& db, const std::string& path) {
  int v = user_version(db);
  if (v > kHistorySchemaVersion)
    throw HistoryError(path, HistoryProblem::newer_schema,
                       "history database: schema version " + std::to_string(v) + " is newer than this interference-bench's (" +
                           std::to_string(kHistorySchemaVersion) + ")");
  if (v == 0) {
    db.exec(kSchemaV1);
    v = 1;
  }
  for (; v < kHistorySchemaVersion; ++v) db.exec(kMigrations[v - 1]);
  db.exec("PRAGMA user_version = " + std::to_string(kHistorySchemaVersion));
}

// Opens for writing (creating the file), WAL, busy timeout.
SQLite::Database open_for_writing(const std::string& path, const HistoryOptions& o) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, o.busy_timeout_ms);
  db.execAndGet("PRAGMA journal_mode = WAL");
  return db;
}

// Opens an existing history database of ours for reading, read-only: reading never writes (no table
// made, no journal mode switched, no migration, no journal file next to it). A missing file, something
// that is not a regular file, a database that is not ours and one of an older schema are bad input.
SQLite::Database open_for_reading(const std::string& path, const HistoryOptions& o) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) throw HistoryError(path, HistoryProblem::other, "history database: no such file");
  if (!std::filesystem::is_regular_file(st))
    throw HistoryError(path, HistoryProblem::not_a_database, "history database: not a regular file");
  SQLite::Database db(path, SQLite::OPEN_READONLY, o.busy_timeout_ms);
  const int v = user_version(db);  // SQLITE_NOTADB for a file that is no database at all
  if (v > kHistorySchemaVersion) migrate(db, path);  // throws: newer schema
  if (v == 0 || !db.tableExists("runs") || !db.tableExists("tenants"))
    throw HistoryError(path, HistoryProblem::not_a_database,
                       "history database: not an interference-bench history (no schema version, or no runs and "
                       "tenants tables)");
  if (v < kHistorySchemaVersion)
    throw HistoryError(path, HistoryProblem::other,
                       "history database: schema version " + std::to_string(v) + " is older than this interference-bench's (" +
                           std::to_string(kHistorySchemaVersion) + "); the next run with --history brings it up to date");
  return db;
}

void bind_optional(SQLite::Statement& s, int index, std::optional<double> v) {
  if (v && std::isfinite(*v)) s.bind(index, *v);
  else s.bind(index);
}

std::optional<double> finite(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

std::optional<double> column_optional(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getDouble();
}

std::int64_t insert_run(SQLite::Database& db, const HistoryRun& r) {
  SQLite::Statement s(db,
                      "INSERT INTO runs (command, start_time, host, version, git_sha, suite, backend, results_file, "
                      "exit_code, verdict, matrix_devices, matrix_workloads) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind(1, r.command);
  s.bind(2, r.start_time);
  s.bind(3, r.host);
  s.bind(4, r.version);
  s.bind(5, r.git_sha);
  s.bind(6, r.suite);
  s.bind(7, r.backend);
  s.bind(8, r.results_file);
  if (r.exit_code) s.bind(9, *r.exit_code);
  else s.bind(9);
  s.bind(10, r.verdict);
  for (const auto& [index, v] : {std::pair<int, std::optional<int>>{11, r.matrix_devices}, {12, r.matrix_workloads}}) {
    if (v) s.bind(index, *v);
    else s.bind(index);
  }
  s.exec();
  return db.getLastInsertRowid();
}

// The cutoff of the aggregate's scenario and mode, as its runs have it.
std::optional<double> cutoff_of(const Results& results, const TenantAggregate& a) {
  for (const RunResult& r : results.runs)
    if (r.scenario == a.scenario && r.mode == a.mode) return r.cutoff;
  return std::nullopt;
}

const TenantResult* tenant_of(const RunResult& run, const std::string& name) {
  for (const TenantResult& t : run.tenants)
    if (t.name == name) return &t;
  return nullptr;
}

// The params key of the aggregate's tenant, from its first repetition.
std::string params_key_of(const Results& results, const TenantAggregate& a) {
  for (const RunResult& r : results.runs)
    if (r.scenario == a.scenario && r.mode == a.mode)
      if (const TenantResult* t = tenant_of(r, a.tenant)) return history_params_key(t->params);
  return history_params_key(nlohmann::json::object());
}

std::int64_t insert_tenant(SQLite::Database& db, std::int64_t run_id, const Results& results, const TenantAggregate& a) {
  SQLite::Statement s(db,
                      "INSERT INTO tenants (run_id, scenario, mode, tenant, workload, params_key, repetitions, "
                      "repetitions_measured, cutoff, p95_slowdown, p95_ci_low, p95_ci_high, median_slowdown, verdict, "
                      "verdict_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind(1, run_id);
  s.bind(2, a.scenario);
  s.bind(3, a.mode);
  s.bind(4, a.tenant);
  s.bind(5, a.workload);
  s.bind(6, params_key_of(results, a));
  s.bind(7, a.repetitions);
  s.bind(8, a.repetitions_measured);
  bind_optional(s, 9, cutoff_of(results, a));
  const bool m = a.metrics.has_value();
  bind_optional(s, 10, m ? finite(a.metrics->p95_slowdown.value) : std::nullopt);
  bind_optional(s, 11, m ? finite(a.metrics->p95_slowdown.ci_low) : std::nullopt);
  bind_optional(s, 12, m ? finite(a.metrics->p95_slowdown.ci_high) : std::nullopt);
  bind_optional(s, 13, m ? finite(a.metrics->median_slowdown) : std::nullopt);
  s.bind(14, to_string(a.verdict));
  s.bind(15, a.verdict_reason);
  s.exec();
  return db.getLastInsertRowid();
}

std::optional<double> measured_throughput(const PhaseResult& p) {
  return p.measured() ? finite(p.throughput) : std::nullopt;
}

void insert_repetitions(SQLite::Database& db, std::int64_t tenant_id, const Results& results, const TenantAggregate& a) {
  SQLite::Statement s(db,
                      "INSERT INTO repetitions (tenant_id, repetition, run_status, colocated_status, verdict, "
                      "throughput_exclusive, throughput_colocated, throughput_unit) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const RunResult& r : results.runs) {
    if (r.scenario != a.scenario || r.mode != a.mode) continue;
    const TenantResult* t = tenant_of(r, a.tenant);
    if (!t) continue;
    s.bind(1, tenant_id);
    s.bind(2, r.repetition);
    s.bind(3, to_string(r.status));
    s.bind(4, to_string(t->colocated.outcome.status));
    s.bind(5, to_string(t->verdict));
    bind_optional(s, 6, measured_throughput(t->exclusive));
    bind_optional(s, 7, measured_throughput(t->colocated));
    s.bind(8, t->colocated.throughput_unit.empty() ? t->exclusive.throughput_unit : t->colocated.throughput_unit);
    s.exec();
    s.reset();
    s.clearBindings();
  }
}

HistoryRun run_row(const Results& results, const std::string& results_file) {
  HistoryRun r;
  r.command = "run";
  r.start_time = results.meta.start_time;
  r.host = results.meta.host;
  r.version = results.meta.version;
  r.git_sha = results.meta.git_sha;
  r.suite = results.meta.suite;
  r.backend = results.meta.backend;
  r.results_file = results_file;
  r.exit_code = results.summary.exit_code;
  return r;
}

HistoryRun matrix_run_row(const MatrixResult& m, const std::string& matrix_file) {
  HistoryRun r;
  r.command = "matrix";
  r.start_time = m.start_time;
  r.host = m.host;
  r.version = m.version;
  r.git_sha = m.git_sha;
  r.backend = m.backend;
  r.results_file = matrix_file;
  r.exit_code = m.exit_code;
  if (m.packing) r.matrix_devices = static_cast<int>(m.packing->devices.size());
  r.matrix_workloads = static_cast<int>(m.workloads.size());
  return r;
}

// One cell as a tenants row (record_matrix says how its fields map); no repetitions rows (a pair is one run).
void insert_cell(SQLite::Database& db, std::int64_t run_id, const MatrixResult& m, const MatrixCell& c) {
  SQLite::Statement s(db,
                      "INSERT INTO tenants (run_id, scenario, mode, tenant, workload, params_key, repetitions, "
                      "repetitions_measured, cutoff, p95_slowdown, p95_ci_low, p95_ci_high, median_slowdown, verdict, "
                      "verdict_reason) VALUES (?, 'matrix', ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)");
  const MatrixWorkload& victim = m.workloads[c.victim];
  const bool measured = c.p95_slowdown.has_value();
  s.bind(1, run_id);
  s.bind(2, m.mode);
  s.bind(3, victim.name + " beside " + m.workloads[c.aggressor].name);
  s.bind(4, victim.workload);
  s.bind(5, history_params_key(victim.tenant.value("params", nlohmann::json::object())));
  s.bind(6, measured ? 1 : 0);
  bind_optional(s, 7, m.cutoff);
  bind_optional(s, 8, measured ? finite(c.p95_slowdown->value) : std::nullopt);
  bind_optional(s, 9, measured ? finite(c.p95_slowdown->ci_low) : std::nullopt);
  bind_optional(s, 10, measured ? finite(c.p95_slowdown->ci_high) : std::nullopt);
  bind_optional(s, 11, c.median_slowdown);
  s.bind(12, to_string(c.verdict));
  s.bind(13, (c.source == CellSource::predicted ? "predicted: " : "") + c.verdict_reason);
  s.exec();
}

bool is_busy(const SQLite::Exception& e) {
  const int primary = e.getErrorCode() & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

// Runs `attempt` again while SQLite answers busy without waiting in its busy handler (it does not wait
// where waiting could deadlock, e.g. while another connection turns a new file into WAL or recovers
// the WAL index), until the busy timeout has passed; then the last error stands.
template <typename F>
auto retry_while_busy(const HistoryOptions& o, F&& attempt) -> decltype(attempt()) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.busy_timeout_ms);
  auto backoff = std::chrono::milliseconds(2);
  for (;;) {
    try {
      return attempt();
    } catch (const SQLite::Exception& e) {
      if (!is_busy(e) || std::chrono::steady_clock::now() + backoff > deadline) throw;
    }
    std::this_thread::sleep_for(backoff);  // a back-off between attempts, not a synchronisation
    backoff = std::min(backoff * 2, std::chrono::milliseconds(50));
  }
}

// Appends in one IMMEDIATE transaction (the write lock taken at BEGIN, where the busy timeout waits
// for it, rather than at the first write, where SQLite would refuse at once to avoid a deadlock).
std::int64_t write_transaction(const std::string& path, const HistoryOptions& o,
                               const std::function<std::int64_t(SQLite::Database&)>& body) {
  return guarded(path, [&] {
    return retry_while_busy(o, [&] {
      if (o.write_attempts) ++*o.write_attempts;
      SQLite::Database db = open_for_writing(path, o);
      SQLite::Transaction t(db, SQLite::TransactionBehavior::IMMEDIATE);
      migrate(db, path);
      const std::int64_t id = body(db);
      t.commit();
      return id;
    });
  });
}

// ---- reading ----

constexpr const char* kTenantColumns =
    "SELECT r.id, r.command, r.start_time, r.host, r.version, r.git_sha, r.suite, r.backend, r.results_file, "
    "r.exit_code, r.verdict, t.id, t.scenario, t.mode, t.tenant, t.workload, t.params_key, t.repetitions, "
    "t.repetitions_measured, t.cutoff, t.p95_slowdown, t.p95_ci_low, t.p95_ci_high, t.median_slowdown, t.verdict, "
    "t.verdict_reason, r.matrix_devices, r.matrix_workloads FROM tenants t JOIN runs r ON r.id = t.run_id ";

template <typename E>
E enum_column(const SQLite::Column& c, E fallback) {
  return parse_name<E>(c.getString()).value_or(fallback);
}

HistoryRun run_from_row(SQLite::Statement& s) {
  HistoryRun r;
  r.id = s.getColumn(0).getInt64();
  r.command = s.getColumn(1).getString();
  r.start_time = s.getColumn(2).getString();
  r.host = s.getColumn(3).getString();
  r.version = s.getColumn(4).getString();
  r.git_sha = s.getColumn(5).getString();
  r.suite = s.getColumn(6).getString();
  r.backend = s.getColumn(7).getString();
  r.results_file = s.getColumn(8).getString();
  if (!s.getColumn(9).isNull()) r.exit_code = s.getColumn(9).getInt();
  r.verdict = s.getColumn(10).getString();
  if (!s.getColumn(26).isNull()) r.matrix_devices = s.getColumn(26).getInt();
  if (!s.getColumn(27).isNull()) r.matrix_workloads = s.getColumn(27).getInt();
  return r;
}

std::vector<HistoryRepetition> repetitions_of(SQLite::Database& db, std::int64_t tenant_id) {
  SQLite::Statement s(db,
                      "SELECT repetition, run_status, colocated_status, verdict, throughput_exclusive, "
                      "throughput_colocated, throughput_unit FROM repetitions WHERE tenant_id = ? ORDER BY rowid");
  s.bind(1, tenant_id);
  std::vector<HistoryRepetition> out;
  while (s.executeStep()) {
    HistoryRepetition r;
    r.repetition = s.getColumn(0).getInt();
    r.run_status = enum_column(s.getColumn(1), RunStatus::error);
    r.colocated_status = enum_column(s.getColumn(2), WorkerStatus::not_run);
    r.verdict = enum_column(s.getColumn(3), Verdict::error);
    r.throughput_exclusive = column_optional(s.getColumn(4));
    r.throughput_colocated = column_optional(s.getColumn(5));
    r.throughput_unit = s.getColumn(6).getString();
    out.push_back(r);
  }
  return out;
}

HistoryTenantRecord tenant_from_row(SQLite::Database& db, SQLite::Statement& s) {
  HistoryTenantRecord t;
  t.run = run_from_row(s);
  const std::int64_t tenant_id = s.getColumn(11).getInt64();
  t.key = {s.getColumn(12).getString(), s.getColumn(13).getString(), s.getColumn(14).getString(),
           s.getColumn(15).getString(), s.getColumn(16).getString()};
  t.repetitions = s.getColumn(17).getInt();
  t.repetitions_measured = s.getColumn(18).getInt();
  t.cutoff = column_optional(s.getColumn(19));
  t.p95_slowdown = column_optional(s.getColumn(20));
  t.p95_ci_low = column_optional(s.getColumn(21));
  t.p95_ci_high = column_optional(s.getColumn(22));
  t.median_slowdown = column_optional(s.getColumn(23));
  t.verdict = enum_column(s.getColumn(24), Verdict::error);
  t.verdict_reason = s.getColumn(25).getString();
  t.per_repetition = repetitions_of(db, tenant_id);
  return t;
}

std::vector<HistoryTenantRecord> read_tenants(SQLite::Database& db, SQLite::Statement& s) {
  std::vector<HistoryTenantRecord> out;
  while (s.executeStep()) out.push_back(tenant_from_row(db, s));
  return out;
}

}  // namespace

std::int64_t record_run(const std::string& db, const Results& results, const std::string& results_file,
                        const HistoryOptions& options) {
  return write_transaction(db, options, [&](SQLite::Database& d) {
    const std::int64_t run_id = insert_run(d, run_row(results, results_file));
    for (const TenantAggregate& a : results.aggregates)
      insert_repetitions(d, insert_tenant(d, run_id, results, a), results, a);
    return run_id;
  });
}

std::int64_t record_checks(const std::string& db, const HistoryRun& run, const std::vector<HistoryCheck>& checks,
                           const HistoryOptions& options) {
  return write_transaction(db, options, [&](SQLite::Database& d) {
    const std::int64_t run_id = insert_run(d, run);
    SQLite::Statement s(d, "INSERT INTO checks (run_id, check_id, title, status, evidence, threshold) VALUES (?, ?, ?, ?, ?, ?)");
    for (const HistoryCheck& c : checks) {
      s.bind(1, run_id);
      s.bind(2, c.id);
      s.bind(3, c.title);
      s.bind(4, to_string(c.status));
      s.bind(5, c.evidence);
      s.bind(6, c.threshold);
      s.exec();
      s.reset();
    }
    return run_id;
  });
}

std::int64_t record_matrix(const std::string& db, const MatrixResult& m, const std::string& matrix_file,
                           const HistoryOptions& options) {
  return write_transaction(db, options, [&](SQLite::Database& d) {
    const std::int64_t run_id = insert_run(d, matrix_run_row(m, matrix_file));
    for (const MatrixCell& c : m.cells) insert_cell(d, run_id, m, c);
    return run_id;
  });
}

std::vector<HistoryTenantRecord> history_trend(const std::string& db, const HistoryFilter& f, const HistoryOptions& options) {
  return guarded(db, [&] {
    SQLite::Database d = retry_while_busy(options, [&] { return open_for_reading(db, options); });
    const std::string match = "(?1 IS NULL OR t.scenario = ?1) AND (?2 IS NULL OR t.tenant = ?2)";
    SQLite::Statement s(d, std::string(kTenantColumns) + "WHERE " + match +
                               " AND r.id IN (SELECT id FROM (SELECT DISTINCT r.id AS id FROM tenants t JOIN runs r ON "
                               "r.id = t.run_id WHERE " + match + " ORDER BY r.id DESC LIMIT ?3)) ORDER BY r.id, t.id");
    if (f.scenario) s.bind(1, *f.scenario);
    if (f.tenant) s.bind(2, *f.tenant);
    s.bind(3, f.last_runs > 0 ? f.last_runs : -1);
    return read_tenants(d, s);
  });
}

std::vector<HistoryTenantRecord> history_window(const std::string& db, const HistoryWindow& w, const HistoryOptions& options) {
  return guarded(db, [&] {
    SQLite::Database d = retry_while_busy(options, [&] { return open_for_reading(db, options); });
    SQLite::Statement s(d, std::string(kTenantColumns) +
                               "WHERE t.id IN (SELECT t.id FROM tenants t JOIN runs r ON r.id = t.run_id WHERE "
                               "t.scenario = ? AND t.mode = ? AND t.tenant = ? AND t.workload = ? AND t.params_key = ? "
                               "AND (r.exit_code IS NULL OR r.exit_code <> ?) AND r.results_file <> ? AND r.command <> 'matrix' "
                               "ORDER BY r.id DESC LIMIT ?) ORDER BY r.id, t.id");
    s.bind(1, w.key.scenario);
    s.bind(2, w.key.mode);
    s.bind(3, w.key.tenant);
    s.bind(4, w.key.workload);
    s.bind(5, w.key.params_key);
    s.bind(6, static_cast<int>(kExitInterrupted));
    s.bind(7, w.exclude_results_file);
    s.bind(8, w.last_n > 0 ? w.last_n : -1);
    return read_tenants(d, s);
  });
}

std::vector<HistoryCheck> history_checks(const std::string& db, std::int64_t run_id, const HistoryOptions& options) {
  return guarded(db, [&] {
    SQLite::Database d = retry_while_busy(options, [&] { return open_for_reading(db, options); });
    SQLite::Statement s(d, "SELECT check_id, title, status, evidence, threshold FROM checks WHERE run_id = ? ORDER BY rowid");
    s.bind(1, run_id);
    std::vector<HistoryCheck> out;
    while (s.executeStep())
      out.push_back({s.getColumn(0).getString(), s.getColumn(1).getString(),
                     enum_column(s.getColumn(2), CheckOutcome::unknown), s.getColumn(3).getString(),
                     s.getColumn(4).getString()});
    return out;
  });
}

bool history_available() { return true; }

int history_schema_version(const std::string& db) {
  return guarded(db, [&] {
    SQLite::Database d(db, SQLite::OPEN_READONLY);
    return user_version(d);
  });
}

}  // namespace ib
