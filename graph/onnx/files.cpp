// Model files: read (binary or text), atomic write, checker, shape inference.
#include <fcntl.h>
#include <sys/stat.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <google/protobuf/arena.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "onnx/convert.h"
#include "onnx/onnx_io.h"

namespace batchconv::io {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string read_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw Error(path + ": is a folder, not a model file");
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open for reading (" + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(path + ": read error");
  return ss.str();
}

}  // namespace

bool is_text_path(const std::string& path) {
  return ends_with(path, ".onnxtxt") || ends_with(path, ".txt") || ends_with(path, ".onnxtext");
}

namespace {

void parse_binary(const std::string& bytes, const std::string& path, onnx::ModelProto* p) {
  if (bytes.empty()) throw Error(path + ": file is empty");
  if (bytes.size() > (size_t(1) << 31) - 1) throw Error(path + ": file is larger than protobuf's 2 GiB limit");
  if (!p->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw Error(path + ": not a valid ONNX protobuf (truncated or corrupt file?)");
}

}  // namespace

onnx::ModelProto read_model_proto(const std::string& path) {
  std::string bytes = read_file(path);
  if (bytes.empty()) throw Error(path + ": file is empty");
  if (is_text_path(path)) return parse_text(bytes, path);
  onnx::ModelProto p;
  parse_binary(bytes, path, &p);
  return p;
}

void check_not_an_input(const std::string& output, const std::vector<std::string>& inputs) {
  struct stat out_st;
  if (::stat(output.c_str(), &out_st) != 0) return;  // does not exist yet
  for (const std::string& in : inputs) {
    struct stat in_st;
    if (::stat(in.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino)
      throw Error(output + ": is the input file '" + in + "'; write the output to another file");
  }
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    const char* what = S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a folder" : "not a regular file";
    throw Error(path + ": exists and is " + std::string(what) + "; refusing to replace it (expected a regular file or a new name)");
  }
  std::string dir = ".";
  auto slash = path.rfind('/');
  if (slash != std::string::npos) dir = slash == 0 ? "/" : path.substr(0, slash);
  std::string tmpl = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + ".batchconv-tmp-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0) throw Error(path + ": cannot create a temporary file in '" + dir + "' (" + std::strerror(errno) + ")");
  std::string tmp(name.data());
  auto fail = [&](const std::string& what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(path + ": " + what + " (" + std::strerror(err) + ")");
  };
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("write failed");
    }
    done += static_cast<size_t>(w);
  }
  if (::fchmod(fd, 0644) != 0) fail("chmod failed");
  if (::fsync(fd) != 0) fail("fsync failed");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw Error(path + ": close failed (" + std::strerror(err) + ")");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw Error(path + ": cannot move the written file into place (" + std::strerror(err) + ")");
  }
}

void write_model_proto(const onnx::ModelProto& proto, const std::string& path) {
  std::string bytes;
  if (is_text_path(path)) {
    bytes = to_text(proto);
  } else if (!proto.SerializeToString(&bytes)) {
    throw Error(path + ": model cannot be serialized (over 2 GiB?)");
  }
  write_file_atomic(path, bytes);
}

std::unique_ptr<ir::Model> load_model(const std::string& path) {
  if (is_text_path(path)) {
    onnx::ModelProto p = read_model_proto(path);
    return import_model(std::move(p), path);
  }
  // A protobuf Arena: 100k-node graphs are hundreds of thousands of small
  // messages, allocated and freed in one go.
  google::protobuf::Arena arena;
  auto* p = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  parse_binary(read_file(path), path, p);
  return import_model(std::move(*p), path);  // binds, does not move: inference runs in place
}

void save_model(const ir::Model& model, const std::string& path) {
  onnx::ModelProto p;
  try {
    p = export_model(model);
  } catch (const std::exception& e) {
    throw Error(path + ": " + e.what());
  }
  write_model_proto(p, path);
}

std::unique_ptr<ir::Model> clone_model(const ir::Model& model) {
  onnx::ModelProto p = export_model(model);
  return import_model(std::move(p), "<clone>");
}

void infer_shapes(ir::Model& model) {
  google::protobuf::Arena arena;
  onnx::ModelProto& p = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  export_into(model, &p);
  strip_for_inference(p);
  run_inference(p);
  for (const auto& vi : p.graph().value_info()) {
    ir::Value* v = model.graph.find_value(vi.name());
    if (!v || v->constant || v->is_graph_input || !vi.has_type()) continue;
    try {
      ir::TypeInfo t = type_from_proto(vi.type(), "value '" + vi.name() + "'");
      if (t.shape || !v->type.shape) v->type = t;
    } catch (const Error&) {
    }
  }
  check_ranks(model, "after shape inference");
}

void check_model(const onnx::ModelProto& proto, const std::string& origin) {
  install_inference_guards();
  try {
    onnx::checker::check_model(proto);
    onnx::ModelProto copy = proto;
    onnx::ShapeInferenceOptions opts{true, 1, false};
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    throw Error(origin + ": ONNX checker: " + msg);
  }
}

}  // namespace batchconv::io
