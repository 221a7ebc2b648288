#!/usr/bin/env bash
# Packs what a GPU machine without nn's Debian packages needs to run the
# GPU checks: nn installed and stripped (with its CUDA plugin), tests/gpu's
# test_gpu, bench_gpu, the two-rank GPU test, and the shared libraries they
# load that are neither glibc's nor CUDA's (OpenBLAS and oneDNN, opened on
# first use, included). The machine brings its own CUDA, cuDNN, NCCL and
# Open MPI. Writes build-gpu-bundle/gpu-bundle.tar.xz (git-ignored, under
# 64 MiB); there: tar xf gpu-bundle.tar.xz && bundle/run.sh [bench].
# Usage: tools/gpu_bundle.sh [BUILD_DIR]   (a build with the CUDA backend)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=$root/build-gpu-bundle
b=$out/bundle
[ -f "$build/libnn_cuda.so" ] || { echo "gpu_bundle: $build has no CUDA plugin (configure with -DNN_CUDA=ON)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$b/deps" "$b/tests/ranks"
cmake --install "$build" --prefix "$b" --strip >/dev/null
cp "$build/tests/test_gpu" "$build/bench/bench_gpu" "$b/bin/"
strip "$b/bin/test_gpu" "$b/bin/bench_gpu"
cp "$root/tests/gpu/two_ranks.sh" "$b/tests/"
cp "$root"/tests/ranks/{collectives,data_parallel}.{nn,out} "$b/tests/ranks/"
cp -r "$root/bench/models" "$root/bench/torch_gpu.py" "$b/"

# The libraries to carry: those the binaries link and those nn opens by
# soname, with theirs; not glibc's (the machine's must be as new as this
# one's), not CUDA's (the machine's own, found through the plugin's RUNPATH).
skip="/(libc|libm|libdl|librt|libpthread|libresolv|ld-linux[^/]*)\\.so|/usr/local/cuda|libcuda\\.so|libnccl|libcudnn|libcublas|libcudart|libnvrtc|libmpi|libopen-|^$build/"
opened=()
for soname in libopenblas.so.0 libdnnl.so.3 libdnnl.so.2; do
  path=$(/sbin/ldconfig -p | awk -v s="$soname" '$1 == s && !found {print $NF; found = 1}')
  if [ -n "$path" ]; then opened+=("$path"); fi
done
libs=$( { for f in "$b"/bin/* "$b"/lib/*.so* "${opened[@]}"; do ldd "$f" 2>/dev/null; done
          printf '%s\n' "${opened[@]}"; } |
        awk '/=> \// {print $3} /^\// {print $1}' | sort -u | grep -Ev "$skip" || true)
for l in $libs; do cp -L "$l" "$b/deps/"; done

cat > "$b/run.sh" <<'RUN'
#!/usr/bin/env bash
# The GPU checks, from the unpacked bundle: the GPU tests, then the
# collectives on two ranks (through the machine's mpiexec); with `bench`,
# bench_gpu too.
set -u
here=$(cd "$(dirname "$0")" && pwd)
mpiexec=$(command -v mpiexec || true)
mpilib=${mpiexec:+$(dirname "$(dirname "$mpiexec")")/lib}
export LD_LIBRARY_PATH=$here/deps:$here/lib:${mpilib:+$mpilib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NN_MPIEXEC=$mpiexec OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi -L || true
"$here/bin/nn" --device cuda -e 'print(to(ones([2]), "cuda") * 2)'
"$here/bin/test_gpu"
rc=$?
if [ -n "$mpiexec" ]; then bash "$here/tests/two_ranks.sh" "$here/bin/nn" "$here/tests/ranks" || rc=1; fi
if [ "${1:-}" = bench ]; then NN_BENCH_DIR=$here "$here/bin/bench_gpu" || rc=1; fi
exit $rc
RUN
chmod +x "$b/run.sh"
tar cJf "$out/gpu-bundle.tar.xz" -C "$out" bundle
du -h "$out/gpu-bundle.tar.xz" | cut -f1 | sed 's/^/gpu_bundle: build-gpu-bundle\/gpu-bundle.tar.xz, /'
