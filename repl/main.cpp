// The nn program: parses the command line (repl/cli.h) and runs a script,
// code from -e, or stdin through the interpreter. Exit codes: 0 success,
// 1 an error in the script (its diagnostics on stderr), 2 bad usage, 3 an
// internal failure; exit(code) in a script ends with that code.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <iostream>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "backend/comm/communicator.h"
#include "backend/ops.h"
#include "backend/profiler.h"
#include "frontend/interpreter.h"
#include "frontend/graph_picture.h"
#include "ir/pass.h"
#include "ir/plan.h"
#include "ir/printer.h"
#include "onnx/onnx_io.h"
#include "frontend/heap_tuning.h"
#include "repl/cli.h"
#include "repl/profile_report.h"
#include "repl/rank_launch.h"
#include "repl/rank_output.h"
#include "repl/repl.h"

namespace {

using nn::frontend::Interpreter;
using nn::repl::CliOptions;
using nn::repl::Mode;

// The interpreter recurses on the C++ stack for nested calls, so it runs on a
// thread with a big stack: deep recursion in a script then reaches nn's own
// "recursion too deep" diagnostic (the interpreter measures the stack it runs
// on) long before the stack overflows. The memory is virtual and committed
// only as it is touched.
constexpr size_t kInterpreterStackBytes = size_t(512) << 20;

void print_error(const std::string& message) {
  std::cout.flush();  // what the script printed comes before the error
  std::cerr << "error: " + message + "\n";  // one write: ranks' lines must not mix
}

void print_diagnostics(const Interpreter& interp, const nn::frontend::ScriptError& e) {
  std::cout.flush();
  nn::repl::before_rank_diagnostic();
  std::string text = interp.render(e);
  if (!text.empty() && text.back() != '\n') text += '\n';
  std::cerr << text;
  std::cerr.flush();
}

std::string read_all(std::istream& in) {
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

nn::frontend::InterpreterOptions interpreter_options(const CliOptions& cli) {
  nn::frontend::InterpreterOptions o;
  o.threads = cli.threads;
  o.device = cli.device;
  o.seed = cli.seed;
  o.precision = cli.precision;
  o.max_memory_bytes = cli.max_memory_bytes;
  o.args = cli.script_args;
  o.eager_graphs = cli.eager;
  o.check_graphs = cli.check_graph;
  o.explain = cli.explain;
  nn::ir::parse_schedule(cli.schedule, o.schedule);
  nn::ir::parse_memory_mode(cli.memory, o.memory);
  for (const std::string& name : cli.disabled_passes) {
    if (name != "all") o.disabled_passes.insert(name);
    else for (const std::string& each : nn::ir::pass_names()) o.disabled_passes.insert(each);
  }
  o.dump_passes_dir = cli.dump_passes_dir;
  return o;
}

// nn onnx: a graph as traced, when it computes outputs only (a training
// step's backward and updates have no ONNX form), as an ONNX model.
void write_onnx(const Interpreter& interp, const nn::ir::Graph& g, const std::string& path) {
  for (const nn::ir::Node& n : g.nodes)
    if (n.phase != nn::ir::Phase::forward || !g.updates.empty())
      throw nn::backend::Error("graph `" + g.name +
                               "` trains (it has a backward pass or updates state); ONNX takes a model's forward: "
                               "export a graph such as `graph predict(x) { model(x) }`, after eval(model)");
  nn::onnx_io::ExportOptions options;
  options.graph_name = g.name;
  options.name_of = [&interp](const nn::backend::Tensor& t) { return interp.user_name(t); };
  for (nn::ir::ValueId v : g.inputs) options.inputs.push_back(g.name_of(v));
  for (size_t i = 0; i < g.outputs.size(); ++i)
    options.outputs.push_back(g.outputs.size() == 1 ? "output" : "output" + std::to_string(i));
  nn::onnx_io::save(g, options, path);
}

// nn ir / nn dot / nn onnx: once graph G (or the first graph) is compiled,
// write it (as traced with --raw) and stop the script. --color memory fills nodes by
// the memory plan; --collapse N folds calls nested deeper than N into boxes.
void stop_at_graph(const CliOptions& cli, nn::frontend::InterpreterOptions& o,
                   const std::unique_ptr<Interpreter>& interp) {
  o.on_compiled = [&cli, &interp](const nn::ir::CompiledGraph& cg) {
    if (!cli.graph_name.empty() && cg.graph.name != cli.graph_name) return;
    if (cli.mode == Mode::Ir) {
      std::cout << nn::ir::print_ir(cli.raw ? cg.raw : cg.graph);
    } else if (cli.mode == Mode::Onnx) {
      write_onnx(*interp, cg.raw, cli.output_path);
    } else {
      nn::frontend::PictureRequest request;
      request.raw = cli.raw;
      request.memory = cli.color_memory;
      request.collapse = cli.collapse;
      nn::frontend::draw_graph(*interp, cg, request, cli.output_path);
    }
    throw nn::frontend::ExitRequest{0};
  };
}

std::string megabytes(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MB", double(bytes) / 1e6);
  return buf;
}

// --stats: at the end, memory per device and what each graph became.
void print_stats(const Interpreter& interp) {
  std::vector<nn::backend::Device*> devices{nn::backend::cpu_device()};
  if (interp.device() != devices[0]) devices.push_back(interp.device());
  for (nn::backend::Device* dev : devices) {
    nn::backend::MemoryStats m = dev->stats();
    std::cerr << "stats: " + dev->name() + " memory peak " + megabytes(m.peak) + ", in use " +
                     megabytes(m.current) + ", cached " + megabytes(m.cached) + "\n";
  }
  for (const auto& cache : interp.graphs()) {
    const nn::frontend::CompiledGraph* cg = cache->latest();
    if (!cg) continue;
    char buf[384];
    std::snprintf(buf, sizeof buf,
                  "stats: graph %s: %zu signature(s) traced; latest: %zu nodes, %zu edges, %llu runs, compile %.2f ms "
                  "(trace %.2f), run peak %s, planned %s (%s, %s order; lower bound %s)\n",
                  cache->name.c_str(), cache->traces, cg->graph.nodes.size(), cg->graph.edge_count(),
                  static_cast<unsigned long long>(cg->runs), cg->trace_ms + cg->compile_ms, cg->trace_ms,
                  megabytes(cg->peak_bytes).c_str(), megabytes(cg->plan.planned_bytes).c_str(),
                  nn::ir::memory_mode_name(cg->plan.memory), nn::ir::schedule_name(cg->plan.kind),
                  megabytes(cg->plan.lower_bound_bytes).c_str());
    std::cerr << buf;
  }
}

// The trace file of this rank: FILE.json itself on one rank; with several,
// rank k writes FILE.rank<k>.json, so that the ranks do not write one file.
std::string trace_path(const std::string& path) {
  const nn::backend::comm::World w = nn::backend::comm::launch_world();
  if (w.size <= 1) return path;
  const std::string rank = ".rank" + std::to_string(w.rank);
  const size_t dot = path.rfind('.'), slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + rank;
  return path.substr(0, dot) + rank + path.substr(dot);
}

// --profile: the table, and the Chrome trace when a file was named; false
// when the file could not be written.
bool report_profile(const CliOptions& cli, const nn::backend::Profiler& prof) {
  std::cout.flush();
  nn::repl::print_profile_table(prof.events(), std::cerr);
  if (cli.profile_path.empty()) return true;
  try {
    const std::string path = trace_path(cli.profile_path);
    nn::repl::write_chrome_trace(prof.events(), path);
    std::cerr << "profile: wrote " + path + "\n";
    return true;
  } catch (const std::exception& e) {
    print_error(e.what());
    return false;
  }
}

// With several ranks (SPEC §14), a failing rank ends every rank: its
// diagnostic is out already. Where MPI never started, its exit code tells
// mpiexec to end the others. A rank that succeeded first checks that every
// other rank ended too (one still making a collective call would wait for
// ever), then ends MPI, from the thread that started it.
void end_ranks(int rc) {
  namespace comm = nn::backend::comm;
  if (rc == 0 && comm::launch_world().size > 1) {
    try {
      nn::backend::check_end_of_run();
    } catch (const std::exception& e) {
      nn::repl::before_rank_diagnostic();
      print_error(e.what());
      rc = 1;
    }
  }
  comm::Communicator* c = comm::communicator_if_started();
  if (rc != 0 && c && c->world().size > 1) {
    std::cout.flush();
    std::cerr.flush();
    c->abort(rc);
  }
  comm::finalize();
}

// Runs what the command line asked for; returns the exit code. Every
// exception ends here, so none crosses the thread boundary.
int run_script(const CliOptions& cli, std::unique_ptr<Interpreter>& interp);

int run(const CliOptions& cli) {
  if (cli.mode == Mode::Repl) return nn::repl::run_repl(interpreter_options(cli));
  nn::backend::Profiler prof;
  if (cli.profile) nn::backend::Profiler::set_active(&prof);
  std::unique_ptr<Interpreter> interp;
  int rc = run_script(cli, interp);
  nn::backend::Profiler::set_active(nullptr);
  if (cli.profile && !report_profile(cli, prof) && rc == 0) rc = 1;
  if (cli.stats && interp) print_stats(*interp);
  end_ranks(rc);
  return rc;
}

int run_script(const CliOptions& cli, std::unique_ptr<Interpreter>& interp) {
  try {
    nn::frontend::InterpreterOptions opts = interpreter_options(cli);
    if (cli.mode == Mode::Ir || cli.mode == Mode::Dot || cli.mode == Mode::Onnx) stop_at_graph(cli, opts, interp);
    interp = std::make_unique<Interpreter>(std::move(opts));
    switch (cli.mode) {
      case Mode::Script:
        if (cli.file == "-") interp->run_code("<stdin>", read_all(std::cin));
        else interp->run_file(cli.file);
        break;
      case Mode::Code: interp->run_code("<-e>", cli.code); break;
      case Mode::Stdin:
      case Mode::Repl: interp->run_code("<stdin>", read_all(std::cin)); break;  // Repl: handled above
      case Mode::Check:
        interp->check_file(cli.file);
        std::cout << cli.file << ": ok\n";
        break;
      case Mode::OnnxInfo: std::cout << nn::onnx_io::describe(cli.file); break;
      case Mode::Ir:
      case Mode::Dot:
      case Mode::Onnx:
        interp->run_file(cli.file);  // stops at the graph: ExitRequest
        if (cli.graph_name.empty()) {
          print_error("the script ended without compiling a graph");
        } else {
          std::vector<std::string> made;
          for (const auto& cache : interp->graphs())
            if (!cache->entries.empty()) made.push_back(cache->name);
          std::string message = "the script ended without compiling graph `" + cli.graph_name + "`";
          if (const std::string near = nn::frontend::closest_name(cli.graph_name, made); !near.empty())
            message += "; did you mean `" + near + "`?";
          else if (!made.empty())
            message += " (it compiled " + std::to_string(made.size()) + (made.size() == 1 ? " graph: `" : " graphs, first `") +
                       made[0] + "`)";
          print_error(message);
        }
        return 1;
    }
    std::cout.flush();
    return 0;
  } catch (const nn::frontend::ScriptError& e) {
    if (interp) {
      print_diagnostics(*interp, e);
    } else {
      // The prelude failed to load: no interpreter is left to render with.
      for (const auto& d : e.diagnostics()) print_error(d.message);
    }
    return 1;
  } catch (const nn::backend::Error& e) {  // writing a picture or a model (nn dot, nn onnx)
    print_error(e.what());
    return 1;
  } catch (const nn::frontend::ExitRequest& r) {
    std::cout.flush();
    return r.code;
  } catch (const std::bad_alloc&) {
    print_error("out of host memory");
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << std::string("internal error: ") + e.what() + "\n";
    return 3;
  } catch (...) {
    std::cout.flush();
    std::cerr << "internal error: an unknown exception\n";
    return 3;
  }
}

struct ThreadJob {
  const CliOptions* cli;
  int exit_code = 3;
};

void* thread_main(void* arg) {
  auto* job = static_cast<ThreadJob*>(arg);
  job->exit_code = run(*job->cli);
  return nullptr;
}

// Ctrl-C's SIGINT is taken here, by a thread that computes nothing, and
// acted on as its handler says: the REPL's (which asks the running code to
// stop) is called here, and without one SIGINT ends the process as it
// would have. Delivered to a thread inside a JIT kernel (oneDNN's gemm), the
// handler's frame overwrote what the kernel kept below its stack pointer,
// and the REPL died of heap corruption.
void* ctrl_c_main(void*) {
  sigset_t sigint;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  for (;;) {
    int sig = 0;
    if (sigwait(&sigint, &sig) != 0) continue;
    struct sigaction now {};
    sigaction(SIGINT, nullptr, &now);
    if (now.sa_handler == SIG_IGN) continue;
    if (now.sa_handler != SIG_DFL) {
      now.sa_handler(SIGINT);
      continue;
    }
    pthread_sigmask(SIG_UNBLOCK, &sigint, nullptr);
    raise(SIGINT);  // the default action: the process ends, killed by SIGINT
  }
  return nullptr;
}

// SIGINT blocked in this thread, and so in every thread it starts (the
// interpreter's, the kernels' pools, MPI's), for the Ctrl-C thread's
// sigwait. After any child process is started: a mask outlives exec.
void start_ctrl_c_thread() {
  sigset_t sigint, before;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigint, &before);
  pthread_t ctrl_c;
  if (pthread_create(&ctrl_c, nullptr, ctrl_c_main, nullptr) == 0) pthread_detach(ctrl_c);
  else pthread_sigmask(SIG_SETMASK, &before, nullptr);  // no such thread: signals as before
}

// Runs `run` on a thread with a big stack while this thread waits; when no
// such thread can be made (a tight ulimit), runs it here.
int run_with_big_stack(const CliOptions& cli) {
  ThreadJob job{&cli};
  pthread_attr_t attr;
  pthread_t thread;
  bool started = pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, kInterpreterStackBytes) == 0 &&
                 pthread_create(&thread, &attr, thread_main, &job) == 0;
  pthread_attr_destroy(&attr);
  if (!started) return run(cli);
  pthread_join(thread, nullptr);
  return job.exit_code;
}

