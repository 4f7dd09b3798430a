#include "reports/html/html_common.h"

namespace ib {

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

const char* const kHtmlReportStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: #2a7d2a; } .fail { color: #c0392b; font-weight: bold; } .inconclusive { color: #d35400; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 12px; }
figure.chart { margin: 0; border: 1px solid #ddd; padding: 6px; }
figcaption { font-size: 12px; color: #555; }
.box { position: relative; height: 280px; }
.note { color: #666; font-size: 12px; } .banner { background: #fff3cd; padding: 6px; }
pre.errors { color: #c0392b; }
)css";

}  // namespace ib
