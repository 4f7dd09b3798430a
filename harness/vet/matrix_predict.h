// `matrix --predict` (docs/design.md section 14, docs/methodology.md). PLACEHOLDER until the prediction lands:
// the conductor's entry points the matrix command calls.
#pragma once

#include "harness/results/matrix.h"
#include "harness/vet/platform.h"

#include <chrono>
#include <cstddef>
#include <string>

namespace ib {

// The runs --predict takes for n workloads (said before anything runs).
std::size_t prediction_run_count(const PlatformOptions& o, std::size_t n);

// Profiles every workload, fills r.prediction and predicted cells, measures o.matrix.predict_sample pairs.
void run_prediction(const PlatformOptions& o, MatrixResult& r, const std::string& out_dir,
                    std::chrono::steady_clock::time_point t0);

}  // namespace ib
