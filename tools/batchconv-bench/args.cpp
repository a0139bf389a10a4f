#include "args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace bcbench {

const char* help_text() {
  return R"(batchconv-bench: run one batchconv op at a given shape, check it against the
double-precision reference, and time it side by side with oneDNN and the
naive formulations, in the same run.

usage: batchconv-bench --op=OP --x=DIMS --w=DIMS [geometry] [options]
       batchconv-bench --op=OP --x-npy=x.npy --w-npy=w.npy --y-npy=y.npy [...]

ops (full or short name):
  grouped_conv | gconv          x (N, Cin, [H,] W), w (Cout, Cin/g, [KH,] KW), bias (Cout)
  batched_weight_conv | bwconv  x (B, N, Cin, [H,] W), w (B, Cout, Cin/g, [KH,] KW), bias (B, Cout)
  broadcast_input_conv | biconv x (N, Cin, [H,] W) shared by w (B, Cout, Cin/g, [KH,] KW), bias (B, Cout)
  batched_linear | blinear      x (B, N, K) or shared (N, K), w (B, K, M), bias (B, M)
  Rank decides 1-D vs 2-D: a 3-D x for gconv/biconv (4-D for bwconv) is a conv1d.

shapes (PyTorch order, dimensions joined by 'x'):
  --x=DIMS, --w=DIMS     e.g. --x=100x50x3x32x32 --w=100x64x3x3x3
  --bias                 add a random bias of the op's bias shape
  --relu                 fuse a ReLU
  --x-npy=F --w-npy=F --bias-npy=F   read a tensor from a .npy file (float32 '<f4',
                         C order; anything else is an error); its shape is taken
                         from the file (a --x/--w given too must agree)
  --y-npy=F              write batchconv's output (the op's output shape) to F as .npy
geometry (conv ops): one number applies to every spatial axis; 2-D takes HxW
  --stride=S  --dilation=D  --pad=P (both sides)  --groups=G (default 1)
  --pad-begin=P --pad-end=P   asymmetric padding (top/left and bottom/right)
  --layout=concat|batched     broadcast_input_conv output: (N, B*Cout, ...) [default]
  --device=opencl|cuda        also run the op on that device (method batchconv@opencl
                              or batchconv@cuda: host memory, transfers timed too)
                              or (B, N, Cout, ...)
checking:
  --check[=MODE]   MODE auto (default; full when the reference is cheap, else
                   sampled), full (the flag alone), sample, none. Sampled checks
                   cut whole sub-problems (images of slice b = 0 and B-1, or a
                   column window of a pointwise conv) so they are exact, not
                   approximate. Every method's output is checked, not only batchconv's.
  --tol=T          max relative error allowed (default 1e-5):
                   max|y - ref| / max(1, max|ref|); exit status 1 when exceeded
timing:
  --warmup=N (default 1)  --min-reps=N (3)  --reps=N (max timed runs, 50)
  --max-time=SEC (1.0: stop after this much timing once min-reps are done)
  The MEDIAN is the headline figure; min is printed beside it.
  --threads=T      threads for batchconv (set_num_threads), oneDNN (OpenMP) and the
                   naive copies; default: all cores
  --methods=LIST   comma-separated method names or families (batchconv, onednn,
                   naive); default all that apply to the op
  --seed=S         random data seed (default 1)
machine limits (for the "of limit" column):
  measured at start (~1 s): peak FMA rate (all threads of AVX-512 FMAs) and copy
  bandwidth (read + write, reused buffer). --peak-gflops=G --bw-gbs=B use given
  values instead; --no-limits skips them.
output:
  --json           machine-readable results on stdout
  --help           this text

