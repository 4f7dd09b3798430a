// Chart.js (Debian's libjs-chart.js), inlined into the binary at build time (cmake/embed_chartjs.cmake),
// so the HTML report is one self-contained file that fetches nothing.
#pragma once

namespace ib {

// false when libjs-chart.js was not found at configure time: --html is then unavailable (exit 3).
bool chartjs_available();
// The file it was taken from ("" when unavailable).
const char* chartjs_origin();
// Its text ("" when unavailable).
const char* chartjs_source();

}  // namespace ib
