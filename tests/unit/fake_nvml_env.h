// A test fixture that points ib::Nvml::load() at the project's fake NVML (tests/fakes/fake_nvml.cpp) with a config
// written by the test. Shared by telemetry_test.cpp and probe_test.cpp.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#ifndef FAKE_NVML_PATH
#error "FAKE_NVML_PATH must name libfake_nvml.so"
#endif

namespace ib_test {

class FakeNvmlEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ib-fake-nvml-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    config_ = dir_ / "config.json";
    setenv("INTERFERENCE_BENCH_NVML", FAKE_NVML_PATH, 1);
    setenv("FAKE_NVML_CONFIG", config_.c_str(), 1);
    unsetenv("FAKE_NVML_STATE");
  }

  void TearDown() override {
    unsetenv("INTERFERENCE_BENCH_NVML");
    unsetenv("FAKE_NVML_CONFIG");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void write_config(const nlohmann::json& config) {
    std::ofstream out(config_);
    out << config.dump(2);
  }

  std::filesystem::path dir_, config_;
};

}  // namespace ib_test
