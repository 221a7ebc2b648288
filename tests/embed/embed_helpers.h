// Helpers of the embedding tests: the nn::Error a call throws, substring
// checks, quiet options.
#pragma once
#include <doctest/doctest.h>
#include <nn/nn.h>

#include <functional>
#include <sstream>
#include <string>

namespace nntest {

// The nn::Error f throws (failing the test when it throws none or another).
inline nn::Error embed_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const nn::Error& e) {
    return e;
  } catch (const std::exception& e) {
    FAIL("a non-nn::Error exception escaped: " << e.what());
  }
  FAIL("no nn::Error was thrown");
  return nn::Error("", "");
}

inline bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// One thread, print() into `out`.
inline nn::Options quiet_options(std::ostringstream& out) {
  nn::Options o;
  o.threads = 1;
  o.out = &out;
  return o;
}

}  // namespace nntest
