// The table of modes (mode_table.h): one row per mode, each given by the mode's own file.
#include "harness/modes/mode_table.h"

#include <stdexcept>

namespace ib {

// Each mode's row, from its own file (harness/modes/<mode>.cpp).
ModeRow exclusive_row();
ModeRow timeslice_row();
ModeRow mps_row();
ModeRow mig_row();
ModeRow streams_row();

const std::vector<ModeRow>& mode_table() {
  static const std::vector<ModeRow> table = [] {
    std::vector<ModeRow> rows = {exclusive_row(), timeslice_row(), mps_row(), mig_row(), streams_row()};
    // In the enum's order, one row per mode: mode_row indexes by the enum.
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (static_cast<std::size_t>(rows[i].mode) != i || !rows[i].plan)
        throw std::logic_error(std::string("mode table: row ") + std::to_string(i) + " is out of order or has no plan");
    if (rows.size() != EnumWords<Mode>::words.size()) throw std::logic_error("mode table: a mode has no row");
    return rows;
  }();
  return table;
}

const ModeRow& mode_row(Mode m) { return mode_table().at(static_cast<std::size_t>(m)); }

Plan make_plan(const Scenario& s, const ModeContext& ctx, int sequence) { return mode_row(s.mode).plan(s, ctx, sequence); }

const char* mode_description(Mode m) { return mode_row(m).description; }

std::vector<Mode> modes_in_all() {
  std::vector<Mode> out;
  for (const ModeRow& r : mode_table())
    if (r.in_all) out.push_back(r.mode);
  return out;
}

std::size_t extra_blocks_per_round(Mode m, std::size_t tenants) { return mode_row(m).extra_blocks_per_tenant * tenants; }

bool runs_fixed(Mode m) { return mode_row(m).runs_fixed; }

}  // namespace ib
