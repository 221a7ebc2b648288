// The digits MLP (SGD with momentum) and CNN (Adam) as script preludes, and
// a graph training loop over them that ends with the list of its losses:
// the graph-mode tests and the GPU tests train the same models.
#pragma once
#include <string>

namespace nntest {

inline const char* const kDigitsMlp = R"(
seed(0)
let (x, y) = load_digits()
let model = Sequential(Linear(64, 128), relu, Linear(128, 10))
let opt = sgd(params(model), lr=0.1, momentum=0.9)
let images = x
)";

inline const char* const kDigitsCnn = R"(
seed(0)
let (x, y) = load_digits()
let images = reshape(x, [-1, 1, 8, 8])
let model = Sequential(
  Conv2d(1, 16, 3, padding=1), relu, MaxPool2d(2),
  Conv2d(16, 32, 3, padding=1), relu, MaxPool2d(2),
  Flatten(), Linear(128, 64), relu, Linear(64, 10))
let opt = adam(params(model), lr=0.005)
)";

// `steps` steps of a traced training step on batches of 64; the value of
// the script is the list of losses.
inline std::string digits_training(int steps) {
  return R"(
graph train_step(xb, yb) {
  let loss = softmax_cross_entropy(model(xb), yb)
  minimize(loss, opt)
  return loss
}
let losses = []
for i in 0..)" + std::to_string(steps) + R"( {
  let lo = (i * 64) % 1700
  losses.append(item(train_step(images[lo:lo + 64], y[lo:lo + 64])))
}
losses
)";
}

}  // namespace nntest
