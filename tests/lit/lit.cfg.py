# lit configuration for batchconv-opt's FileCheck tests (ONNX text syntax, *.onnxtxt).
# CMake writes lit.site.cfg.py into the build folder with the tool paths and loads this file.
import os

import lit.formats

config.name = "batchconv-opt"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".onnxtxt"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = config.batchconv_obj_root
config.environment["PATH"] = os.pathsep.join(
    [config.batchconv_opt_dir, config.filecheck_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
