// nn --nproc N (repl/rank_launch.h). The defaults, each a trap of running
// Open MPI on one machine: no core binding (by default each rank is bound to
// one core, which silently leaves OpenMP and OpenBLAS one thread), the cores
// split between the ranks (unless --threads says otherwise), oversubscription
// allowed when N passes the cores (with a note on a terminal), root allowed, the ob1
// messaging layer (a faster start), and mpiexec's own notices kept quiet: a
// rank's diagnostic is printed once, by nn. mpiexec runs as a child, so
// that a rank ended by a signal, which mpiexec no longer reports, is named.
#include "repl/rank_launch.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "backend/comm/communicator.h"

namespace nn::repl {
namespace {

pid_t g_mpiexec = 0;
volatile sig_atomic_t g_passed = 0;

// A timeout's SIGTERM: for mpiexec, which ends the ranks. Ctrl-C reaches
// mpiexec from the terminal itself (a second one would make it give up
// ending the ranks cleanly).
void pass_on(int sig) {
  g_passed = 1;
  if (g_mpiexec > 0 && sig != SIGINT) kill(g_mpiexec, sig);
}

// Runs mpiexec and returns its exit code; where a rank was ended by a
// signal (mpiexec exits with 128 + the signal, and with --quiet says
// nothing), says so, since no rank could.
int run_mpiexec(std::vector<char*>& cargs) {
  const pid_t parent = getpid();
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) signal(sig, pass_on);  // exec resets them in mpiexec
  g_mpiexec = fork();
  if (g_mpiexec < 0) return -1;
  if (g_mpiexec == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // this launcher killed: the run ends too
    if (getppid() != parent) _exit(1);
    execv(cargs[0], cargs.data());
    std::cerr << "error: --nproc: could not run " << cargs[0] << ": " << std::strerror(errno) << "\n";
    _exit(1);
  }
  int status = 0;
  while (waitpid(g_mpiexec, &status, 0) < 0 && errno == EINTR) {
  }
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + sig;
  if (!sig && code > 128 && code < 128 + 32) sig = code - 128;
  if (sig && !g_passed) {
    std::cerr << "error: a rank was ended by signal " << sig << " (" << strsignal(sig)
              << "); the run ended with it (exit code " << code << ")\n";
  }
  return code;
}

}  // namespace

int launch_ranks(const CliOptions& cli, int argc, char** argv) {
  namespace comm = backend::comm;
  // Standard input reaches rank 0 alone: every rank must read the same script.
  if (cli.mode == Mode::Repl || cli.mode == Mode::Stdin || (cli.mode == Mode::Script && cli.file == "-")) {
    std::cerr << "error: --nproc runs a script file (or -e code) on every rank, not the REPL or standard input\n";
    return 2;
  }
  if (!comm::mpi_built()) {
    std::cerr << "error: --nproc " << cli.nproc
              << " needs nn built with MPI (install libopenmpi-dev and openmpi-bin, then build again)\n";
    return 1;
  }
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> args{comm::mpiexec_path(), "-n", std::to_string(cli.nproc), "--bind-to", "none", "--quiet",
                                "-x", comm::kStderrIsTerminal};
  if (geteuid() == 0) args.push_back("--allow-run-as-root");
  if (cli.nproc > cores) {
    args.push_back("--oversubscribe");
    if (isatty(STDERR_FILENO))
      std::cerr << "note: --nproc " << cli.nproc << " runs more ranks than this machine's " << cores
                << " cores: they share them\n";
  }
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  args.push_back(n > 0 ? std::string(self, size_t(n)) : std::string(argv[0]));
  if (!cli.threads_given) {
    args.push_back("--threads");
    args.push_back(std::to_string(std::max(1, cores / cli.nproc)));
  }
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  setenv("OMPI_MCA_pml", "ob1", 0);
  // The ranks' stderr reaches this terminal through mpiexec, never as a
  // terminal of their own: rank 0 draws progress bars where this one would.
  setenv(comm::kStderrIsTerminal, isatty(STDERR_FILENO) ? "1" : "0", 1);

  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  if (const int code = run_mpiexec(cargs); code >= 0) return code;
  std::cerr << "error: --nproc: could not start " << args[0] << ": " << std::strerror(errno) << "\n";
  return 1;
}

}  // namespace nn::repl
