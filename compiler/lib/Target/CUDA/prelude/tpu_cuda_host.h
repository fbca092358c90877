// Host side of every CUDA file tpuc writes (docs/gpu.md): the command line,
// ONNX TensorProto input and output files, the output check tpusim uses
// (docs/numerics.md), kernel timing and the report. Plain C++17 plus the CUDA
// runtime API, which the emulation (runtime/cuda-emu) also provides.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpu_host {

// The standalone program stops; the runtime's library (TPU_CUDA_LIBRARY)
// hands the message to its caller.
[[noreturn]] inline void fail(const std::string &message) {
#ifdef TPU_CUDA_LIBRARY
  throw std::runtime_error(message);
#else
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::exit(1);
#endif
}

inline void checkCuda(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    fail(std::string(what) + ": " + cudaGetErrorString(status));
}

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

inline std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// The protobuf wire format, as much of it as an ONNX TensorProto needs.
class WireReader {
public:
  WireReader(const std::string &bytes, const std::string &path) : data(bytes), where(path) {}
  bool done() const { return position >= data.size(); }
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (done())
        fail(where + ": truncated TensorProto");
      uint8_t byte = uint8_t(data[position++]);
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return value;
    }
    fail(where + ": malformed varint in TensorProto");
  }
  std::string bytes(uint64_t length) {
    if (length > data.size() - position)
      fail(where + ": truncated TensorProto");
    std::string text = data.substr(position, length);
    position += length;
    return text;
  }
  void skip(uint32_t wireType) {
    switch (wireType) {
    case 0:
      varint();
      return;
    case 1:
      bytes(8);
      return;
    case 2:
      bytes(varint());
      return;
    case 5:
      bytes(4);
      return;
    default:
      fail(where + ": unsupported protobuf wire type " + std::to_string(wireType));
    }
  }

private:
  const std::string &data;
  std::string where;
  size_t position = 0;
};

inline HostTensor readTensor(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    fail(path + ": cannot open");
  std::stringstream buffer;
  buffer << file.rdbuf();
  std::string data = buffer.str();
  WireReader reader(data, path);
  HostTensor tensor;
  uint64_t dataType = 0;
  std::string raw;
  std::vector<float> floats;
  while (!reader.done()) {
    uint64_t key = reader.varint();
    uint32_t field = uint32_t(key >> 3), wire = uint32_t(key & 7);
    if (field == 1 && wire == 0) {
      tensor.shape.push_back(int64_t(reader.varint()));
    } else if (field == 1 && wire == 2) { // packed dims
      std::string packed = reader.bytes(reader.varint());
      WireReader dims(packed, path);
      while (!dims.done())
        tensor.shape.push_back(int64_t(dims.varint()));
    } else if (field == 2 && wire == 0) {
      dataType = reader.varint();
    } else if (field == 4 && wire == 5) {
      std::string word = reader.bytes(4);
      float value;
      std::memcpy(&value, word.data(), 4);
      floats.push_back(value);
    } else if (field == 4 && wire == 2) { // packed float_data
      std::string packed = reader.bytes(reader.varint());
      for (size_t at = 0; at + 4 <= packed.size(); at += 4) {
        float value;
        std::memcpy(&value, packed.data() + at, 4);
        floats.push_back(value);
      }
    } else if (field == 9 && wire == 2) {
      raw = reader.bytes(reader.varint());
    } else if (field == 14) {
      fail(path + ": external data is not supported");
    } else {
      reader.skip(wire);
    }
  }
  if (dataType != 1) // TensorProto.FLOAT
    fail(path + ": data type " + std::to_string(dataType) + "; the CUDA target reads FLOAT only");
  if (!raw.empty()) {
    floats.resize(raw.size() / 4);
    std::memcpy(floats.data(), raw.data(), floats.size() * 4);
  }
  uint64_t elements = 1;
  for (int64_t dim : tensor.shape)
    elements *= uint64_t(dim);
  if (floats.size() != elements)
    fail(path + ": " + std::to_string(floats.size()) + " values for shape " +
         formatShape(tensor.shape));
  tensor.values = std::move(floats);
  return tensor;
}

inline void writeTensor(const std::string &path, const HostTensor &tensor) {
  std::string out;
  auto varint = [&](uint64_t value) {
    do {
      uint8_t byte = value & 0x7f;
      value >>= 7;
      out.push_back(char(byte | (value ? 0x80 : 0)));
    } while (value);
  };
  for (int64_t dim : tensor.shape) {
    varint(1 << 3);
    varint(uint64_t(dim));
  }
  varint(2 << 3);
  varint(1);
  varint((9 << 3) | 2);
  varint(tensor.values.size() * 4);
  out.append(reinterpret_cast<const char *>(tensor.values.data()), tensor.values.size() * 4);
  std::ofstream file(path, std::ios::binary);
  if (!(file << out))
    fail(path + ": cannot write");
}

// The weights travel inside the source as base64 text: one file to build.
inline std::vector<uint8_t> decodeBase64(const char *text, size_t length) {
  auto sextet = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::vector<uint8_t> bytes;
  uint32_t bits = 0;
  int held = 0;
  for (const char *c = text; c < text + length; ++c) {
    int value = sextet(*c);
    if (value < 0)
      continue; // '=' padding
    bits = (bits << 6) | uint32_t(value);
    held += 6;
    if (held >= 8) {
      held -= 8;
      bytes.push_back(uint8_t(bits >> held));
    }
  }
  return bytes;
}

