// Parsing the nn command line (SPEC §9) with CLI11.
//
// The shape of the line: options, then a subcommand or a script path, then
// the script's own arguments. Everything after the script path belongs to
// the script, options included (`nn f.nn --threads 2` gives the script
// args == ["--threads", "2"]), so the top-level app and `run` are CLI11
// prefix commands: parsing stops at the first positional argument and the
// rest comes back in remaining(). The options for all modes are declared on
// every subcommand too, so `nn run --threads 2 f.nn` and
// `nn check --eager f.nn` work as well as `nn --threads 2 run f.nn`.
#include "repl/cli.h"

#include "ir/picture/picture.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>

#include <sys/stat.h>
#include <unistd.h>

namespace nn::repl {

std::optional<size_t> parse_byte_size(std::string_view text) {
  size_t i = 0;
  std::string number;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) number += text[i++];
  if (number.empty() || number == "." || std::count(number.begin(), number.end(), '.') > 1) return std::nullopt;

  std::string suffix;
  for (; i < text.size(); ++i) suffix += char(std::tolower(static_cast<unsigned char>(text[i])));
  // "m", "mb" and "mib" all mean 2^20: memory limits are read in binary units.
  if (suffix.size() == 3 && suffix.substr(1) == "ib") suffix = suffix.substr(0, 1);
  if (suffix.size() == 2 && suffix[1] == 'b') suffix = suffix.substr(0, 1);
  double scale = 1;
  if (suffix.empty() || suffix == "b") scale = 1;
  else if (suffix == "k") scale = 1024.0;
  else if (suffix == "m") scale = 1024.0 * 1024;
  else if (suffix == "g") scale = 1024.0 * 1024 * 1024;
  else if (suffix == "t") scale = 1024.0 * 1024 * 1024 * 1024;
  else return std::nullopt;

  double bytes = std::strtod(number.c_str(), nullptr) * scale;
  if (!std::isfinite(bytes) || bytes >= double(std::numeric_limits<size_t>::max())) return std::nullopt;
  return size_t(std::llround(bytes));
}

namespace {

// Whether a file could be written at `path`, without making it: the file
// is writable, or, where there is none, its folder is.
bool writable(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) return S_ISREG(st.st_mode) && access(path.c_str(), W_OK) == 0;
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  return access(dir.c_str(), W_OK | X_OK) == 0;
}

// Options accepted by every mode; each app writes into its own copy so that
// repeatable options given both before and after a subcommand add up.
struct CommonOptions {
  std::string device, precision;
  std::optional<int> threads;
  std::optional<int> nproc;
  std::optional<uint64_t> seed;
  bool eager = false, check_graph = false, explain = false, stats = false;
  std::string profile_path, schedule, memory;
  std::vector<std::string> disabled_passes;
  std::optional<size_t> max_memory_bytes;
};

const CLI::Validator kDeviceName(
    [](std::string& name) -> std::string {
      if (name == "cpu" || name == "cuda") return "";
      if (name.rfind("cuda:", 0) == 0 && name.size() > 5 &&
          std::all_of(name.begin() + 5, name.end(), [](unsigned char c) { return std::isdigit(c); }))
        return "";
      return "a device is cpu, cuda or cuda:N, not `" + name + "`";
    },
    "");

// CLI11 would wrap "-1" into a huge uint64_t, and clamp a number past
// 2^64 - 1 to it; a seed is written as digits, and must fit.
const CLI::Validator kUnsigned(
    [](std::string& text) -> std::string {
      bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
      if (!digits) return "`" + text + "` is not a non-negative integer";
      errno = 0;
      std::strtoull(text.c_str(), nullptr, 10);
      return errno == ERANGE ? "`" + text + "` is more than 2^64 - 1" : "";
    },
    "");

// An integer from lo to hi, said in words where it is not one ("abc" was
// "not in range 1 to 1024").
CLI::Validator integer_from(long lo, long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long n = std::strtol(text.c_str(), &end, 10);
        if (!text.empty() && *end == 0 && errno == 0 && n >= lo && n <= hi) return "";
        return "`" + text + "` is not an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
      },
      "");
}

