// An nn embedding host: loads model.nn, feeds it a tensor over host memory,
// calls a script function, reads the result, defines a host function the
// script calls and shows an error caught as nn::Error.
//   host [model.nn [expression]]
#include <nn/nn.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::string model = argc > 1 ? argv[1] : "model.nn";
  try {
    nn::Options opts;
    opts.threads = 1;
    nn::Interpreter vm(opts);
    vm.define("host_scale", [](nn::Args a) -> nn::Value {
      a.expect(1);
      return a.number(0) * 1.5;  // a float back to the script
    });
    vm.run_file(model);

    // Two rows of two features, owned by the host: no copy is made.
    std::vector<float> input = {1.0f, 2.0f, 3.0f, 4.0f};
    nn::Tensor x = nn::Tensor::from_blob(input.data(), {2, 2}, nn::f32);
    vm.set("x", x);

    nn::Value y = vm.eval("predict(x)");
    nn::Tensor scores = y.tensor();
    std::cout << "predict: " << scores.type() << "\n";
    const float* out = scores.data<float>();
    for (int64_t i = 0; i < scores.numel(); ++i) std::cout << (i ? " " : "") << out[i];
    std::cout << "\n";

    nn::Value z = vm.call("scaled", x);
    std::cout << "scaled[0][0]: " << z.tensor().data<float>()[0] << "\n";

    // A shape error in the script reaches the host as nn::Error; the
    // interpreter keeps working afterwards.
    std::vector<float> wrong(6, 1.0f);
    try {
      vm.call("predict", nn::Tensor::from_blob(wrong.data(), {2, 3}, nn::f32));
    } catch (const nn::Error& e) {
      std::cout << "caught: " << e.message() << "\n";
      std::cerr << e.what();
    }
    std::cout << "still running: " << vm.eval("1 + 2").as_int() << "\n";

    // Optionally, evaluate an expression given on the command line.
    if (argc > 2) std::cout << vm.eval(argv[2]).str() << "\n";
  } catch (const nn::Error& e) {
    std::cerr << e.what();
    return 1;
  }
  return 0;
}
