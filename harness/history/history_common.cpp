// The parts of the history that need no database, in every build (with or without SQLiteCpp).
#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/history/history.h"

namespace ib {

std::string history_params_key(const nlohmann::json& params) {
  // nlohmann::json (not ordered_json) keeps object keys sorted, so equal params give equal text.
  return nlohmann::json(params).dump();
}

int exit_code_after_history_failure(int own_exit_code) {
  return own_exit_code == kExitPass ? kExitCannotRun : own_exit_code;
}

void require_history(const std::string& option) {
  if (!history_available())
    throw CannotRunError(option + ": this build has no history database support (SQLiteCpp, Debian's "
                                  "libsqlitecpp-dev, was not found when it was configured): install it and rebuild");
}

}  // namespace ib