methods (which apply depends on the op):
  batchconv                 the batchconv op itself
  batchconv:dense           broadcast-input, concat layout, groups=1: one dense conv, w as (B*Cout, Cin, ..)
  batchconv:repeat+grouped  x.repeat materialised + batchconv grouped_conv (seed 1's naive way)
  batchconv:loop            loop over b of batchconv grouped_conv
  batchconv:in_place, batchconv:weight_panels, batchconv:all_panels
                            batched_linear with one kernel variant forced (the
                            batchconv row runs the one the chooser picks)
  onednn:nchw               oneDNN conv on the same NCHW memory
  onednn:any(conv-only)     oneDNN's preferred blocked layouts; only the conv timed
  onednn:grouped-trick      transpose x, oneDNN grouped conv (groups=B*g), transpose y back
  onednn:grouped-trick(conv-only)   the same, transposes not timed
  onednn:grouped-trick-any(conv-only)   the trick's grouped conv in oneDNN's preferred
                            blocked layouts (B > 1; B = 1 has onednn:any(conv-only))
  onednn:loop               loop over b of a oneDNN conv on slice b (zero-copy)
  onednn:dense / onednn:dense+transpose / onednn:repeat+grouped   broadcast-input peers
  onednn:matmul, onednn:sgemm-loop                                batched_linear peers
  "vs oneDNN" is the fastest oneDNN method that computes the whole op from the
  NCHW tensors (conv-only rows excluded) divided by the row's median.

peak extra memory: the executable replaces malloc/calloc/realloc/memalign/
posix_memalign/aligned_alloc/free with counting wrappers around glibc's, so
every heap allocation (C++ new, oneDNN scratchpads, the Halide runtime,
libgomp, the naive methods' repeat/transpose buffers) is counted. For each
method, in turn and from a fresh state: live heap bytes are noted, the
high-water mark reset, then setup + the first run execute; extra memory =
high-water mark - noted bytes. The inputs and output are allocated before and
are not counted. oneDNN runs in user-scratchpad mode so its scratchpad is
allocated by the method, visibly. Memory mapped without malloc is not seen; the
RSS high-water delta (after malloc_trim) is in --json as a cross-check.

exit status: 0 ok, 1 a checked method exceeded the tolerance or failed,
2 bad command line or invalid shapes.
)";
}

namespace {

// Bounds for counts that size vectors or thread pools (Halide's pool has at most 256 threads).
constexpr int64_t kMaxReps = 1000000;
constexpr int64_t kMaxThreads = 256;

// Integers must lie in [lo, hi]; the default hi keeps every value an int
// (dimensions, groups, stride, ... are ints in batchconv::ConvDesc).
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

int64_t parse_int(const std::string& flag, const std::string& v, int64_t lo, int64_t hi = kIntMax) {
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end || errno || x < lo || x > hi) {
    if (!v.empty() && !*end && (errno == ERANGE || x > hi))
      throw UsageError(flag + ": '" + v + "' is out of range (expected " + std::to_string(lo) + ".." +
                       std::to_string(hi) + ")");
    if (hi == kIntMax) throw UsageError(flag + ": '" + v + "' is not an integer >= " + std::to_string(lo));
    throw UsageError(flag + ": '" + v + "' is not an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  return x;
}

int parse_small(const std::string& flag, const std::string& v, int64_t lo, int64_t hi) {
  return static_cast<int>(parse_int(flag, v, lo, hi));
}

double parse_double(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !(x > 0) || !std::isfinite(x))
    throw UsageError(flag + ": '" + v + "' is not a positive number");
  return x;
}

std::vector<int64_t> split_ints(const std::string& flag, const std::string& v, char sep, int64_t lo,
                                int64_t hi = std::numeric_limits<int64_t>::max()) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (true) {
    size_t e = v.find(sep, start);
    const std::string item = v.substr(start, e - start);
    try {
      out.push_back(parse_int(flag, item, lo, hi));
    } catch (const UsageError&) {
      throw UsageError(flag + ": '" + v + "': '" + item + "' is not an integer >= " + std::to_string(lo));
    }
    if (e == std::string::npos) break;
    start = e + 1;
  }
  return out;
}

