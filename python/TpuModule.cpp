// The Python module `tpu` (docs/python.md): compile a model for a config,
// run a bundle on the simulator with numpy arrays, get tpusim's report as a
// dict. Every failure is a tpu.Error carrying the tools' one-line message.
#include "tpu/Compiler.h"
#include "tpu/isa/Error.h"
#include "tpu/runtime/Session.h"
#include "tpu/runtime/SimulatorBackend.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace tpu;

namespace {

// A config given as a dict is written to a file of its own for the compiler,
// which reads configs by preset name or path; the file goes with the object.
class ConfigFile {
public:
  explicit ConfigFile(const py::dict &config) {
    std::string pattern = (fs::temp_directory_path() / "tpu-config-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw Error("cannot create a temporary directory for the config");
    directory_ = pattern;
    path_ = (directory_ / "config.json").string();
    std::ofstream(path_) << py::module_::import("json").attr("dumps")(config).cast<std::string>();
  }
  ~ConfigFile() {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }
  const std::string &path() const { return path_; }

private:
  fs::path directory_;
  std::string path_;
};

// compile(model, output, config=None, fusion="full"): writes the bundle and
// returns its path.
std::string compileModel(const std::string &model, const std::string &output,
                         const py::object &config, const std::string &fusion) {
  compiler::CompileOptions options;
  options.input_path = model;
  options.output_path = output;
  options.fusion = fusion;
  std::optional<ConfigFile> configFile;
  if (py::isinstance<py::dict>(config)) {
    configFile.emplace(config.cast<py::dict>());
    options.config = configFile->path();
  } else if (!config.is_none()) {
    options.config = config.cast<std::string>();
  }
  try {
    compiler::compile(options);
  } catch (const Error &error) {
    std::string message = error.what();
    // The temporary file means nothing to the caller: name the dict instead.
    if (configFile)
      for (size_t at; (at = message.find(configFile->path())) != std::string::npos;)
        message.replace(at, configFile->path().size(), "config dict");
    throw Error(message);
  }
  return output;
}

py::object toPython(const nlohmann::json &json) {
  return py::module_::import("json").attr("loads")(json.dump());
}

runtime::ElementType elementTypeOf(const py::dtype &dtype) {
  switch (dtype.kind()) {
  case 'f':
    return dtype.itemsize() == 8 ? runtime::ElementType::Float64 : runtime::ElementType::Float32;
  case 'i':
    switch (dtype.itemsize()) {
    case 1:
      return runtime::ElementType::Int8;
    case 2:
      return runtime::ElementType::Int16;
    case 4:
      return runtime::ElementType::Int32;
    default:
      return runtime::ElementType::Int64;
    }
  case 'u':
    if (dtype.itemsize() == 1)
      return runtime::ElementType::UInt8;
    break;
  case 'b':
    break;
  }
  throw Error(fmt::format("unsupported numpy dtype '{}'", dtype.attr("name").cast<std::string>()));
}

runtime::Tensor toTensor(const py::handle &value) {
  py::array array = py::array::ensure(value);
  if (!array)
    throw Error("an input is not convertible to a numpy array");
  runtime::Tensor tensor;
  tensor.type = elementTypeOf(array.dtype());
  tensor.shape.assign(array.shape(), array.shape() + array.ndim());
  auto values = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(array);
  tensor.values.assign(values.data(), values.data() + values.size());
  return tensor;
}

py::array toNumpy(const runtime::Tensor &tensor) {
  py::array_t<double> values(tensor.shape);
  std::copy(tensor.values.begin(), tensor.values.end(), values.mutable_data());
  // bf16 widens to float32 exactly; integers keep their width (int64:
  // ArgMax's indices, which the runtime widened from int32 words).
  const char *dtype = tensor.type == runtime::ElementType::Int8    ? "int8"
                      : tensor.type == runtime::ElementType::Int32 ? "int32"
                      : tensor.type == runtime::ElementType::Int64 ? "int64"
                                                                   : "float32";
  return values.attr("astype")(dtype);
}

py::list describe(const std::vector<TensorInfo> &tensors) {
  py::list list;
  for (const TensorInfo &info : tensors)
    list.append(py::dict(py::arg("name") = info.name, py::arg("shape") = info.shape,
                         // What the host gets: an int64 output is stored as i32 words.
                         py::arg("dtype") = info.host_type == HostType::I64
                                                ? std::string("i64")
                                                : std::string(isa::dtypeName(info.dtype))));
  return list;
}

// A loaded bundle and its inputs; run() simulates it.
class Program {
public:
  explicit Program(const std::string &path)
      : path_(path), session_(runtime::Session::fromFile(path)) {}

