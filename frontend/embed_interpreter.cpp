// The public nn::Interpreter (include/nn/nn.h) over the frontend's: running
// code, globals, calls and host functions, every failure an nn::Error.
#include <nn/nn.h>

#include <filesystem>

#include "backend/device.h"
#include "backend/ops.h"
#include "frontend/embed_internal.h"
#include "frontend/function.h"
#include "frontend/parser.h"
#include "frontend/stdlib_path.h"

namespace nn {

using namespace embed;

// ------------------------------------------------------------------ Interpreter

struct Interpreter::Impl {
  Options opts;
  std::unique_ptr<fe::Interpreter> vm;
  int depth = 0;  // host calls running: a host function may call back in
  // One call from the host: the outermost starts the time limit and drops a
  // stale interrupt request.
  struct Run {
    Impl& im;
    explicit Run(Impl& i) : im(i) {
      if (im.depth++ == 0) im.vm->begin_host_run(im.opts.time_limit);
    }
    ~Run() {
      if (--im.depth == 0) im.vm->end_host_run();
    }
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;
  };
};


namespace {
// set / define take only names a script can write (SPEC §2): any other
// would be a global or host function no script could reach.
void check_name(const char* member, const std::string& name) {
  if (fe::is_identifier(name)) return;
  std::string why = name.empty()           ? "the name is empty"
                    : fe::is_keyword(name) ? "`" + name + "` is a keyword"
                                           : "`" + name + "` is not a name";
  throw_plain(std::string(member) + "(`" + name + "`): " + why +
              ", which no script could use (a name is a letter or `_`, then letters, digits and `_`, and not a "
              "keyword)");
}
}  // namespace

// The interpreter of a live nn::Interpreter; a moved-from one is refused.
Interpreter::Impl& Interpreter::live() const {
  if (!impl_ || !impl_->vm) throw_plain("this nn::Interpreter was moved from: use the one it was moved to");
  return *impl_;
}

Interpreter::Interpreter(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(options);
  const Options& o = impl_->opts;
  if (!o.device.empty() && !be::find_device(o.device))
    throw_plain("device `" + o.device + "` is not available: " + be::device_unavailable_reason(o.device));
  if (o.threads < 0) throw_plain("Options::threads cannot be negative");
  if (!(o.time_limit >= 0)) throw_plain("Options::time_limit cannot be negative");
  // Without the stdlib a host would meet only `unknown name Linear` later.
  std::error_code ec;
  const std::string stdlib = fe::stdlib_dir();
  if (!std::filesystem::is_regular_file(std::filesystem::path(stdlib) / "prelude.nn", ec))
    throw_plain("the nn stdlib was not found: `" + stdlib +
                "/prelude.nn` is missing (install nn, or set NN_STDLIB to its share/nn/stdlib folder)");
  fe::InterpreterOptions fo;
  fo.threads = o.threads;
  fo.device = o.device.empty() ? "cpu" : o.device;
  fo.seed = o.seed;
  fo.precision = o.precision;
  fo.search_paths = o.search_paths;
  fo.allow_files = o.allow_files;
  fo.max_memory_bytes = o.max_memory_bytes;
  fo.args = o.args;
  fo.out = o.out;
  fo.log = o.out;  // notes where the host reads print()
  impl_->vm = guarded(nullptr, [&] { return std::make_unique<fe::Interpreter>(std::move(fo)); });
}

Interpreter::~Interpreter() = default;
Interpreter::Interpreter(Interpreter&&) noexcept = default;
Interpreter& Interpreter::operator=(Interpreter&&) noexcept = default;

const Options& Interpreter::options() const { return live().opts; }

void Interpreter::interrupt() noexcept {
  if (impl_ && impl_->vm) impl_->vm->interrupt();
}

Value Interpreter::run_file(const std::string& path) {
  Impl& im = live();
  Impl::Run run(im);
  return guarded(im.vm.get(), [&] { return wrap(im.vm->run_file(path)); });
}

Value Interpreter::eval(const std::string& code) {
  Impl& im = live();
  Impl::Run run(im);
  return guarded(im.vm.get(), [&] { return wrap(im.vm->run_code("<eval>", code)); });
}

void Interpreter::set(const std::string& name, Value v) {
  Impl& im = live();
  check_name("set", name);
  im.vm->set_global(name, to_internal(v));
}

bool Interpreter::has(const std::string& name) const { return live().vm->find_global(name) != nullptr; }

Value Interpreter::get(const std::string& name) const {
  fe::Value* v = live().vm->find_global(name);
  if (!v) throw_plain("no global named `" + name + "`");
  return wrap(*v);
}

Value Interpreter::call(const std::string& name, std::vector<Value> args) {
  Value f = get(name);
  if (!f.is_function() && !f.is_record()) throw_plain("`" + name + "` is " + f.kind_name() + ", not a function");
  return call(f, std::move(args));
}

Value Interpreter::call(const Value& fn, std::vector<Value> args) {
  if (!fn.is_function() && !fn.is_record()) throw_plain("cannot call " + fn.kind_name() + ": it is not a function");
  Impl& im = live();
  Impl::Run run(im);
  std::vector<fe::Value> positional;
  for (auto& a : args) positional.push_back(to_internal(a));
  return guarded(im.vm.get(), [&] { return wrap(im.vm->call(to_internal(fn), std::move(positional))); });
}

void Interpreter::define(const std::string& name, HostFunction fn) {
  Impl& im = live();
  check_name("define", name);
  if (!fn) throw_plain("define(`" + name + "`): an empty function");
  auto b = std::make_shared<fe::Builtin>();
  b->name = name;
  b->variadic = true;
  b->fn = [name, fn = std::move(fn)](fe::Args& a) -> fe::Value {
    std::vector<Value> values;
    for (auto& v : a.rest()) values.push_back(wrap(v));
    auto call = std::make_shared<const void*>(&a);
    struct Returned {  // however the function ends
      std::shared_ptr<const void*>& call;
      ~Returned() { *call = nullptr; }
    } returned{call};
    try {
      return to_internal(fn(Args(name, std::move(values), call)));
    } catch (const fe::ScriptError&) {
      throw;  // a diagnostic already (Args accessors, nested calls)
    } catch (const fe::ExitRequest&) {
      throw;
    } catch (const Error& e) {
      // exit() in a nested eval or call: the whole run ends, as exit does.
      if (e.exit_code()) throw fe::ExitRequest{*e.exit_code()};
      // Once, however deep host functions call one another through the script.
      const std::string message = e.message();
      fe::fail(a.call_span(), message.starts_with(name + ": ") ? message : name + ": " + message);
    } catch (const std::exception& e) {
      fe::fail(a.call_span(), "host function `" + name + "` failed: " + e.what());
    } catch (...) {
      fe::fail(a.call_span(), "host function `" + name + "` failed with an unknown exception");
    }
  };
  im.vm->define_host_function(std::move(b));
}

}  // namespace nn
