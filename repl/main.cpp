// The nn program: parses the command line (repl/cli.h) and runs a script,
// code from -e, or stdin through the interpreter. Exit codes: 0 success,
// 1 an error in the script (its diagnostics on stderr), 2 bad usage, 3 an
// internal failure; exit(code) in a script ends with that code.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <exception>
#include <iostream>
#include <iterator>
#include <memory>
#include <new>
#include <string>

#include "frontend/interpreter.h"
#include "repl/cli.h"
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
  std::cerr << "error: " << message << "\n";
}

void print_diagnostics(const Interpreter& interp, const nn::frontend::ScriptError& e) {
  std::cout.flush();
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
  o.seed = cli.seed;
  o.max_memory_bytes = cli.max_memory_bytes;
  o.args = cli.script_args;
  return o;
}

// Runs what the command line asked for; returns the exit code. Every
// exception ends here, so none crosses the thread boundary.
int run(const CliOptions& cli) {
  if (cli.mode == Mode::Repl) return nn::repl::run_repl(interpreter_options(cli));
  std::unique_ptr<Interpreter> interp;
  try {
    interp = std::make_unique<Interpreter>(interpreter_options(cli));
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
      case Mode::Ir:
      case Mode::Dot: break;  // rejected before the interpreter starts
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
  } catch (const nn::frontend::ExitRequest& r) {
    std::cout.flush();
    return r.code;
  } catch (const std::bad_alloc&) {
    print_error("out of host memory");
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "internal error: " << e.what() << "\n";
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
  // Ctrl-C (the REPL's SIGINT handler) is for the thread that runs the code.
  sigset_t sigint;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigint, nullptr);
  pthread_join(thread, nullptr);
  return job.exit_code;
}

// Errors the command line can show before any script runs; 0 when none.
int check_unsupported(const CliOptions& cli) {
  if (cli.device != "cpu") {
    print_error("device `" + cli.device + "` is not available: this build of nn runs on the cpu only");
    return 1;
  }
  if (cli.mode == Mode::Ir || cli.mode == Mode::Dot) {
    print_error("graph mode is not available yet");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CliOptions cli;
  try {
    if (auto rc = nn::repl::parse_command_line(argc, argv, cli)) return *rc;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 3;
  }
  if (int rc = check_unsupported(cli)) return rc;

  // The interactive REPL on a terminal (repl/repl.h); otherwise stdin is a script.
  if (cli.mode == Mode::Repl && !isatty(STDIN_FILENO)) cli.mode = Mode::Stdin;
  return run_with_big_stack(cli);
}
