// The interactive REPL driven through a real pseudo-terminal: nn runs on a
// pty with HOME set to a fresh temporary folder; the test types input and
// waits for output. Every wait has a deadline and the child is killed at the
// end, so a broken REPL fails the test rather than hanging it.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#ifndef NN_BINARY
#error "NN_BINARY (the path of the nn program) must be defined"
#endif

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class TempHome {
 public:
  TempHome() {
    char tmpl[] = "/tmp/nn-repl-test-XXXXXX";
    char* d = mkdtemp(tmpl);
    REQUIRE(d != nullptr);
    path_ = d;
  }
  ~TempHome() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// nn on a pseudo-terminal.
class PtySession {
 public:
  explicit PtySession(const std::string& home) {
    struct winsize ws {};
    ws.ws_row = 40;
    ws.ws_col = 200;
    pid_ = forkpty(&fd_, nullptr, nullptr, &ws);
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      setenv("HOME", home.c_str(), 1);
      setenv("TERM", "dumb", 1);
      unsetenv("NN_PATH");
      execl(NN_BINARY, NN_BINARY, "--threads", "1", static_cast<char*>(nullptr));
      _exit(127);
    }
    fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  }
  ~PtySession() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }

  void write(const std::string& text) {
    size_t done = 0;
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (done < text.size() && std::chrono::steady_clock::now() < deadline) {
      ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n > 0) done += size_t(n);
      else std::this_thread::sleep_for(5ms);
    }
    REQUIRE(done == text.size());
  }

  // Types a line, one key at a time would be slow: the whole line at once.
  void line(const std::string& text) { write(text + "\r"); }

  // Waits until `needle` appears in the output after the last match; true
  // when it did before the deadline. Moves past the match.
  bool expect(const std::string& needle, std::chrono::milliseconds timeout = 10s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      size_t at = out_.find(needle, seen_);
      if (at != std::string::npos) {
        seen_ = at + needle.size();
        return true;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      if (!read_some(left)) {
        // The child is gone and nothing more will come.
        if (out_.find(needle, seen_) == std::string::npos) return false;
      }
    }
  }

  // Everything the session printed so far (for failure messages).
  const std::string& output() const { return out_; }
  std::string unseen() const { return out_.substr(seen_); }

  // Leaves with Ctrl-D. A lone ^D typed in the instant before libedit puts
  // the terminal in raw mode is swallowed by the line discipline (a person
  // never types that fast after a prompt), so it is typed again if needed.
  int ctrl_d_exit() {
    for (int attempt = 0; attempt < 3; ++attempt) {
      write("\x15\x04");  // ^U empties the line: ^D leaves only from an empty one
      int code = wait_exit(3s);
      if (code != -1) return code;
    }
    return -1;
  }

  // Waits for the child to end; its exit code, or -1 after the deadline.
  int wait_exit(std::chrono::milliseconds timeout = 10s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      read_some(20ms);
      int status = 0;
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
    return -1;
  }

 private:
  // Reads what is there within `timeout`; false when the pty is closed.
  bool read_some(std::chrono::milliseconds timeout) {
    struct pollfd p {fd_, POLLIN, 0};
    int r = poll(&p, 1, int(std::max<int64_t>(1, timeout.count())));
    if (r <= 0) return true;
    char buf[4096];
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n > 0) {
      out_.append(buf, size_t(n));
      return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    // EIO: the child closed its side.
    std::this_thread::sleep_for(10ms);
    return false;
  }

  int fd_ = -1;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string out_;
  size_t seen_ = 0;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("a multi-line function, then a call prints its result") {
  TempHome home;
  PtySession s(home.path());
  REQUIRE_MESSAGE(s.expect("nn> "), s.output());
  s.line("fn add_one(x) {");
  REQUIRE_MESSAGE(s.expect("... "), s.output());
  s.line("  x + 1");
  REQUIRE_MESSAGE(s.expect("... "), s.output());
  s.line("}");
  REQUIRE_MESSAGE(s.expect("nn> "), s.output());
  s.line("add_one(41)");
  CHECK_MESSAGE(s.expect("42\r\n"), s.output());
  REQUIRE_MESSAGE(s.expect("nn> "), s.output());
  CHECK(s.ctrl_d_exit() == 0);  // Ctrl-D leaves
}

