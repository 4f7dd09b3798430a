#include "reports/junit/junit_common.h"

#include <sstream>

namespace ib {

pugi::xml_node new_junit_suite(pugi::xml_document& doc, const std::string& name) {
  pugi::xml_node decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  pugi::xml_node suites = doc.append_child("testsuites");
  suites.append_attribute("name") = "interference-bench";
  pugi::xml_node suite = suites.append_child("testsuite");
  suite.append_attribute("name") = name.c_str();
  return suite;
}

std::string junit_xml_text(const pugi::xml_document& doc) {
  std::ostringstream os;
  doc.save(os, "  ", pugi::format_default, pugi::encoding_utf8);
  return os.str();
}

void add_junit_case(pugi::xml_node suite, const std::string& classname, const std::string& name, const char* kind,
                    const std::string& message, const std::string& text) {
  pugi::xml_node tc = suite.append_child("testcase");
  tc.append_attribute("classname") = classname.c_str();
  tc.append_attribute("name") = name.c_str();
  if (*kind) {
    pugi::xml_node n = tc.append_child(kind);
    n.append_attribute("message") = message.c_str();
    if (std::string(kind) != "skipped") {
      n.append_attribute("type") = kind;
      n.text() = text.c_str();
    }
  }
  tc.append_child("system-out").text() = text.c_str();
}

void set_junit_counts(pugi::xml_node suite, int tests, int failures, int skipped) {
  suite.append_attribute("tests") = tests;
  suite.append_attribute("failures") = failures;
  suite.append_attribute("errors") = 0;
  suite.append_attribute("skipped") = skipped;
}

}  // namespace ib