// The check of docs/numerics.md with the rounding tolerance of a bf16 matrix
// unit accumulating in fp32: max|got - expected| / max|expected| within
// 2^-8 sqrt(K) + K 2^-24, K the longest chain of accumulations.
struct Check {
  bool pass = true;
  double relative = 0, tolerance = 0;
};

inline Check checkOutput(const std::string &name, const HostTensor &got, const HostTensor &expected,
                         double reductionLength) {
  if (got.shape != expected.shape)
    fail(name + ": shape " + formatShape(got.shape) + " differs from the expected " +
         formatShape(expected.shape));
  double maxError = 0, scale = 0;
  size_t worst = 0;
  bool nan = false;
  for (size_t i = 0; i < got.values.size(); ++i) {
    double value = got.values[i], reference = expected.values[i];
    bool sameSpecial =
        (std::isnan(value) && std::isnan(reference)) || (std::isinf(value) && value == reference);
    double error = sameSpecial ? 0.0 : std::fabs(value - reference);
    if (std::isnan(error) || std::isinf(error)) {
      if (!nan)
        worst = i;
      nan = true;
    } else if (!nan && error > maxError) {
      maxError = error;
      worst = i;
    }
    if (std::isfinite(reference))
      scale = std::max(scale, std::fabs(reference));
  }
  scale = std::max(scale, 1.17549435e-38);
  double k = std::max(reductionLength, 1.0);
  Check check;
  check.tolerance = std::ldexp(1.0, -8) * std::sqrt(k) + k * std::ldexp(1.0, -24);
  check.relative = nan ? NAN : maxError / scale;
  check.pass = !nan && check.relative <= check.tolerance;
  std::printf("%s %s: %s\n", name.c_str(), formatShape(got.shape).c_str(),
              check.pass ? "PASS" : "FAIL");
  if (got.values.empty())
    return check;
  std::printf("  max|got - expected| = %.2e x max|expected| (= %.3e), allowed %.2e x; worst at "
              "flat index %zu: got %.9g, expected %.9g\n",
              check.relative, scale, check.tolerance, worst, double(got.values[worst]),
              double(expected.values[worst]));
  return check;
}

struct Options {
  std::string data, report, outputs;
};

inline Options parseOptions(int argc, char **argv, const char *usage) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    auto value = [&](std::string &into) {
      if (i + 1 >= argc)
        fail(argument + " needs a value");
      into = argv[++i];
    };
    if (argument == "--data")
      value(options.data);
    else if (argument == "--report")
      value(options.report);
    else if (argument == "--outputs")
      value(options.outputs);
    else if (argument == "--help" || argument == "-h") {
      std::printf("%s", usage);
      std::exit(0);
    } else
      fail("unknown argument '" + argument + "'; see --help");
  }
  if (options.data.empty())
    fail("--data DIR is required (DIR holds input_N.pb and output_N.pb)");
  return options;
}

inline bool fileExists(const std::string &path) { return bool(std::ifstream(path)); }

// Times each kernel with CUDA events, in launch order.
class KernelTimer {
public:
  explicit KernelTimer(size_t kernels) : events(2 * kernels) {
    for (cudaEvent_t &event : events)
      checkCuda(cudaEventCreate(&event), "cudaEventCreate");
  }
  ~KernelTimer() {
    for (cudaEvent_t &event : events)
      cudaEventDestroy(event);
  }
  void start(size_t kernel) { cudaEventRecord(events[2 * kernel]); }
  void stop(size_t kernel) { cudaEventRecord(events[2 * kernel + 1]); }
  float milliseconds(size_t kernel) {
    float ms = 0;
    checkCuda(cudaEventElapsedTime(&ms, events[2 * kernel], events[2 * kernel + 1]),
              "cudaEventElapsedTime");
    return ms;
  }

private:
  std::vector<cudaEvent_t> events;
};

struct KernelInfo {
  const char *name;
  const char *source_ops;
  const char *kind;
  uint64_t global_bytes;
};

inline std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

inline void writeReport(const std::string &path, const char *model, const char *gpu,
                        const char *fusion, const KernelInfo *kernels, const float *ms,
                        size_t count, bool allPass) {
  std::ofstream file(path);
  double total = 0;
  uint64_t bytes = 0;
  file << "{\n  \"target\": \"cuda\",\n  \"model\": " << jsonString(model)
       << ",\n  \"gpu\": " << jsonString(gpu) << ",\n  \"fusion\": " << jsonString(fusion)
       << ",\n  \"outputs_pass\": " << (allPass ? "true" : "false") << ",\n  \"kernels\": [\n";
  for (size_t i = 0; i < count; ++i) {
    total += ms[i];
    bytes += kernels[i].global_bytes;
    file << "    {\"name\": " << jsonString(kernels[i].name)
         << ", \"source_ops\": " << jsonString(kernels[i].source_ops)
         << ", \"kind\": " << jsonString(kernels[i].kind)
         << ", \"global_bytes\": " << kernels[i].global_bytes << ", \"ms\": " << ms[i] << "}"
         << (i + 1 < count ? ",\n" : "\n");
  }
  file << "  ],\n  \"total_ms\": " << total << ",\n  \"global_bytes\": " << bytes << "\n}\n";
  if (!file.flush())
    fail(path + ": cannot write the report");
}

} // namespace tpu_host
