// Data parallel training on this machine (SPEC §14), the seed's "multi
// processes" table: the MLP 784-512-256-10 and the CNN of bench_training,
// batch 64 per rank, one thread a rank, on 1 and 2 processes; nn eager and
// graph (bench/models/dp_train.nn through `nn --nproc`) against PyTorch's
// DistributedDataParallel over gloo (bench/torch_distributed.py, when
// Debian's python3-torch is installed). Runs alternate nn and PyTorch and
// repeat; the figures are medians. Step time is rank 0's median; throughput
// N·64 / step; efficiency throughput(2) / (2 · throughput(1)); peak memory
// the largest resident size of any process of the run.
// Usage: bench_distributed [REPEATS]
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Figures {
  double step_ms = 0;
  double peak_mb = 0;
};

// Runs argv, reads "step_ms X" from its stdout; the peak is the largest
// resident size among the process and its descendants. step_ms < 0: failed,
// or still running after two minutes (its process group is killed).
Figures run(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, 0};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // a group of its own, to kill whole
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  std::string out;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  for (;;) {
    struct pollfd p{fds[0], POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || poll(&p, 1, int(left.count())) <= 0) {
      if (rc == 0) kill(-pid, SIGKILL);
      break;
    }
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, size_t(n));
  }
  close(fds[0]);
  if (rc != 0) return {-1, 0};
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  Figures f;
  const size_t at = out.find("step_ms ");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || at == std::string::npos) return {-1, 0};
  f.step_ms = std::atof(out.c_str() + at + 8);
  f.peak_mb = double(usage.ru_maxrss) / 1024.0;  // KiB
  return f;
}

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool have_torch() { return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0; }

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 3;
  const bool torch = have_torch();
  const std::string nn = NN_BINARY, script = std::string(NN_BENCH_DIR) + "/models/dp_train.nn";
  const std::string twin = std::string(NN_BENCH_DIR) + "/torch_distributed.py";
  // key: "<who> <model> <procs>" -> per-repeat figures
  std::map<std::string, std::vector<double>> ms, mb;
  for (int r = 0; r < repeats; ++r)
    for (const char* model : {"mlp", "cnn"}) {
      const std::string steps = std::string(model) == "mlp" ? "200" : "30";
      for (int procs : {1, 2}) {
        for (const char* mode : {"eager", "graph"}) {
          std::vector<std::string> cmd{nn, "--threads", "1"};
          if (procs > 1) cmd.insert(cmd.end(), {"--nproc", std::to_string(procs)});
          cmd.insert(cmd.end(), {script, model, mode, steps});
          const Figures f = run(cmd);
          const std::string key = std::string("nn-") + mode + " " + model + " " + std::to_string(procs);
          ms[key].push_back(f.step_ms);
          mb[key].push_back(f.peak_mb);
        }
        if (!torch) continue;
        const Figures f = run({"/usr/bin/python3", twin, model, std::to_string(procs), steps});
        const std::string key = std::string("pytorch ") + model + " " + std::to_string(procs);
        ms[key].push_back(f.step_ms);
        mb[key].push_back(f.peak_mb);
      }
    }

  std::printf("data parallel, batch 64 a rank, 1 thread a rank, median of %d runs\n", repeats);
  std::printf("%-6s %-8s %9s %9s %9s %9s %6s %9s %9s\n", "model", "who", "1p ms", "2p ms", "1p /s", "2p /s", "eff",
              "1p MB", "2p MB");
  for (const char* model : {"mlp", "cnn"})
    for (const char* who : {"nn-eager", "nn-graph", "pytorch"}) {
      const std::string k1 = std::string(who) + " " + model + " 1", k2 = std::string(who) + " " + model + " 2";
      if (!ms.count(k1)) continue;
      const double t1 = median(ms[k1]), t2 = median(ms[k2]);
      if (t1 <= 0 || t2 <= 0) {
        std::printf("%-6s %-8s failed\n", model, who);
        continue;
      }
      std::printf("%-6s %-8s %9.2f %9.2f %9.0f %9.0f %6.2f %9.1f %9.1f\n", model, who, t1, t2, 64e3 / t1,
                  2 * 64e3 / t2, t1 / t2, median(mb[k1]), median(mb[k2]));
    }
  if (!torch) std::printf("(PyTorch not found: install Debian's python3-torch for the comparison)\n");
  return 0;
}