// Errors the command line can show before any script runs; 0 when none.
int check_unsupported(const CliOptions& cli) {
  if (!nn::backend::find_device(cli.device)) {
    print_error("device `" + cli.device + "` is not available: " + nn::backend::device_unavailable_reason(cli.device));
    return 1;
  }
  const std::vector<std::string> passes = nn::ir::pass_names();
  for (const std::string& name : cli.disabled_passes)
    if (name != "all" && std::find(passes.begin(), passes.end(), name) == passes.end()) {
      std::string known;
      for (const std::string& p : passes) known += (known.empty() ? "" : ", ") + p;
      print_error("--no-pass: there is no pass named `" + name + "` (the passes: " + known + "; or all)");
      return 2;
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  nn::frontend::keep_freed_memory();
  CliOptions cli;
  try {
    if (auto rc = nn::repl::parse_command_line(argc, argv, cli)) return *rc;
  } catch (const std::exception& e) {
    std::cerr << std::string("internal error: ") + e.what() + "\n";
    return 3;
  }
  if (int rc = check_unsupported(cli)) return rc;
  // The interactive REPL on a terminal (repl/repl.h); otherwise stdin is a script.
  if (cli.mode == Mode::Repl && !isatty(STDIN_FILENO)) cli.mode = Mode::Stdin;
  if (cli.nproc > 1 && !nn::backend::comm::launched_by_mpi()) return nn::repl::launch_ranks(cli, argc, argv);
  start_ctrl_c_thread();
  nn::repl::prefix_rank_output(nn::backend::comm::launch_world());
  return run_with_big_stack(cli);
}