TEST_CASE("an error prints its diagnostic and the session goes on") {
  TempHome home;
  PtySession s(home.path());
  REQUIRE(s.expect("nn> "));
  s.line("let base = 10");
  REQUIRE(s.expect("nn> "));
  s.line("base + no_such_name");
  CHECK_MESSAGE(s.expect("error:"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line("base * 3");
  CHECK_MESSAGE(s.expect("30\r\n"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line("let t = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]");
  REQUIRE(s.expect("nn> "));
  s.line(":type t");
  CHECK_MESSAGE(s.expect("[2, 3]"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":graphs");
  CHECK_MESSAGE(s.expect("no graphs compiled yet"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":quit");
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("a syntax error inside an open bracket is reported when its line is entered") {
  TempHome home;
  PtySession s(home.path());
  REQUIRE(s.expect("nn> "));
  // Each line is wrong before its end: no `... ` prompt, the error at once,
  // the diagnostic of the mistake rather than of the bracket left open.
  const std::pair<const char*, const char*> cases[] = {
      {"let a = [1 2", "error: expected `,` or `]` after `1`, found `2`"},
      {"(1 2", "error: expected `,` or `)` after `1`, found `2`"},
      {"f(1 2", "error: expected `,` or `)` after `1`, found `2`"},
      {"{x: 1 y: 2", "error: "},
  };
  for (const auto& [line, error] : cases) {
    size_t from = s.output().size();
    s.line(line);
    CHECK_MESSAGE(s.expect(error, 5s), s.output());
    CHECK_MESSAGE(s.expect("nn> "), s.output());
    std::string shown = s.output().substr(from);
    CHECK_MESSAGE(shown.find("... ") == std::string::npos, shown);
    CHECK_MESSAGE(shown.find("to close the") == std::string::npos, shown);
  }
  // An entry only unfinished still continues, and then runs.
  s.line("let b = [1,");
  REQUIRE_MESSAGE(s.expect("... "), s.output());
  s.line("  2]");
  REQUIRE_MESSAGE(s.expect("nn> "), s.output());
  // A wrong line inside a block ends the entry there too.
  s.line("fn g(x) {");
  REQUIRE_MESSAGE(s.expect("... "), s.output());
  size_t from = s.output().size();
  s.line("  let y x");
  CHECK_MESSAGE(s.expect("error: expected `=` after the name in `let`", 5s), s.output());
  CHECK_MESSAGE(s.expect("nn> "), s.output());
  CHECK(s.output().substr(from).find("... ") == std::string::npos);
  s.line("b");
  CHECK_MESSAGE(s.expect("[1, 2]"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":quit");
  CHECK(s.wait_exit() == 0);
}

TEST_CASE(":time prints the value and its time, and no time for code that failed") {
  TempHome home;
  PtySession s(home.path());
  REQUIRE(s.expect("nn> "));
  s.line(":time 1 + 2");
  CHECK_MESSAGE(s.expect("3\r\ntime: "), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":time 1 + none");
  CHECK_MESSAGE(s.expect("error: "), s.output());
  REQUIRE(s.expect("nn> "));
  const std::string out = s.output();
  CHECK_MESSAGE(out.find("time: ", out.rfind("error: ")) == std::string::npos, out);
  s.line(":quit");
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("a graph whose trace failed: :dot and dot() say so, not that it was never called") {
  TempHome home;
  PtySession s(home.path());
  REQUIRE(s.expect("nn> "));
  s.line("graph bad(x) { if sum(x) > 0 { x } else { -x } }");
  REQUIRE(s.expect("nn> "));
  s.line("bad(ones([2]))");
  CHECK_MESSAGE(s.expect("error: "), s.output());
  REQUIRE(s.expect("nn> "));
  s.line("bad(ones([2]))");  // tried again: two traces of one signature
  REQUIRE(s.expect("nn> "));
  s.line(":graphs");
  CHECK_MESSAGE(s.expect("bad: traced 2 times, 0 signatures kept; none compiled (the trace failed)"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":dot bad");
  CHECK_MESSAGE(s.expect("graph bad has no compiled signature: its trace failed"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line("dot(bad, \"bad.svg\")");
  CHECK_MESSAGE(s.expect("graph bad has no compiled signature: its trace failed"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":quit");
  CHECK(s.wait_exit() == 0);
}

TEST_CASE(":graphs, :ir and :dot show the compiled graphs") {
  TempHome home;
  PtySession s(home.path());
  REQUIRE(s.expect("nn> "));
  s.line(":ir train");
  CHECK_MESSAGE(s.expect("no graph named `train` has been compiled"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line("graph train(x) { return relu(x) * 2.0 }");
  REQUIRE(s.expect("nn> "));
  s.line(":dot train");
  CHECK_MESSAGE(s.expect("graph train has not been compiled yet"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line("let y = train(ones([2, 3]))");
  REQUIRE(s.expect("nn> "));
  s.line(":graphs");
  // relu and * 2.0 are one fused node.
  CHECK_MESSAGE(s.expect("train: traced 1 time, 1 signature kept; latest: 1 node, 1 run\r\n"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":ir train");
  CHECK_MESSAGE(s.expect("graph train("), s.output());
  CHECK_MESSAGE(s.expect("relu"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":ir trian");
  CHECK_MESSAGE(s.expect("(did you mean `train`?)"), s.output());
  REQUIRE(s.expect("nn> "));
  const std::string svg = home.path() + "/train.svg";
  s.line(":dot train " + svg);
  CHECK_MESSAGE(s.expect("wrote " + svg), s.output());
  REQUIRE(s.expect("nn> "));
  CHECK(read_text(svg).find("<svg") != std::string::npos);
  s.line(":dot train " + home.path() + "/train.jpg");
  CHECK_MESSAGE(s.expect("the picture's extension must be"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line("y");  // the session goes on
  CHECK_MESSAGE(s.expect("2.0"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":quit");
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("Ctrl-C stops a running loop and keeps the session") {
  TempHome home;
  PtySession s(home.path());
  REQUIRE(s.expect("nn> "));
  s.line("let keep = 5");
  REQUIRE(s.expect("nn> "));
  s.line("while true { }");
  // Ctrl-C reaches the loop as SIGINT once the line runs; on a loaded
  // machine the first may come before that, so it is pressed until it stops.
  bool interrupted = false;
  for (int attempt = 0; attempt < 5 && !interrupted; ++attempt) {
    std::this_thread::sleep_for(300ms);
    s.write("\x03");
    interrupted = s.expect("interrupted", 3s);
  }
  CHECK_MESSAGE(interrupted, s.output());
  REQUIRE_MESSAGE(s.expect("nn> "), s.output());
  s.line("keep + 1");
  CHECK_MESSAGE(s.expect("6\r\n"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":quit");
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("Ctrl-C during matrix products keeps the session (SIGINT is taken on a thread of its own)") {
  // The handler once ran on the thread inside oneDNN's JIT gemm, whose
  // frame overwrote what the kernel kept below its stack pointer: the REPL
  // died of heap corruption in most such runs.
  TempHome home;
  PtySession s(home.path());
  REQUIRE(s.expect("nn> "));
  s.line("let xs = randn([300, 300])");
  REQUIRE(s.expect("nn> "));
  s.line("graph g(x) { return tanh(x @ x) }");
  REQUIRE(s.expect("nn> "));
  for (int round = 0; round < 3; ++round) {
    s.line("for i in 0..1000000 { g(xs) }");
    bool interrupted = false;
    for (int attempt = 0; attempt < 5 && !interrupted; ++attempt) {
      std::this_thread::sleep_for(500ms);
      s.write("\x03");
      interrupted = s.expect("interrupted", 3s);
    }
    CHECK_MESSAGE(interrupted, s.output());
    REQUIRE_MESSAGE(s.expect("nn> "), s.output());
  }
  s.line("1 + 1");
  CHECK_MESSAGE(s.expect("2\r\n"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":quit");
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("Tab completes session names and record fields") {
  TempHome home;
  PtySession s(home.path());
  REQUIRE(s.expect("nn> "));
  s.line("let my_long_variable = 1234");
  REQUIRE(s.expect("nn> "));
  s.write("my_long_va\t");
  s.line("");
  CHECK_MESSAGE(s.expect("1234\r\n"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line("let point = {xcoord: 3, ycoord: 4}");
  REQUIRE(s.expect("nn> "));
  s.write("point.yc\t");
  s.line("");
  CHECK_MESSAGE(s.expect("4\r\n"), s.output());
  REQUIRE(s.expect("nn> "));
  s.line(":quit");
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("history is written to ~/.nn_history, a multi-line entry whole") {
  TempHome home;
  {
    PtySession s(home.path());
    REQUIRE(s.expect("nn> "));
    s.line("let first_entry = 1");
    REQUIRE(s.expect("nn> "));
    s.line("fn twice(x) {");
    REQUIRE(s.expect("... "));
    s.line("  x * 2");
    REQUIRE(s.expect("... "));
    s.line("}");
    REQUIRE(s.expect("nn> "));
    s.line(":quit");
    CHECK(s.wait_exit() == 0);
  }
  std::string text = read_text(home.path() + "/.nn_history");
  CHECK_MESSAGE(text.find("let first_entry = 1\n") != std::string::npos, text);
  CHECK_MESSAGE(text.find("fn twice(x) {\\n  x * 2\\n}\n") != std::string::npos, text);
  CHECK_MESSAGE(text.find(":quit\n") != std::string::npos, text);

  // A new session recalls the multi-line entry whole (Ctrl-P twice: it came before :quit).
  PtySession s(home.path());
  REQUIRE(s.expect("nn> "));
  s.write("\x10\x10\r");  // Ctrl-P, Ctrl-P, Enter
  REQUIRE_MESSAGE(s.expect("nn> "), s.output());
  s.line("twice(21)");
  CHECK_MESSAGE(s.expect("42\r\n"), s.output());
  s.line(":quit");
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("characters past ASCII typed at the terminal reach the script, in the C locale too") {
  // libedit in the C locale dropped them: print("héllo") printed "hllo".
  const char* saved = std::getenv("LC_ALL");
  const std::string keep = saved ? saved : "";
  setenv("LC_ALL", "C", 1);
  TempHome home;
  PtySession s(home.path());
  if (saved) setenv("LC_ALL", keep.c_str(), 1);
  else unsetenv("LC_ALL");
  REQUIRE_MESSAGE(s.expect("nn> "), s.output());
  s.line("print(\"h\xc3\xa9llo \xe6\x97\xa5\")");
  CHECK_MESSAGE(s.expect("h\xc3\xa9llo \xe6\x97\xa5\r\n"), s.output());
  REQUIRE_MESSAGE(s.expect("nn> "), s.output());
  CHECK(s.ctrl_d_exit() == 0);
}
