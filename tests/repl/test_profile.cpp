// What --profile shows: the per-op table (ops by total time, with count,
// total, mean and share worked out from the events) and the Chrome trace
// (microseconds from the first event); and, through the nn program, that a
// run records its eager ops and its graphs' nodes with their phases.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "repl/profile_report.h"

#ifndef NN_BINARY
#error "NN_BINARY (the path of the nn program) must be defined"
#endif

namespace {

namespace fs = std::filesystem;
using nn::backend::ProfileEvent;

// A folder of its own, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/nn-profile-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  REQUIRE(f);
  return nlohmann::json::parse(f);
}

}  // namespace

TEST_CASE("profile table: ops by total time, with count, total ms, mean us and share") {
  // add: 3 us + 5 us = 8 us in 2 calls (mean 4 us); exp: 12 us; mul: 20 us.
  // All 40 us: shares 50%, 30%, 20%.
  const std::vector<ProfileEvent> events{{"add", "eager", 1000, 4000},
                                         {"exp", "forward", 4000, 16000},
                                         {"add", "backward", 16000, 21000},
                                         {"mul", "optimizer", 30000, 50000}};
  std::ostringstream out;
  nn::repl::print_profile_table(events, out);
  CHECK(out.str() ==
        "op                                   count     total ms      mean us   share\n"
        "mul                                      1        0.020        20.00   50.0%\n"
        "exp                                      1        0.012        12.00   30.0%\n"
        "add                                      2        0.008         4.00   20.0%\n"
        "all ops                                  4        0.040\n");
}

TEST_CASE("profile trace: one complete event per op call, in microseconds from the first") {
  TempDir dir;
  const std::vector<ProfileEvent> events{{"matmul", "forward", 5000, 9500}, {"relu", "backward", 2000, 2500}};
  nn::repl::write_chrome_trace(events, (dir.path / "t.json").string());
  const nlohmann::json j = read_json(dir.path / "t.json");
  CHECK(j["displayTimeUnit"] == "ms");
  const nlohmann::json& list = j["traceEvents"];
  REQUIRE(list.size() == 2);
  CHECK(list[0]["name"] == "matmul");
  CHECK(list[0]["cat"] == "forward");
  CHECK(list[0]["ph"] == "X");
  CHECK(list[0]["ts"].get<double>() == 3.0);  // (5000 - 2000) ns
  CHECK(list[0]["dur"].get<double>() == 4.5);
  CHECK(list[1]["ts"].get<double>() == 0.0);
  CHECK(list[1]["dur"].get<double>() == 0.5);
  CHECK_THROWS_WITH(nn::repl::write_chrome_trace(events, (dir.path / "none" / "t.json").string()),
                    doctest::Contains("cannot write the profile"));
}

TEST_CASE("nn --profile=FILE.json records eager op calls and each graph node with its phase") {
  TempDir dir;
  const fs::path trace = dir.path / "p.json", err = dir.path / "err.txt";
  // Eager ops make w and x; the graph runs twice, its nodes the same each
  // time: loss = sum(relu(w * x)) = 9, the step w = 1 - 0.5 * 3 = -0.5;
  // then relu(-1.5) = 0: loss 0 and no change.
  std::ofstream(dir.path / "p.nn") << "let w = param(ones([3]))\n"
                                      "let x = full([3], 2.0) + 1.0\n"
                                      "let opt = sgd([w], lr=0.5)\n"
                                      "graph step() {\n"
                                      "  let loss = sum(relu(w * x))\n"
                                      "  minimize(loss, opt)\n"
                                      "  return loss\n"
                                      "}\n"
                                      "print(step())\nprint(step())\nprint(w)\n";
  const std::string cmd = std::string(NN_BINARY) + " --threads 1 --profile=" + trace.string() + " " +
                          (dir.path / "p.nn").string() + " 2>" + err.string();
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  REQUIRE(pclose(p) == 0);
  CHECK(out == "9.0\n0.0\nf32[3] [-0.5, -0.5, -0.5]\n");
  const nlohmann::json list = read_json(trace)["traceEvents"];
  REQUIRE(list.size() >= 3);
  CHECK(list[0]["name"] == "full");  // ones
  CHECK(list[1]["name"] == "full");
  CHECK(list[2]["name"] == "add");
  int eager = 0, forward = 0, backward = 0;
  for (const auto& e : list) {
    eager += e["cat"] == "eager";
    forward += e["cat"] == "forward";
    backward += e["cat"] == "backward";
    CHECK(e["dur"].get<double>() >= 0);
  }
  CHECK(eager >= 3);
  CHECK((forward > 0 && forward % 2 == 0));  // the same nodes in both runs
  CHECK((backward > 0 && backward % 2 == 0));
  CHECK(eager + forward + backward == int(list.size()));  // optimizer nodes: fused into the backward's
  std::ifstream e(err);
  const std::string table((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
  CHECK(table.find("op                                   count") == 0);
  std::string count = std::to_string(list.size());
  count.insert(0, 9 - count.size(), ' ');
  CHECK(table.find("\nall ops                          " + count + " ") != std::string::npos);
  CHECK(table.find("profile: wrote " + trace.string()) != std::string::npos);
}
