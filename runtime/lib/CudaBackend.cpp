#include "tpu/runtime/CudaBackend.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tpu::runtime {
namespace {

namespace fs = std::filesystem;

std::string readText(const fs::path &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw Error(fmt::format("{}: cannot read", path.string()));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// A path as one shell word.
std::string shellWord(const std::string &text) {
  std::string word = "'";
  for (char c : text)
    word += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return word + "'";
}

// What `command` prints (stdout and stderr), or "" when it cannot run.
std::string outputOf(const std::string &command) {
  std::string output;
  if (FILE *pipe = popen((command + " 2>&1").c_str(), "r")) {
    char buffer[4096];
    size_t got;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
      output.append(buffer, got);
    pclose(pipe);
  }
  return output;
}

// FNV-1a, 64 bits: the same on every host, unlike std::hash.
uint64_t fnv1a(const std::string &text, uint64_t hash = 14695981039346656037ull) {
  for (unsigned char c : text)
    hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// The compiler's first line that reports an error, else its first line.
std::string firstError(const std::string &log) {
  std::istringstream lines(log);
  std::string line, first;
  while (std::getline(lines, line)) {
    if (first.empty())
      first = line;
    if (line.find("error") != std::string::npos)
      return line;
  }
  return first;
}

// How a bundle's source becomes a library: the compiler, its flags before
// the source (the output path follows), the libraries to link after it, and
// what else the result depends on besides the source and the compiler's
// version.
struct Toolchain {
  std::string compiler;
  std::string flags;
  std::string libraries;
  std::string dependencies;
};

Toolchain toolchainFor(CudaExecution execution, const CudaProgram &program) {
  if (execution == CudaExecution::Gpu) {
    // Machine code for the bundle's GPU and its PTX, which the driver compiles
    // for newer GPUs. Spelled out: nvcc 13's -arch=sm_90a builds compute_90
    // PTX as well, which has no wgmma.
    std::string number = program.gpu.substr(3);
    return {TPU_NVCC,
            fmt::format("-std=c++17 -O3 -gencode 'arch=compute_{0},code=[sm_{0},compute_{0}]' "
                        "-shared -Xcompiler -fPIC -DTPU_CUDA_LIBRARY",
                        number),
            "", ""};
  }
  // -O1, as scripts/cuda-emulate: fast enough, and big weight tables compile quickly.
  return {TPU_HOST_CXX,
          "-std=c++17 -O1 -x c++ -shared -fPIC -w -DTPU_CUDA_EMULATE -DTPU_CUDA_LIBRARY -I " +
              shellWord(TPU_CUDA_EMU_DIR),
          "-lboost_context", readText(fs::path(TPU_CUDA_EMU_DIR) / "tpu_cuda_emu.h")};
}

} // namespace

std::string defaultCudaCacheDirectory() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "tpu").string();
  if (const char *home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "tpu").string();
  throw Error("no cache directory for CUDA builds: set XDG_CACHE_HOME or HOME, or give one");
}

bool nvidiaGpuPresent() { return std::system("nvidia-smi -L >/dev/null 2>&1") == 0; }

CudaBackend::CudaBackend(CudaOptions options) : options_(std::move(options)) {
  if (options_.execution == CudaExecution::Gpu && !nvidiaGpuPresent())
    throw Error("no GPU found (nvidia-smi -L lists none); --cuda=emulate runs CUDA bundles on "
                "the CPU");
  if (options_.cache_directory.empty())
    options_.cache_directory = defaultCudaCacheDirectory();
}

CudaBackend::~CudaBackend() {
  if (handle_)
    dlclose(handle_);
}

std::string CudaBackend::name() const {
  return options_.execution == CudaExecution::Gpu ? "cuda" : "cuda-emulation";
}

const CudaBuild &CudaBackend::build() const {
  if (!build_)
    throw Error("the CUDA backend has not run yet");
  return *build_;
}

