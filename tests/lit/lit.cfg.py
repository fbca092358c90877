import os

import lit.formats

config.name = "TPU"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
# Test outputs go to the build tree, never next to the sources.
config.test_exec_root = config.tpu_lit_exec_root
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]
config.environment["PATH"] = os.pathsep.join(
    [config.tpu_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%models", os.path.join(config.tpu_source_dir, "models")))
config.substitutions.append(("%configs", os.path.join(config.tpu_source_dir, "configs")))
config.substitutions.append(("%generated_models", config.tpu_generated_models))
