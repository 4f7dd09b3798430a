// What the JUnit documents of a run, vet and sustain share: one suite in its document, testcases with
// an outcome and their evidence, the counts, the text. Written with pugixml (it escapes).
#pragma once

#include <pugixml.hpp>

#include <string>

namespace ib {

// A document of <testsuites name="interference-bench"> holding one <testsuite name=`name`>, returned.
pugi::xml_node new_junit_suite(pugi::xml_document& doc, const std::string& name);

// The document as text, two spaces per level.
std::string junit_xml_text(const pugi::xml_document& doc);

// A testcase with an outcome element (`kind`: failure, error, skipped; empty: passed) and the evidence.
void add_junit_case(pugi::xml_node suite, const std::string& classname, const std::string& name, const char* kind,
                    const std::string& message, const std::string& text);

// The suite's tests, failures, errors (0) and skipped attributes.
void set_junit_counts(pugi::xml_node suite, int tests, int failures, int skipped);

}  // namespace ib