// "1" -> {1, 1}; "1x2" -> {1, 2} (H, W).
std::array<int, 2> parse_pair(const std::string& flag, const std::string& v, int64_t lo, BenchArgs* a) {
  auto d = split_ints(flag, v, 'x', lo, kIntMax);
  a->geometry_flags.push_back(flag);
  if (d.size() == 2) a->two_value_flags.push_back(flag);
  if (d.size() > 2) throw UsageError(flag + ": '" + v + "': expected one value or HxW");
  if (d.size() == 1) d.push_back(d[0]);
  return {static_cast<int>(d[0]), static_cast<int>(d[1])};
}

}  // namespace

std::vector<int64_t> parse_dims(const std::string& flag, const std::string& v) {
  auto d = split_ints(flag, v, 'x', 1);
  if (d.size() > 6) throw UsageError(flag + ": '" + v + "' has more than 6 dimensions");
  return d;
}

BenchArgs parse_args(const std::vector<std::string>& argv) {
  BenchArgs a;
  bool have_op = false;
  for (const std::string& arg : argv) {
    if (arg.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + arg + "' (flags start with --)");
    const size_t eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    const bool has_v = eq != std::string::npos;
    const std::string v = has_v ? arg.substr(eq + 1) : "";
    auto need = [&] {
      if (!has_v || v.empty()) throw UsageError(flag + " needs a value: " + flag + "=...");
    };
    auto none = [&] {
      if (has_v) throw UsageError(flag + " takes no value");
    };
    auto& d = a.spec.desc;
    if (flag == "--help" || flag == "-h") a.help = true;
    else if (flag == "--op") {
      need();
      if (!parse_op(v, &a.spec.op))
        throw UsageError("--op: unknown op '" + v +
                         "'; expected grouped_conv|gconv, batched_weight_conv|bwconv, "
                         "broadcast_input_conv|biconv or batched_linear|blinear");
      have_op = true;
    } else if (flag == "--x") need(), a.spec.x_shape = parse_dims(flag, v);
    else if (flag == "--w") need(), a.spec.w_shape = parse_dims(flag, v);
    else if (flag == "--bias") none(), a.spec.bias = true;
    else if (flag == "--relu") none(), d.activation = batchconv::Activation::ReLU;
    else if (flag == "--x-npy") need(), a.x_npy = v;
    else if (flag == "--w-npy") need(), a.w_npy = v;
    else if (flag == "--bias-npy") need(), a.bias_npy = v, a.spec.bias = true;
    else if (flag == "--y-npy") need(), a.y_npy = v;
    else if (flag == "--stride") need(), d.stride = parse_pair(flag, v, 1, &a);
    else if (flag == "--dilation") need(), d.dilation = parse_pair(flag, v, 1, &a);
    else if (flag == "--pad") need(), d.pad_begin = d.pad_end = parse_pair(flag, v, 0, &a);
    else if (flag == "--pad-begin") need(), d.pad_begin = parse_pair(flag, v, 0, &a);
    else if (flag == "--pad-end") need(), d.pad_end = parse_pair(flag, v, 0, &a);
    else if (flag == "--groups") need(), d.groups = parse_small(flag, v, 1, kIntMax), a.geometry_flags.push_back(flag);
    else if (flag == "--device") {
      need();
      if (v != "opencl" && v != "cuda") throw UsageError("--device: '" + v + "'; expected opencl or cuda");
#ifndef BCBENCH_HAVE_DEVICE
      throw UsageError("--device=" + v + ": this build has no GPU libraries (BATCHCONV_BUILD_GPU is off)");
#endif
      a.spec.device = v;
    } else if (flag == "--layout") {
      need();
      a.layout_given = true;
      if (v == "concat" || v == "concatenated") a.spec.layout = batchconv::BroadcastLayout::Concatenated;
      else if (v == "batched") a.spec.layout = batchconv::BroadcastLayout::Batched;
      else throw UsageError("--layout: '" + v + "'; expected concat or batched");
    } else if (flag == "--check") {
      if (!has_v || v == "full") a.check = CheckMode::Full;
      else if (v == "auto") a.check = CheckMode::Auto;
      else if (v == "sample") a.check = CheckMode::Sample;
      else if (v == "none") a.check = CheckMode::None;
      else throw UsageError("--check: '" + v + "'; expected auto, full, sample or none");
    } else if (flag == "--tol") need(), a.run.tol = parse_double(flag, v);
    else if (flag == "--warmup") need(), a.run.timing.warmup = parse_small(flag, v, 0, kMaxReps);
    else if (flag == "--min-reps") need(), a.run.timing.min_reps = parse_small(flag, v, 1, kMaxReps);
    else if (flag == "--reps") need(), a.run.timing.max_reps = parse_small(flag, v, 1, kMaxReps);
    else if (flag == "--max-time") need(), a.run.timing.max_seconds = parse_double(flag, v);
    else if (flag == "--threads") need(), a.threads = parse_small(flag, v, 1, kMaxThreads);
    else if (flag == "--methods") {
      need();
      size_t s = 0;
      while (true) {
        size_t e = v.find(',', s);
        a.run.only.push_back(v.substr(s, e - s));
        if (a.run.only.back().empty()) throw UsageError("--methods: '" + v + "' has an empty entry");
        if (e == std::string::npos) break;
        s = e + 1;
      }
    } else if (flag == "--seed") need(), a.seed = static_cast<uint64_t>(parse_int(flag, v, 0));
    else if (flag == "--json") none(), a.json = true;
    else if (flag == "--verbose") none(), a.run.verbose = true;
    else if (flag == "--no-limits") none(), a.measure_limits = false;
    else if (flag == "--peak-gflops") need(), a.peak_gflops = parse_double(flag, v);
    else if (flag == "--bw-gbs") need(), a.bw_gbs = parse_double(flag, v);
    else throw UsageError("unknown flag '" + flag + "' (see --help)");
  }
  if (a.help) return a;
  if (!have_op) throw UsageError("--op is required (see --help)");
  if (a.spec.x_shape.empty() && a.x_npy.empty()) throw UsageError("the input shape is missing: give --x=DIMS or --x-npy=FILE");
  if (a.spec.w_shape.empty() && a.w_npy.empty()) throw UsageError("the weight shape is missing: give --w=DIMS or --w-npy=FILE");
  if (a.run.timing.min_reps > a.run.timing.max_reps) a.run.timing.min_reps = a.run.timing.max_reps;
  if (a.spec.op == Op::BatchedLinear && !a.geometry_flags.empty())
    throw UsageError(a.geometry_flags[0] + " does not apply to batched_linear (it has no stride, padding, "
                     "dilation or groups)");
  if (a.layout_given && a.spec.op != Op::BroadcastInputConv)
    throw UsageError(std::string("--layout applies only to broadcast_input_conv, not ") + op_name(a.spec.op));
  if (!a.spec.x_shape.empty()) check_flags_apply(a);
  return a;
}

void check_flags_apply(const BenchArgs& a) {
  if (a.spec.op == Op::BatchedLinear || a.two_value_flags.empty()) return;
  // Rank decides 1-D vs 2-D: x (N, C, W) for gconv/biconv, (B, N, C, W) for bwconv.
  const size_t one_d_rank = a.spec.op == Op::BatchedWeightConv ? 4 : 3;
  if (a.spec.x_shape.size() == one_d_rank)
    throw UsageError(a.two_value_flags[0] + " gives HxW values but x " + shape_str(a.spec.x_shape) + " makes " +
                     op_name(a.spec.op) + " a 1-D conv: give one value");
}

}  // namespace bcbench
