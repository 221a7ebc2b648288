// The prelude's built-in functions (SPEC §7), grouped by family. Each family
// registers its functions with `def`, whose parameter list reads like nn:
// "shape, dtype=f32" or "*values".
#pragma once
#include <functional>
#include <string>

#include "frontend/function.h"

namespace nn::frontend {
class Interpreter;

namespace builtins {
// Declares a built-in; defaults are literals: ints, floats, none, true,
// false, dtype names, "strings". A leading `*name` takes any number of
// positional arguments (Args::rest()). Returns the entry, for its flags.
Builtin& def(Interpreter& vm, const std::string& name, const std::string& params, std::function<Value(Args&)> fn);

// An nn list of tensors (chunk's pieces, averaged gradients).
Value list_of(const std::vector<backend::Tensor>& ts);

// Host numbers made into a tensor of dtype d must fit it, as torch.tensor
// and torch.full insist: check_fits for integer dtypes (tensor()),
// check_fill_fits for a fill value of any dtype (full, pad). Argument i.
void check_fits(Args& a, size_t i, const backend::Tensor& values, backend::DType d);
void check_fill_fits(Args& a, size_t i, backend::DType d);

// A diagnostic where a graph is being traced: for a built-in that would act
// once, at trace time, and not on the graph's replays (seed, rng_state).
void refuse_in_graph(Args& a, const char* name);

void install_creation(Interpreter& vm);
void install_shape(Interpreter& vm);
void install_math(Interpreter& vm);
void install_sequence(Interpreter& vm);  // sequence.cpp: tril cumsum gather chunk ...
void install_host(Interpreter& vm);
void install_autodiff(Interpreter& vm);  // param grad value_and_grad detach no_grad
void install_neural(Interpreter& vm);  // neural.cpp: conv, pooling, norms, softmax, losses
void install_data(Interpreter& vm);   // data.cpp: load_digits split batches progress
void install_files(Interpreter& vm);
void install_training_state(Interpreter& vm);  // training_state.cpp: state load_state rng_state set_rng_state
void install_rates(Interpreter& vm);  // rates.cpp: _rate (an optimizer's lr, fed to graphs)
void install_precision(Interpreter& vm);  // precision.cpp: autocast
void install_text(Interpreter& vm);  // text.cpp: load_text chars encode decode
void install_distributed(Interpreter& vm);  // distributed.cpp: world all_reduce broadcast all_gather barrier
void install_onnx(Interpreter& vm);  // onnx.cpp: save_onnx load_onnx
void install_graphs(Interpreter& vm);  // graphs.cpp: ir graph_stats dot  // files.cpp: load_npy save_npy load_idx load_csv save load
}  // namespace builtins

}  // namespace nn::frontend
