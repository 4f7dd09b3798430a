// What the HTML pages share: escaping and the stylesheet of the run's report and vet's page.
#pragma once

#include <string>

namespace ib {

// `s` with & < > " ' as character references.
std::string html_escape(const std::string& s);

// The stylesheet of the run's report (results_html.h) and vet's page (platform_html.h).
extern const char* const kHtmlReportStyle;

}  // namespace ib
