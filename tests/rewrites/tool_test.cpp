// batchconv-opt as a user meets it: exit codes, one-line errors naming the
// file, atomic output (a failed write leaves nothing), the input untouched,
// and the options that produce files or text.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "onnx/onnx_io.h"

namespace fs = std::filesystem;

namespace {

struct Result {
  int rc;
  std::string out;  // stdout and stderr together
};

Result run(const std::string& args) {
  std::string cmd = std::string(BATCHCONV_OPT) + " " + args + " 2>&1";
  Result r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Tool : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("bc_tool_test_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
    model = (dir / "in.onnxtxt").string();
    std::ofstream(model) << R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,5] x) => (float[2,12,5] y)
<float[12,3,1] w = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36}>
{
  reps = Constant <value = int64[3] {1, 4, 1}> ()
  rank = Constant <value = int64[1] {3}> ()
  ones = ConstantOfShape <value = int64[1] {1}> (rank)
  e = Expand (x, ones)
  t = Tile (e, reps)
  y = Conv <group = 4> (t, w)
}
)";
  }
  void TearDown() override { fs::remove_all(dir); }
  int files_in_dir() const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
    return n;
  }
  fs::path dir;
  std::string model;
};

}  // namespace

TEST_F(Tool, RewritesVerifiesAndLeavesTheInputAlone) {
  std::string before = slurp(model);
  std::string out = (dir / "out.onnx").string();
  Result r = run(model + " -o " + out + " --verify --stats");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("verify:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fold_constants"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(model), before);
  auto m = batchconv::io::load_model(out);
  for (const auto& n : m->graph.nodes()) EXPECT_NE(n->op_type, "Tile") << "repeat not folded";
}

TEST_F(Tool, TextAndBinaryByExtension) {
  std::string txt = (dir / "out.onnxtxt").string(), bin = (dir / "out.onnx").string();
  ASSERT_EQ(run(model + " --no-rewrites -o " + txt).rc, 0);
  ASSERT_EQ(run(txt + " --no-rewrites -o " + bin).rc, 0);
  EXPECT_NE(slurp(txt).find("Tile ("), std::string::npos);
  Result printed = run(bin + " --no-rewrites");
  EXPECT_EQ(printed.rc, 0);
  EXPECT_NE(printed.out.find("y = Conv <group = 4>"), std::string::npos) << printed.out;
}

TEST_F(Tool, ErrorsAreOneLineNamingTheFile) {
  std::string garbage = (dir / "garbage.onnx").string();
  std::ofstream(garbage) << "\x08\x07\x12\xff\xff\xff junk";
  Result r = run(garbage + " -o " + (dir / "o.onnx").string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out.rfind("batchconv-opt: " + garbage + ": ", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;

  std::string bad = (dir / "cycle.onnxtxt").string();
  std::ofstream(bad) << "<ir_version: 8, opset_import: [\"\" : 13]> g (float[2] x) => (float[2] y) "
                        "{ a = Add(x, b)\n b = Relu(a)\n y = Relu(b) }";
  r = run(bad);
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("cycle through node"), std::string::npos) << r.out;

  r = run((dir / "missing.onnx").string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("missing.onnx: cannot open"), std::string::npos) << r.out;
}

TEST_F(Tool, UsageErrorsExitTwo) {
  EXPECT_EQ(run(model + " --frobnicate").rc, 2);
  Result r = run(model + " --passes=no_such_pass");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("unknown pass 'no_such_pass'"), std::string::npos) << r.out;
  EXPECT_EQ(run("").rc, 2);
  EXPECT_EQ(run(model + " --emit=png").rc, 2);
}