void CudaBackend::load(const Bundle &bundle) {
  const CudaProgram &program = *bundle.cuda;
  Toolchain toolchain = toolchainFor(options_.execution, program);
  std::string version = outputOf(shellWord(toolchain.compiler) + " --version");
  if (version.empty())
    throw Error(fmt::format("{}: cannot run the compiler", toolchain.compiler));
  uint64_t hash = fnv1a(program.source);
  for (const std::string &part :
       {toolchain.compiler, toolchain.flags, toolchain.libraries, version, toolchain.dependencies})
    hash = fnv1a(part + '\0', hash);
  std::string key = fmt::format("{}-{:016x}", name(), hash);
  if (handle_ && key == loadedKey_) {
    build_->cached = true;
    build_->seconds = 0;
    return;
  }

  fs::path directory = options_.cache_directory;
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    throw Error(fmt::format("{}: cannot create the CUDA build cache: {}", directory.string(),
                            error.message()));
  fs::path library = directory / (key + ".so");
  CudaBuild build{library.string(), fs::exists(library), 0};
  if (!build.cached) {
    // Written and built under names of this process's own, then renamed: a
    // concurrent run never reads half a source or opens half a library.
    fs::path source = directory / (key + ".cu"),
             log = directory / fmt::format("{}.{}.log", key, getpid());
    fs::path partialSource = directory / fmt::format("{}.cu.{}.tmp", key, getpid());
    std::ofstream(partialSource, std::ios::binary) << program.source;
    fs::rename(partialSource, source);
    fs::path partial = directory / fmt::format("{}.so.{}.tmp", key, getpid());
    std::string command =
        fmt::format("{} {} {} -o {} {} >{} 2>&1", shellWord(toolchain.compiler), toolchain.flags,
                    shellWord(source.string()), shellWord(partial.string()), toolchain.libraries,
                    shellWord(log.string()));
    auto start = std::chrono::steady_clock::now();
    int status = std::system(command.c_str());
    build.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (status != 0) {
      fs::remove(partial, error);
      throw Error(fmt::format("{} failed on the bundle's CUDA source ({}): {}", toolchain.compiler,
                              log.string(), firstError(readText(log))));
    }
    fs::rename(partial, library);
    fs::remove(log, error); // kept only when the build fails
  }
  if (handle_)
    dlclose(handle_);
  handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  run_ = handle_ ? reinterpret_cast<RunFunction>(dlsym(handle_, "tpu_cuda_run")) : nullptr;
  if (!run_) {
    std::string problem = dlerror();
    if (handle_)
      dlclose(handle_);
    handle_ = nullptr;
    throw Error(fmt::format("{}: cannot load the CUDA library: {}", library.string(), problem));
  }
  loadedKey_ = key;
  build_ = build;
}

RunReport CudaBackend::run(const Bundle &bundle, std::vector<uint8_t> &dram) {
  if (!bundle.cuda)
    throw Error("the CUDA backend runs CUDA bundles (tpuc --target=cuda -o OUT.tpub) only");
  if (dram.size() != bundle.dram_bytes)
    throw Error(
        fmt::format("the host image is {} bytes, the bundle's {}", dram.size(), bundle.dram_bytes));
  load(bundle);

  // Float buffers of their own: the image's addresses need not be aligned.
  auto floatsAt = [&](const TensorInfo &tensor) {
    std::vector<float> values(tensor.elements());
    std::memcpy(values.data(), dram.data() + tensor.dram_address, tensor.bytes());
    return values;
  };
  std::vector<std::vector<float>> inputs, outputs;
  std::vector<const float *> inputPointers;
  std::vector<float *> outputPointers;
  for (const TensorInfo &input : bundle.inputs)
    inputPointers.push_back(inputs.emplace_back(floatsAt(input)).data());
  for (const TensorInfo &output : bundle.outputs)
    outputPointers.push_back(outputs.emplace_back(output.elements()).data());
  const std::vector<CudaKernel> &kernels = bundle.cuda->kernels;
  std::vector<float> ms(kernels.size());
  char message[1024] = "";
  auto start = std::chrono::steady_clock::now();
  int status = run_(inputPointers.data(), inputPointers.size(), outputPointers.data(),
                    outputPointers.size(), ms.data(), ms.size(), message, sizeof message);
  double hostSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (status != 0)
    throw Error(fmt::format("CUDA run failed: {}", message));
  for (size_t index = 0; index < bundle.outputs.size(); ++index)
    std::memcpy(dram.data() + bundle.outputs[index].dram_address, outputs[index].data(),
                bundle.outputs[index].bytes());

  bool gpu = options_.execution == CudaExecution::Gpu;
  const char *msKey = gpu ? "ms" : "host_ms";
  RunReport report;
  report.host_seconds = hostSeconds;
  report.summary =
      fmt::format("{:<32} {:>12} {:>14}\n", "kernel", gpu ? "ms" : "host ms", "global bytes");
  nlohmann::json kernelJson = nlohmann::json::array();
  double total = 0;
  for (size_t index = 0; index < kernels.size(); ++index) {
    total += ms[index];
    report.summary += fmt::format("{:<32} {:>12.4f} {:>14}\n", kernels[index].name, ms[index],
                                  kernels[index].global_bytes);
    kernelJson.push_back({{"name", kernels[index].name},
                          {"source_ops", kernels[index].source_ops},
                          {"kind", kernels[index].kind},
                          {"global_bytes", kernels[index].global_bytes},
                          {msKey, ms[index]}});
  }
  report.summary += fmt::format("{:<32} {:>12.4f}\n", "total", total);
  if (gpu)
    report.device_seconds = total / 1e3;
  else
    report.summary += "emulation: host wall-clock times of the CPU emulation, not GPU times\n";
  report.json = {
      {"target", "cuda"},
      {"gpu", bundle.cuda->gpu},
      {"fusion", bundle.cuda->fusion},
      {"execution", gpu ? "gpu" : "emulation"},
      {"kernels", kernelJson},
      {gpu ? "total_ms" : "total_host_ms", total},
      {"build",
       {{"library", build_->library}, {"cached", build_->cached}, {"seconds", build_->seconds}}}};
  return report;
}

} // namespace tpu::runtime