// Rewrites a size such as "64M" into its byte count, or says what is wrong.
const CLI::Validator kByteSize(
    [](std::string& text) -> std::string {
      std::optional<size_t> bytes = parse_byte_size(text);
      if (!bytes) return "`" + text + "` is not a size in bytes (such as 4096, 64M or 2G)";
      text = std::to_string(*bytes);
      return "";
    },
    "");

// nn dot's output: Graphviz renders by the extension, so a wrong one is a
// usage error before the script runs.
const CLI::Validator kPictureFile(
    [](std::string& path) -> std::string {
      if (nn::ir::is_picture_path(path)) return "";
      return "`" + path + "`: the picture's extension must be " + nn::ir::kPictureExtensions;
    },
    "");

// --collapse: auto, -1 (fold nothing) or a nesting depth.
const CLI::Validator kCollapse(
    [](std::string& text) -> std::string {
      if (text == "auto") return "";
      char* end = nullptr;
      const long n = std::strtol(text.c_str(), &end, 10);
      if (!text.empty() && *end == 0 && n >= -1 && n <= 1000000) return "";
      return "`" + text + "`: --collapse takes auto, -1 (fold nothing) or a nesting depth 0, 1, ...";
    },
    "");

void add_common_options(CLI::App& app, CommonOptions& c) {
  app.add_option("--device", c.device, "Device to run on: cpu, cuda or cuda:N")
      ->check(kDeviceName)
      ->type_name("cpu|cuda[:N]");
  app.add_option("--threads", c.threads, "CPU threads for kernels (0: all cores)")
      ->check(integer_from(0, 4096))
      ->type_name("N");
  app.add_option("--nproc", c.nproc, "Run N ranks of the script through mpiexec (SPEC §14)")
      ->check(integer_from(1, 1024))
      ->type_name("N");
  app.add_option("--precision", c.precision,
                 "Arithmetic of the script (SPEC §15): f32, tf32 on GPUs, or bf16 / f16 mixed precision")
      ->check(CLI::IsMember({"f32", "tf32", "bf16", "f16"}))
      ->type_name("f32|tf32|bf16|f16");
  app.add_option("--seed", c.seed, "Seed of the random number generator")->check(kUnsigned)->type_name("N");
  app.add_flag("--eager", c.eager, "Run graph functions and blocks as eager code");
  app.add_flag("--check-graph", c.check_graph, "Run graphs both traced and eager and compare the outputs");
  app.add_flag("--explain", c.explain, "Say why each graph is traced again");
  // A flag that may take a value after '=', so `nn --profile f.nn` does not
  // read f.nn as the trace file; given bare, CLI11 stores "true".
  app.add_flag("--profile", c.profile_path, "Print a per-op time table at the end; with =FILE.json, write a Chrome trace too")
      ->type_name("[=FILE.json]");
  app.add_flag("--stats", c.stats, "Print graph and memory statistics at the end");
  app.add_option("--schedule", c.schedule,
                 "Order in which graphs run their nodes (auto: the one whose memory plan is smallest)")
      ->check(CLI::IsMember({"auto", "serial", "bfs", "greedy", "frees-first"}))
      ->type_name("auto|serial|bfs|greedy|frees-first");
  app.add_option("--memory", c.memory,
                 "Where graphs keep their intermediate values: one planned arena, or the pool recycling by reader count")
      ->check(CLI::IsMember({"arena", "pool"}))
      ->type_name("arena|pool");
  app.add_option("--no-pass", "Turn one graph optimization off (repeatable; `all` turns every one off)")
      ->type_name("NAME")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->each([&c](const std::string& name) { c.disabled_passes.push_back(name); });
  app.add_option("--max-memory", c.max_memory_bytes, "Memory limit per device, such as 512M or 2G")
      ->transform(kByteSize)
      ->type_name("BYTES");
}

