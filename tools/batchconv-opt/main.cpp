// batchconv-opt: rewrites ONNX models (see --help).
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "driver.h"
#include "onnx/onnx_io.h"
#include "options.h"

#ifndef BATCHCONV_VERSION
#define BATCHCONV_VERSION "unknown"
#endif

using namespace batchconv;

namespace {

// Parts of a text file separated by lines "// -----" or "# -----"; each part
// keeps its line numbers (earlier lines become blank) so parser errors point
// at the right line.
std::vector<std::string> split_input(const std::string& text) {
  std::vector<std::string> parts(1);
  std::istringstream in(text);
  std::string line;
  size_t lines = 0;
  while (std::getline(in, line)) {
    size_t k = line.find_first_not_of(" \t");
    std::string t = k == std::string::npos ? "" : line.substr(k);
    if (t.rfind("// -----", 0) == 0 || t.rfind("# -----", 0) == 0) {
      parts.push_back(std::string(lines + 1, '\n'));
    } else {
      parts.back() += line + "\n";
    }
    ++lines;
  }
  return parts;
}

std::string read_text(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw io::Error(path + ": is a folder, not a model file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io::Error(path + ": cannot open for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string stdout_text(const onnx::ModelProto& out, const opt::Options& o) {
  return io::to_text(out, o.print_full ? -1 : 64);
}

void emit(const onnx::ModelProto& out, const opt::Options& o) {
  if (o.output.empty() || o.output == "-") {
    std::cout << stdout_text(out, o);
    return;
  }
  io::write_model_proto(out, o.output);
  if (o.print) std::cout << stdout_text(out, o);
}

int run(const opt::Options& o) {
  if (!o.output.empty() && o.output != "-") io::check_not_an_input(o.output, {o.input});
  if (!o.split_input_file) {
    auto model = io::load_model(o.input);
    auto reload = [&] { return io::read_model_proto(o.input); };
    emit(opt::process_model(std::move(model), reload, o.input, o, std::cerr), o);
    return 0;
  }
  if (!o.output.empty() && o.output != "-")
    throw opt::UsageError("--split-input-file prints to stdout; drop -o");
  std::vector<std::string> parts = split_input(read_text(o.input));
  int status = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k) std::cout << "// -----\n";
    std::string origin = o.input + ":part" + std::to_string(k + 1);
    try {
      onnx::ModelProto source = io::parse_text(parts[k], origin);
      auto model = io::import_model(std::move(source), origin);
      auto reload = [&] { return io::parse_text(parts[k], origin); };
      std::cout << stdout_text(opt::process_model(std::move(model), reload, origin, o, std::cerr), o);
    } catch (const std::exception& e) {
      std::cerr << "batchconv-opt: " << e.what() << "\n";
      status = 1;
    }
    std::cout.flush();
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  opt::Options o;
  try {
    o = opt::parse_options(argc, argv);
  } catch (const opt::UsageError& e) {
    std::cerr << "batchconv-opt: " << e.what() << "\n";
    return 2;
  }
  if (o.help) {
    std::cout << opt::usage();
    return 0;
  }
  if (o.version) {
    std::cout << "batchconv-opt " << BATCHCONV_VERSION << " (ONNX IR <= " << io::kMaxIrVersion << ", ONNX 1.12)\n";
    return 0;
  }
  if (o.list_passes) {
    for (const auto& p : rewrites::default_pipeline()) std::cout << p.name << "\t" << p.description << "\n";
    return 0;
  }
  try {
    return run(o);
  } catch (const opt::UsageError& e) {
    std::cerr << "batchconv-opt: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "batchconv-opt: " << e.what() << "\n";
    return 1;
  }
}
