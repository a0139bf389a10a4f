#include "tuner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "args.h"
#include "batchconv/batchconv.h"
#include "measure.h"
#include "processes.h"
#include "space.h"

#ifndef BATCHCONV_TUNE_HALIDE_VERSION
#define BATCHCONV_TUNE_HALIDE_VERSION "14"
#endif
#ifndef BATCHCONV_TUNE_VERSION
#define BATCHCONV_TUNE_VERSION "0"
#endif

namespace batchconv_tune {

std::string halide_version() { return BATCHCONV_TUNE_HALIDE_VERSION; }
std::string batchconv_version() { return BATCHCONV_TUNE_VERSION; }

namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The shape key back into the chooser's problem (the space needs the sizes).
ConvProblem problem_of_key(const std::string& key, const std::string& op) {
  ConvProblem base;
  base.op = op == "batched_weight_conv"    ? batchconv_gen::ConvOp::BatchedWeight
            : op == "broadcast_input_conv" ? batchconv_gen::ConvOp::BroadcastInput
                                           : batchconv_gen::ConvOp::Grouped;
  return batchconv_gen::parse_tuning_shape_key(key, base);
}

// The autoschedulers' estimates for the generator the rows path runs: the
// broadcast op's dense path is one grouped conv with B*Cout channels.
std::string estimates_for(const ConvProblem& p, const std::string& op, const std::string& generator,
                          const std::string& key) {
  if (op == generator || generator != "grouped_conv") return key;
  ConvProblem q = p;
  if (op == "broadcast_input_conv") q.cout_g = p.cout_g * p.batch;
  q.batch = 1;
  q.op = batchconv_gen::ConvOp::Grouped;
  return batchconv_gen::tuning_shape_key(q);
}

std::vector<std::string> split_params(const std::string& point) {
  std::vector<std::string> out;
  std::stringstream in(point);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool is_autoscheduler(const std::string& source) {
  return source == "Mullapudi2016" || source == "Li2018" || source.rfind("Adams2019", 0) == 0;
}

struct Proposal {
  std::string source, point;  // point: canonical schedule text, or the autoscheduler's params
  std::string family;         // rows | channels
};

std::string family_of(const std::string& point) {
  return point.find("family=channels") != std::string::npos ? "channels" : "rows";
}

void make_dirs(const std::string& path) {
  std::string cur;
  std::stringstream in(path);
  std::string part;
  if (!path.empty() && path[0] == '/') cur = "/";
  while (std::getline(in, part, '/')) {
    if (part.empty()) continue;
    cur += part + "/";
    mkdir(cur.c_str(), 0755);
  }
}

}  // namespace

Record tune_job(const Job& job, const TuneOptions& o, const Tools& tools) {
  const bcbench::BenchArgs args = bcbench::parse_args(job.problem_flags);
  const std::string op = bcbench::op_name(args.spec.op);
  if (args.spec.op == bcbench::Op::BatchedLinear)
    throw std::invalid_argument(job.label + ": batched_linear has no conv schedule space to tune");
  const std::string dir = o.work_dir + "/" + std::to_string(fnv1a(job.label + job.target) % 1000000007);
  make_dirs(dir);

  MeasureOptions mo;
  mo.problem_flags = job.problem_flags;
  mo.rounds = o.rounds;
  mo.min_sample_ms = o.min_sample_ms;
  mo.line_timeout_s = o.run_timeout_s;
  mo.threads = o.threads;
  const Probe pr = probe(mo, tools.self, dir);
  if (!pr.error.empty()) throw std::runtime_error(job.label + ": " + pr.error);

  Key key{op, pr.shape_key, job.target, machine_model(), halide_version(), batchconv_version()};
  Database db = read_db(o.db);
  Progress progress(o.progress, job.label, o.budget_s);
  if (const Record* done = db.find(key)) {
    progress.message(job.label + ": already tuned in " + o.db + " (" + std::to_string(done->trials) +
                     " trials); skipped");
    return *done;
  }
  std::vector<Trial> trials = db.trials_of(key);
  const ConvProblem problem = problem_of_key(pr.shape_key, op);
  const TargetFacts facts = batchconv_gen::facts_of_variant(job.target);
  const Space space(problem, facts);
  // The default: what the runtime runs here when the job's target is the one
  // it selects on this machine; for another target, the chooser's point for
  // that target compiled like any candidate (the reference of every run).
  const bool native = job.target == batchconv::selected_target();
  const ConvFamily chosen_family =
      native ? (pr.default_family == "channels" ? ConvFamily::Channels : ConvFamily::Rows)
             : batchconv_gen::choose_conv_schedule(problem, facts).schedule.family;
  const std::string default_family = chosen_family == ConvFamily::Channels ? "channels" : "rows";
  const std::string default_point = space.canonical(space.default_point(chosen_family));
  Candidate reference{"runtime-default", "", "", default_family};
  if (!native) {
    CompileJob c;
    c.id = "reference";
    c.generator = pr.generator_of_family.at(default_family);
    c.target = job.target;
    c.dir = dir;
    c.timeout_s = o.compile_timeout_s;
    c.params = split_params(default_point);
    std::string so = reusable_object(c, tools);
    if (so.empty()) {
      const CompileResult r = compile_all({c}, 1, tools).at(0);
      if (r.status != "ok")
        throw std::runtime_error(job.label + ": the default point does not compile for " + job.target + ": " +
                                 r.message);
      so = r.so_path;
    }
    reference = {"default@" + job.target, so, c.generator, default_family};
  }

  std::set<std::string> tried;
  int generation = 0;
  double prior_elapsed = 0;
  for (const Trial& t : trials) {
    tried.insert(t.source + "|" + t.point);
    generation = std::max(generation, t.generation + 1);
    prior_elapsed = std::max(prior_elapsed, t.elapsed_s);
  }
  if (!trials.empty())
    progress.message(job.label + ": resuming after " + std::to_string(trials.size()) + " trials (" +
                     std::to_string(static_cast<int>(prior_elapsed)) + " s)");
  const double start = now_s();
  auto elapsed = [&] { return prior_elapsed + now_s() - start; };
  auto ok_points = [&] {  // schedule-space trials that ran, best first
    std::vector<const Trial*> v;
    for (const Trial& t : trials)
      if (t.status == "ok" && !is_autoscheduler(t.source)) v.push_back(&t);
    std::stable_sort(v.begin(), v.end(), [](const Trial* a, const Trial* b) { return a->ratio < b->ratio; });
    return v;
  };
  auto failed_count = [&] {
    int n = 0;
    for (const Trial& t : trials) n += t.status != "ok";
    return n;
  };
  auto add = [&](std::vector<Proposal>& list, const Proposal& p) {
    if (tried.insert(p.source + "|" + p.point).second) list.push_back(p);
  };
  // Search points pass the analytical filter first; the defaults always run.
  auto add_point = [&](std::vector<Proposal>& list, const char* source, const ConvSchedule& s,
                       std::set<std::string>& seen_points) {
    if (std::string(source) != "default" && !space.reject_reason(s).empty()) return false;
    const std::string text = space.canonical(s);
    if (seen_points.count(text)) return false;
    seen_points.insert(text);
    const size_t before = list.size();
    add(list, {source, text, family_of(text)});
    return list.size() > before;
  };
  double gen_seconds = 0;
  double last_default_ms = 0;

  while (generation < o.max_generations && (trials.empty() || elapsed() + gen_seconds * 0.5 < o.budget_s)) {
    const double gen_start = now_s();
    std::mt19937_64 rng(o.seed ^ fnv1a(key.str()) ^ (0x9E3779B97F4A7C15ull * uint64_t(generation + 1)));
    std::set<std::string> seen_points;
    for (const Trial& t : trials)
      if (!is_autoscheduler(t.source)) seen_points.insert(t.point);
    std::vector<Proposal> props;
    const ConvFamily families[2] = {ConvFamily::Rows, ConvFamily::Channels};
    if (generation == 0) {
      add_point(props, "default", space.default_point(chosen_family), seen_points);
      add_point(props, "default",
                space.default_point(chosen_family == ConvFamily::Rows ? ConvFamily::Channels
                                                                       : ConvFamily::Rows),
                seen_points);
      for (const std::string& b : o.baselines) add(props, {b, "auto_schedule=true", "rows"});
    }
    const size_t want = props.size() + static_cast<size_t>(std::max(1, o.population));
    const auto parents = ok_points();
    std::uniform_real_distribution<double> u(0, 1);
    for (int attempt = 0; props.size() < want && attempt < 50 * o.population; ++attempt) {
      if (generation > 0 && !parents.empty() && u(rng) < 0.75) {
        std::uniform_int_distribution<size_t> pick(0, std::min<size_t>(3, parents.size()) - 1);
        const ConvSchedule parent = batchconv_gen::parse_conv_schedule(parents[pick(rng)]->point);
        add_point(props, "search", space.mutate(parent, rng), seen_points);
      } else {
        add_point(props, "search", space.random_point(families[rng() % 2], rng), seen_points);
      }
    }
    if (props.empty()) {
      progress.message(job.label + ": no untried point passes the filter; stopping");
      break;
    }
    // Compile.
    std::vector<CompileJob> cjobs;
    const int base_index = static_cast<int>(trials.size());
    for (size_t i = 0; i < props.size(); ++i) {
      const Proposal& p = props[i];
      CompileJob c;
      c.id = "t" + std::to_string(base_index + static_cast<int>(i));
      c.generator = pr.generator_of_family.at(p.family);
      c.target = job.target;
      c.dir = dir;
      c.timeout_s = o.compile_timeout_s;
      if (is_autoscheduler(p.source)) {
        c.autoscheduler = p.source.rfind("Adams2019", 0) == 0 ? "Adams2019" : p.source;
        if (p.source == "Adams2019-greedy") c.env.push_back({"HL_BEAM_SIZE", "1"});
        c.params = autoscheduler_params(estimates_for(problem, op, c.generator, pr.shape_key));
      } else {
        c.params = split_params(p.point);
      }
      cjobs.push_back(c);
    }
    const std::vector<CompileResult> compiled =
        compile_all(cjobs, o.jobs, tools, [&](size_t done, size_t total) {
          progress.step(generation, "compiling " + std::to_string(done) + "/" + std::to_string(total), elapsed());
        });
    progress.step(generation, "timing " + std::to_string(cjobs.size()) + " candidates", elapsed());
    // Measure, beside the runtime's default.
    std::vector<Candidate> cands{reference};
    for (size_t i = 0; i < props.size(); ++i)
      if (compiled[i].status == "ok")
        cands.push_back({cjobs[i].id, compiled[i].so_path, cjobs[i].generator, props[i].family});
    const MeasureResult m = measure(cands, mo, tools.self, dir);
    const auto def = m.by_id.find(reference.id);
    if (def == m.by_id.end() || def->second.status != "ok")
      throw std::runtime_error(job.label + ": the default kernel itself failed to run: " +
                               (def == m.by_id.end() ? "no result" : def->second.message));
    last_default_ms = def->second.median_ms;
    for (size_t i = 0; i < props.size(); ++i) {
      Trial t;
      t.key = key;
      t.index = base_index + static_cast<int>(i);
      t.generation = generation;
      t.source = props[i].source;
      t.point = props[i].point;
      t.compile_s = compiled[i].seconds;
      if (compiled[i].status != "ok") {
        t.status = compiled[i].status;
        t.message = compiled[i].message;
      } else {
        const auto it = m.by_id.find(cjobs[i].id);
        const Measured mm = it == m.by_id.end() ? Measured{"crash", "no result", 0, 0} : it->second;
        t.status = mm.status;
        t.message = mm.message;
        if (mm.status == "ok") {
          t.time_ms = mm.median_ms;
          t.default_ms = last_default_ms;
          t.ratio = mm.median_ms / last_default_ms;
        }
      }
      if (t.message.size() > 600) t.message = t.message.substr(t.message.size() - 600);
      t.elapsed_s = elapsed();
      append_line(o.db, to_json_line(t));
      trials.push_back(t);
    }
    gen_seconds = now_s() - gen_start;
    const auto best = ok_points();
    progress.update(generation, static_cast<int>(trials.size()), failed_count(),
                    best.empty() ? 0 : best[0]->ratio,
                    best.empty() ? 0 : best[0]->ratio * last_default_ms, last_default_ms, elapsed());
    ++generation;
  }

  // The final run: the best few again beside the default and oneDNN (their
  // objects from this run's work dir, compiled again after a resume).
  const auto best = ok_points();
  std::vector<CompileJob> cjobs;
  std::vector<const Trial*> finalists;
  std::vector<Candidate> cands{reference};
  for (size_t i = 0; i < best.size() && finalists.size() < 3; ++i) {
    const Trial* t = best[i];
    finalists.push_back(t);
    const std::string id = "t" + std::to_string(t->index);
    const std::string family = family_of(t->point);
    const std::string generator = pr.generator_of_family.at(family);
    CompileJob c;
    c.id = id;
    c.generator = generator;
    c.target = job.target;
    c.dir = dir;
    c.timeout_s = o.compile_timeout_s;
    c.params = split_params(t->point);
    const std::string so = reusable_object(c, tools);
    if (!so.empty()) {
      cands.push_back({id, so, generator, family});
      continue;
    }
    cjobs.push_back(c);
  }
  const std::vector<CompileResult> compiled = compile_all(cjobs, o.jobs, tools);
  for (size_t i = 0; i < cjobs.size(); ++i)
    if (compiled[i].status == "ok")
      cands.push_back({cjobs[i].id, compiled[i].so_path, cjobs[i].generator,
                       family_of(cjobs[i].params.empty() ? "" : cjobs[i].params[0])});
  MeasureOptions fo = mo;
  fo.rounds = 2 * o.rounds;
  fo.peer = o.peer;
  const MeasureResult m = measure(cands, fo, tools.self, dir);
  const auto def = m.by_id.find(reference.id);
  if (def == m.by_id.end() || def->second.status != "ok")
    throw std::runtime_error(job.label + ": the default kernel failed in the final run");

  Record r;
  r.key = key;
  r.default_ms = def->second.median_ms;
  r.time_ms = r.default_ms;
  r.source = "default";
  r.point = default_point;
  r.family = default_family;
  r.default_point = default_point;
  for (const Trial* t : finalists) {
    const auto it = m.by_id.find("t" + std::to_string(t->index));
    if (it == m.by_id.end() || it->second.status != "ok") continue;
    if (it->second.median_ms < r.time_ms) {
      r.time_ms = it->second.median_ms;
      r.source = t->source == "default" ? "search" : t->source;
      r.point = t->point;
      r.family = family_of(r.point);
    }
  }
  // A compiled copy of the default point winning is still the default.
  if (r.source != "default" && r.point == default_point) r.source = "default";
  if (r.source == "default") {
    r.time_ms = r.default_ms;
    r.point = default_point;
    r.family = default_family;
  }
  r.generator = pr.generator_of_family.at(r.family);
  for (const Trial& t : trials)
    if (is_autoscheduler(t.source) && t.status == "ok") {
      const double ms = t.ratio * r.default_ms;
      auto it = r.baselines_ms.find(t.source);
      if (it == r.baselines_ms.end() || ms < it->second) r.baselines_ms[t.source] = ms;
    }
  r.label = job.label;
  r.trials = static_cast<int>(trials.size());
  r.tuning_s = elapsed();
  r.seed = o.seed;
  r.peer = m.peer_name;
  r.peer_ms = m.peer_ms;
  append_line(o.db, to_json_line(r));
  char summary[400];
  std::snprintf(summary, sizeof summary, "%s: %s %.3f ms, default %.3f ms (%.2fx), %d trials in %.0f s",
                job.label.c_str(), r.source == "default" ? "kept the default," : "tuned", r.time_ms,
                r.default_ms, r.default_ms / r.time_ms, r.trials, r.tuning_s);
  progress.finish(summary);
  return r;
}

}  // namespace batchconv_tune