// Later (subcommand) values win over earlier (top-level) ones; lists add up.
void merge_into(CliOptions& out, const CommonOptions& c) {
  if (!c.device.empty()) out.device = c.device;
  if (c.threads) {
    out.threads = *c.threads;
    out.threads_given = true;
  }
  if (c.nproc) out.nproc = *c.nproc;
  if (c.seed) out.seed = *c.seed;
  if (!c.precision.empty()) out.precision = c.precision;
  out.eager |= c.eager;
  out.check_graph |= c.check_graph;
  out.explain |= c.explain;
  out.stats |= c.stats;
  if (c.profile_path == "true") {
    out.profile = true;
  } else if (c.profile_path == "false") {
    out.profile = false;
    out.profile_path.clear();
  } else if (!c.profile_path.empty()) {
    out.profile = true;
    out.profile_path = c.profile_path;
  }
  if (!c.schedule.empty()) out.schedule = c.schedule;
  if (!c.memory.empty()) out.memory = c.memory;
  out.disabled_passes.insert(out.disabled_passes.end(), c.disabled_passes.begin(), c.disabled_passes.end());
  if (c.max_memory_bytes) out.max_memory_bytes = *c.max_memory_bytes;
}

int usage_error(const std::string& message) {
  std::cerr << message << "\nRun with --help for more information.\n";
  return 2;
}

// Whether `word` comes right after a "--" on the command line: then it is a
// script path even though it starts with '-'. (CLI11 drops that "--" from
// remaining() in some positions, so argv is asked.)
bool follows_dashes(int argc, char** argv, const std::string& word) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string_view(argv[i]) == "--" && argv[i + 1] == word) return true;
  return false;
}

// What a prefix command left over, without the "--" that may lead it.
std::vector<std::string> leftover(const CLI::App& app) {
  std::vector<std::string> rest = app.remaining(true);
  if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
  return rest;
}

