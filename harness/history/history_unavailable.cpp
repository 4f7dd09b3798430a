// The history in a build without SQLiteCpp (Ubuntu 22.04 packages none): every database call says so.
#include "harness/history/history.h"

namespace ib {

namespace {

[[noreturn]] void unavailable(const std::string& db) {
  throw HistoryError(db, HistoryProblem::other,
                     "this build has no history database support (SQLiteCpp, Debian's libsqlitecpp-dev, was not "
                     "found when it was configured): install it and rebuild");
}

}  // namespace

bool history_available() { return false; }

std::int64_t record_run(const std::string& db, const Results&, const std::string&, const HistoryOptions&) {
  unavailable(db);
}

std::int64_t record_checks(const std::string& db, const HistoryRun&, const std::vector<HistoryCheck>&,
                           const HistoryOptions&) {
  unavailable(db);
}

std::int64_t record_matrix(const std::string& db, const MatrixResult&, const std::string&, const HistoryOptions&) {
  unavailable(db);
}

std::vector<HistoryTenantRecord> history_trend(const std::string& db, const HistoryFilter&, const HistoryOptions&) {
  unavailable(db);
}

std::vector<HistoryTenantRecord> history_window(const std::string& db, const HistoryWindow&, const HistoryOptions&) {
  unavailable(db);
}

std::vector<HistoryCheck> history_checks(const std::string& db, std::int64_t, const HistoryOptions&) { unavailable(db); }

int history_schema_version(const std::string& db) { unavailable(db); }

}  // namespace ib
