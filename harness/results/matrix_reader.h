// A matrix.json (reports/matrix.schema.json, written by reports/json/matrix_json.cpp) read back into the
// MatrixResult it was written from: what `compare BASE/matrix.json NEW/matrix.json` and `report matrix.json`
// read. Like the results reader (results_reader.h), a file that does not read is bad input: one
// ResultsFileError naming the file, the field and what is wrong (exit 2).
#pragma once

#include "harness/results/matrix.h"
#include "harness/results/results_reader.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ib {

// True when `path` is a JSON document whose meta.command is "matrix" (read without building the rest of it,
// so that telling a matrix.json from a results.json costs one pass over the text). False for anything else,
// a file that does not read included: the reader that is then called says what is wrong with it.
bool is_matrix_file(const std::string& path);

// Reads a matrix.json of schema major 1; schema_version keeps the file's. Written again (matrix_to_json), it
// comes out the same. Throws ResultsFileError, also for a document of another command (meta.command).
MatrixResult read_matrix_file(const std::string& path);
// The same from its parsed text; `file` names it in errors.
MatrixResult matrix_from_json(const nlohmann::ordered_json& doc, const std::string& file);

}  // namespace ib