  py::list inputs() const { return describe(session_.bundle().inputs); }
  py::list outputs() const { return describe(session_.bundle().outputs); }
  std::string configName() const { return session_.bundle().config.name; }

  // inputs: a list in the model's input order or a dict by input name;
  // inputs not given are zero. Returns (outputs as numpy arrays, report).
  py::tuple run(const py::object &inputs, const std::string &mode, uint64_t maxCycles) {
    if (mode != "fast" && mode != "cycle")
      throw Error(fmt::format("mode must be fast or cycle, got '{}'", mode));
    const Bundle &bundle = session_.bundle();
    if (py::isinstance<py::dict>(inputs)) {
      for (auto [name, value] : inputs.cast<py::dict>())
        session_.setInput(inputIndex(name.cast<std::string>()), toTensor(value), "the numpy array");
    } else if (!inputs.is_none()) {
      py::list list = py::list(inputs);
      if (list.size() > bundle.inputs.size())
        throw Error(
            fmt::format("{} inputs given, the model has {}", list.size(), bundle.inputs.size()));
      for (size_t index = 0; index < list.size(); ++index)
        session_.setInput(index, toTensor(list[index]), "the numpy array");
    }
    sim::SimOptions options;
    options.mode = mode == "cycle" ? sim::Mode::Cycle : sim::Mode::Fast;
    options.max_cycles = maxCycles;
    runtime::SimulatorBackend backend(options);
    runtime::RunReport runReport;
    {
      py::gil_scoped_release released;
      runReport = session_.run(backend);
    }
    // What tpusim's --report adds to the backend's figures.
    nlohmann::json report = runReport.json;
    report["bundle"] = path_;
    report["config"] = bundle.config.name;
    report["clock_ghz"] = bundle.config.clock_ghz;
    report["instructions"] = bundle.program.size();
    py::list outputs;
    for (size_t index = 0; index < bundle.outputs.size(); ++index)
      outputs.append(toNumpy(session_.output(index)));
    return py::make_tuple(outputs, toPython(report));
  }

private:
  size_t inputIndex(const std::string &name) const {
    const auto &inputs = session_.bundle().inputs;
    for (size_t index = 0; index < inputs.size(); ++index)
      if (inputs[index].name == name)
        return index;
    throw Error(fmt::format("{}: no input named '{}'", path_, name));
  }

  std::string path_;
  runtime::Session session_;
};

} // namespace

PYBIND11_MODULE(tpu, module) {
  module.doc() = "Compile models for the TPU and run them on its simulator (docs/python.md).";
  // compile() reads MLIR's options (pass manager, timing), which exist once registered.
  compiler::parseMlirOptions("tpu", {});
  static py::exception<Error> error(module, "Error");
  // Whatever the tools would print as their one-line error is a tpu.Error.
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer)
        std::rethrow_exception(pointer);
    } catch (const Error &caught) {
      error(caught.what());
    } catch (const py::error_already_set &) {
      throw;
    } catch (const py::builtin_exception &) {
      throw;
    } catch (const std::exception &caught) {
      error(caught.what());
    }
  });

  module.def("compile", &compileModel, py::arg("model"), py::arg("output"),
             py::arg("config") = py::none(), py::arg("fusion") = "full",
             "Compiles MODEL (.onnx or .mlir) into the bundle OUTPUT for CONFIG (a preset's name, "
             "a config file, a dict of the config's keys, or None for tpu-32x32) with FUSION "
             "(none, epilogue or full). Returns OUTPUT.");
  py::class_<Program>(module, "Program", "A compiled bundle, ready to run on the simulator.")
      .def(py::init<const std::string &>(), py::arg("path"))
      .def_property_readonly("inputs", &Program::inputs, "[{name, shape, dtype}] in order")
      .def_property_readonly("outputs", &Program::outputs, "[{name, shape, dtype}] in order")
      .def_property_readonly("config", &Program::configName, "the config's name")
      .def("run", &Program::run, py::arg("inputs") = py::none(), py::arg("mode") = "fast",
           py::arg("max_cycles") = 0,
           "Simulates with INPUTS (numpy arrays: a list in order or a dict by name; missing "
           "ones are zero). Returns (outputs, report): a list of numpy arrays and the dict "
           "tpusim --report writes (without its output comparisons).");
}
