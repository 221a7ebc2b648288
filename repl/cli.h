// The command line of the nn program (SPEC §9): what was asked for, parsed
// from argv with CLI11.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nn::repl {

enum class Mode {
  Script,  // nn FILE.nn ARGS...   /   nn run FILE.nn ARGS...
  Code,    // nn -e CODE ARGS...
  Stdin,   // nn (stdin not a terminal), or nn - ARGS...
  Repl,    // nn on a terminal
  Check,   // nn check FILE.nn
  Ir,      // nn ir FILE.nn
  Dot,     // nn dot FILE.nn -o OUT
  Onnx,    // nn onnx FILE.nn -o OUT.onnx
  OnnxInfo,  // nn onnx --info MODEL.onnx
};

struct CliOptions {
  Mode mode = Mode::Repl;
  std::string file;                      // Script, Check, Ir, Dot
  std::string code;                      // Code
  std::vector<std::string> script_args;  // `args` in the script

  // Options for every mode.
  std::string device = "cpu";
  int threads = 0;  // 0: all cores
  bool threads_given = false;  // --threads was on the command line
  int nproc = 0;    // --nproc N: N ranks through mpiexec (0: not asked)
  uint64_t seed = 0;
  std::string precision = "f32";  // --precision f32|tf32|bf16|f16 (SPEC §15)
  bool eager = false;
  bool check_graph = false;
  bool explain = false;
  bool stats = false;
  bool profile = false;      // --profile: the per-op table at the end
  std::string profile_path;  // --profile=FILE.json: and a Chrome trace
  std::string schedule = "auto";  // graph schedule: auto, serial, bfs, greedy, frees-first
  std::string memory = "arena";   // graph memory: arena or pool
  std::vector<std::string> disabled_passes;
  size_t max_memory_bytes = 0;  // 0: no limit but the machine's

  // ir, dot and onnx.
  std::string graph_name;  // empty: the first graph compiled
  bool raw = false;
  std::string dump_passes_dir;
  std::string output_path;
  // dot only: --color phase|memory (fill by phase, or by the memory plan's
  // block with reader counts), --collapse N (fold nn calls deeper than N).
  bool color_memory = false;
  int collapse = -2;  // ir::kAutoCollapse; -1: fold nothing
};

// Parses argv into `out`. Returns std::nullopt when the program should go on,
// or the exit code to end with: 0 after --help or --version, 2 for bad usage
// (CLI11's message already printed to stderr).
std::optional<int> parse_command_line(int argc, char** argv, CliOptions& out);

// "4096", "64K", "64M", "2G", "1.5G", "512MiB", "2gb": binary multiples.
// std::nullopt for anything else.
std::optional<size_t> parse_byte_size(std::string_view text);

}  // namespace nn::repl