TEST_F(Tool, FailedWriteLeavesNoFile) {
  fs::create_directories(dir / "taken.onnx");  // a directory where the output should go
  Result r = run(model + " -o " + (dir / "taken.onnx").string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_EQ(files_in_dir(), 1) << "only the input may remain";  // no temp file left behind
  r = run(model + " -o " + (dir / "no" / "such" / "dir.onnx").string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_FALSE(fs::exists(dir / "no"));
}

// The input is never modified: -o naming the input (directly or through a
// link) is refused before anything runs; -o onto a symlink or a device node is
// refused, not replaced.
TEST_F(Tool, NeverWritesOverItsInputOrNonRegularFiles) {
  const std::string before = slurp(model);
  Result r = run(model + " -o " + model);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("is the input file"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(model), before);
  fs::create_hard_link(model, dir / "hard.onnxtxt");
  r = run(model + " -o " + (dir / "hard.onnxtxt").string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_EQ(slurp(model), before);

  const std::string target = (dir / "target.onnx").string();
  std::ofstream(target) << "keep";
  fs::create_symlink(target, dir / "link.onnx");
  r = run(model + " -o " + (dir / "link.onnx").string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("symbolic link; refusing to replace it"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_symlink(dir / "link.onnx"));
  EXPECT_EQ(slurp(target), "keep");

  // A special file (a FIFO here: the same path as a device node, and harmless
  // if a broken build replaced it, unlike /dev/null).
  const fs::path fifo = dir / "fifo.onnx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  r = run(model + " -o " + fifo.string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("fifo.onnx: exists and is not a regular file"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_fifo(fifo));

  r = run(dir.string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("is a folder, not a model file"), std::string::npos) << r.out;
}

TEST_F(Tool, ListHelpVersion) {
  Result r = run("--list-passes");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out.rfind("fold_constants", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("eliminate_dead_nodes"), std::string::npos);
  EXPECT_EQ(run("--help").rc, 0);
  EXPECT_NE(run("--version").out.find("batchconv-opt"), std::string::npos);
}

TEST_F(Tool, ExplainDotAndSplitInput) {
  // Before fold_constants the Expand's shape is still computed: not provably a no-op.
  Result r = run(model + " --passes=eliminate_nop_expand --explain -o " + (dir / "o.onnx").string());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("explain: eliminate_nop_expand: Expand: shape input 'ones' is not a constant"), std::string::npos)
      << r.out;

  ASSERT_EQ(run(model + " --emit=dot -o " + (dir / "o.onnx").string()).rc, 0);
  EXPECT_NE(slurp(dir / "o.before.dot").find("Tile"), std::string::npos);
  EXPECT_EQ(slurp(dir / "o.after.dot").find("Tile"), std::string::npos);

  std::string split = (dir / "split.onnxtxt").string();
  std::string one = slurp(model);
  std::ofstream(split) << one << "// -----\nthis part is broken\n// -----\n" << one;
  r = run(split + " --split-input-file --no-rewrites");
  EXPECT_EQ(r.rc, 1);  // one part failed ...
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '{') - std::count(r.out.begin(), r.out.end(), '}'), 0);
  size_t graphs = 0;
  for (size_t p = 0; (p = r.out.find("y = Conv", p)) != std::string::npos; ++p) ++graphs;
  EXPECT_EQ(graphs, 2u) << r.out;  // ... the other two were still printed
  EXPECT_NE(r.out.find("split.onnxtxt:part2"), std::string::npos) << r.out;
}

// Files from strangers (tests/models/hostile; two crashed this tool inside
// ONNX's shape inference before): exit 1, one line naming the node, nothing
// written. The rewritten model of the second would fail ONNX's checker, and a
// model the checker refuses is never written.
TEST_F(Tool, HostileModelsAreRefusedNamingTheNode) {
  const std::string hostile = std::string(BATCHCONV_SOURCE_DIR) + "/tests/models/hostile/";
  const std::pair<const char*, const char*> cases[] = {
      {"dataprop_mul_unknown_attribute.onnx", "node '/layer/Conv' (Conv): unknown attribute 'groux'"},
      {"dataprop_mul.onnx", "node name: /Equal"},
      {"float_to_int64_cast.onnx", "node '/Conv' (Conv): unknown attribute 'rgo"}};
  for (const auto& [file, want] : cases) {
    const fs::path out = dir / "out.onnx";
    Result r = run(hostile + file + " -o " + out.string());
    EXPECT_EQ(r.rc, 1) << file << ": " << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << file << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_FALSE(fs::exists(out)) << file;
    EXPECT_EQ(files_in_dir(), 1) << file << ": only the input may remain";
  }
  // --no-check writes what the checker would refuse, on request.
  Result r = run(hostile + std::string("dataprop_mul.onnx --no-check -o ") + (dir / "out.onnx").string());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(fs::exists(dir / "out.onnx"));
}