// Splits the leftover arguments into the script path and its arguments.
std::optional<int> take_script(const std::vector<std::string>& rest, int argc, char** argv, CliOptions& out,
                               bool file_required) {
  if (rest.empty()) {
    if (file_required) return usage_error("a script path is required");
    return std::nullopt;
  }
  const std::string& first = rest.front();
  if (first.size() > 1 && first[0] == '-' && !follows_dashes(argc, argv, first))
    return usage_error("unknown option " + first.substr(0, first.find('=')));
  out.file = first;
  out.script_args.assign(rest.begin() + 1, rest.end());
  return std::nullopt;
}

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, CliOptions& out) {
  CLI::App app{"nn: a small language for tensor programs.", "nn"};
  app.footer(
      "Usage forms:\n"
      "  nn                          REPL (runs a script from stdin when it is not a terminal)\n"
      "  nn FILE.nn [ARGS...]        run a script (same as: nn run FILE.nn ARGS...)\n"
      "  nn -e CODE [ARGS...]        run code given on the command line\n"
      "  nn check FILE.nn            parse and resolve names; run nothing\n"
      "  nn ir FILE.nn [--graph G] [--raw] [--dump-passes DIR]\n"
      "  nn dot FILE.nn [--graph G] [--raw] [--color phase|memory] [--collapse auto|N]\n"
      "                 -o OUT.svg|png|pdf|dot|html\n"
      "  nn onnx FILE.nn [--graph G] -o OUT.onnx   write a graph's forward as an ONNX model\n"
      "  nn onnx --info MODEL.onnx                 inputs, outputs, ops and params of a model\n"
      "Arguments after the script path go to the script (`args`).\n"
      "Exit codes: 0 success, 1 error in the script, 2 bad usage.");
  app.prefix_command();
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", std::string("nn ") + NN_VERSION);

  // One copy of the common options per app (see CommonOptions).
  std::vector<std::unique_ptr<CommonOptions>> commons;
  auto common_for = [&commons](CLI::App& a) {
    commons.push_back(std::make_unique<CommonOptions>());
    add_common_options(a, *commons.back());
  };
  common_for(app);
  std::optional<std::string> code;
  app.add_option("-e", code, "Run CODE; arguments after it go to the script")->type_name("CODE");

  CLI::App* run = app.add_subcommand("run", "Run a script: nn run FILE.nn [ARGS...]");
  run->prefix_command();
  common_for(*run);

  CLI::App* check = app.add_subcommand("check", "Parse a script and resolve its names; run nothing");
  check->prefix_command(false);
  check->allow_extras(false);
  check->add_option("file", out.file, "The script")->required()->type_name("FILE.nn");
  common_for(*check);

  CLI::App* ir = app.add_subcommand("ir", "Print the IR of a graph of the script");
  CLI::App* dot = app.add_subcommand("dot", "Draw a graph of the script with Graphviz");
  for (CLI::App* g : {ir, dot}) {
    g->prefix_command(false);
    g->allow_extras(false);
    g->add_option("file", out.file, "The script")->required()->type_name("FILE.nn");
    g->add_option("args", out.script_args, "Arguments for the script (`args`)")->type_name("ARGS");
    g->add_option("--graph", out.graph_name, "The graph (default: the first one compiled)")->type_name("G");
    g->add_flag("--raw", out.raw, "The graph before optimization");
    common_for(*g);
  }
  ir->add_option("--dump-passes", out.dump_passes_dir, "Write the IR after each pass to DIR")->type_name("DIR");
  dot->add_option("-o,--output", out.output_path, "Output file: .svg, .png, .pdf, .dot or .html (an interactive page)")
      ->required()
      ->check(kPictureFile)
      ->type_name("OUT");
  std::string color;
  dot->add_option("--color", color, "Fill nodes by phase (default) or by the memory plan's block")
      ->check(CLI::IsMember({"phase", "memory"}))
      ->type_name("phase|memory");
  std::string collapse = "auto";
  dot->add_option("--collapse", collapse,
                  "Fold nn function calls nested deeper than N into one box each (auto: at most 80 boxes; -1: none)")
      ->check(kCollapse)
      ->type_name("auto|N");

  CLI::App* onnx = app.add_subcommand("onnx", "Write a graph of the script as an ONNX model, or describe a model");
  onnx->prefix_command(false);
  onnx->allow_extras(false);
  bool onnx_info = false;
  onnx->add_option("file", out.file, "The script (or, with --info, the model)")->required()->type_name("FILE");
  onnx->add_option("args", out.script_args, "Arguments for the script (`args`)")->type_name("ARGS");
  onnx->add_option("--graph", out.graph_name, "The graph (default: the first one compiled)")->type_name("G");
  onnx->add_option("-o,--output", out.output_path, "The model file to write")->type_name("OUT.onnx");
  onnx->add_flag("--info", onnx_info, "Describe the ONNX model FILE: inputs, outputs, ops, params, what nn cannot import");
  common_for(*onnx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code_from_cli = app.exit(e);  // prints help, the version or the error
    return code_from_cli == 0 ? 0 : 2;
  }

  for (const auto& c : commons) merge_into(out, *c);
  out.color_memory = color == "memory";
  out.collapse = collapse == "auto" ? nn::ir::kAutoCollapse : std::stoi(collapse);
  // Said now rather than after a long run; the file is written at the end
  // (by each rank under its own name, so this one is not made now).
  if (!out.profile_path.empty() && !writable(out.profile_path))
    return usage_error("--profile: cannot write `" + out.profile_path + "`");

  bool has_subcommand = app.get_subcommands().size() > 0;
  if (code && has_subcommand) return usage_error("-e cannot be combined with a subcommand");
  if (code) {
    out.mode = Mode::Code;
    out.code = *code;
    out.script_args = leftover(app);
    return std::nullopt;
  }
  if (*check) {
    out.mode = Mode::Check;
    return std::nullopt;
  }
  if (*ir || *dot) {
    out.mode = *ir ? Mode::Ir : Mode::Dot;
    return std::nullopt;
  }
  if (*onnx) {
    out.mode = onnx_info ? Mode::OnnxInfo : Mode::Onnx;
    if (!onnx_info && out.output_path.empty()) return usage_error("nn onnx: -o OUT.onnx is required (or --info MODEL.onnx)");
    if (onnx_info && !out.output_path.empty()) return usage_error("nn onnx --info reads a model; it takes no -o");
    return std::nullopt;
  }
  if (*run) {
    out.mode = Mode::Script;
    return take_script(leftover(app), argc, argv, out, true);
  }
  out.mode = Mode::Script;
  if (auto rc = take_script(leftover(app), argc, argv, out, false)) return rc;
  if (out.file.empty()) out.mode = Mode::Repl;  // main() decides between REPL and stdin
  return std::nullopt;
}

}  // namespace nn::repl
