#!/usr/bin/env bash
# batchconv-tune end to end, with tiny budgets (real tuning runs are
# benchmarks, never tests):
#   faults   candidates that crash, hang, compute wrong numbers, fail or hang
#            while compiling are recorded as such and the tuner finishes;
#   corrupt  a corrupt database is an error naming its line;
#   resume   a tuner killed mid-run goes on where it stopped;
#   shards   n shards run as separate processes and merged equal an
#            unsharded run with the same seed (same jobs, trials and points);
#   targets  a job per target; a target other than the one the runtime runs
#            here is measured against its own compiled default;
#   model    --model tunes every conv of an ONNX model, keyed as the model
#            compiler keys them (MODEL: a bundled model).
# Usage: tuner_test.sh TUNER REAL_GENERATOR FAULT_GENERATOR [case...]
#        (MODEL=file.onnx for the model case)
set -uo pipefail
tuner=$1 real_gen=$2 fault_gen=$3
shift 3
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(faults corrupt resume shards targets model)
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

problem=(--op=gconv --x=1x8x9x9 --w=16x8x3x3 --pad=1)
fast=(--baselines=none --rounds=2 --min-sample-ms=2 --no-peer --progress=lines --jobs=2 --budget=30)

# The trials of a database as "key | index | generation | source | point | status" lines, sorted.
trials() {
  "$py" - "$1" <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    j = json.loads(line)
    if j["type"] == "trial":
        rows.append("%s %s %s | %d | %d | %s | %s | %s" % (j["op"], j["shape"], j["target"], j["index"],
                    j["generation"], j["source"], j["point"], j["status"]))
print("\n".join(sorted(rows)))
PY
}
records() {
  "$py" -c 'import json,sys; print("\n".join(sorted(j["op"]+" "+j["shape"]+" "+j["target"] for j in map(json.loads, open(sys.argv[1])) if j["type"]=="record")))' "$1"
}

case_faults() {
  # The compile limit leaves room for the real candidates: the channels
  # family's default point takes about 15 s to compile on a 2-core machine
  # (its tiles are specialised per store layout).
  local db=$work/faults.jsonl
  BATCHCONV_TUNE_GENERATOR=$fault_gen BATCHCONV_TUNE_REAL_GENERATOR=$real_gen \
    BATCHCONV_TUNE_FAULTS="t1=crash,t2=hang,t3=wrong,t4=compile_error,t5=compile_hang" \
    "$tuner" --db="$db" "${problem[@]}" "${fast[@]}" --population=4 --generations=1 \
    --run-timeout=5 --compile-timeout=45 > "$work/faults.log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || { fail "faults: the tuner exited $rc"; tail -20 "$work/faults.log"; return; }
  local t
  t=$(trials "$db")
  for want in "| 0 | 0 | default | .* | ok" "| 1 | 0 | default | .* | crash" "| 2 | 0 | search | .* | timeout" \
              "| 3 | 0 | search | .* | wrong" "| 4 | 0 | search | .* | compile_error" \
              "| 5 | 0 | search | .* | compile_timeout"; do
    grep -q -- "$want\$" <<< "$t" || fail "faults: no trial matching '$want' in:"$'\n'"$t"
  done
  [ "$(records "$db" | wc -l)" = 1 ] || fail "faults: no record written"
  grep -q "max relative error" "$db" || fail "faults: the wrong candidate's message does not give its error"
}

case_corrupt() {
  local db=$work/corrupt.jsonl
  printf '%s\n' '{"type":"trial"}' 'not json' > "$db"
  local out
  out=$("$tuner" --db="$db" "${problem[@]}" "${fast[@]}" 2>&1)
  local rc=$?
  [ $rc -ne 0 ] || fail "corrupt: the tuner accepted a corrupt database"
  grep -q "$db:1: missing field \"op\"" <<< "$out" || fail "corrupt: no FILE:LINE error: $out"
  [ "$(wc -l < "$db")" = 2 ] || fail "corrupt: the database was modified"
}

case_resume() {
  local db=$work/resume.jsonl
  local args=(--db="$db" "${problem[@]}" "${fast[@]}" --population=2 --generations=3 --seed=7)
  setsid "$tuner" "${args[@]}" > "$work/resume1.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 600); do
    [ -f "$db" ] && [ "$(grep -c '"type":"trial"' "$db")" -ge 4 ] && break
    sleep 0.2
  done
  kill -9 -- -"$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  local before
  before=$(grep -c '"type":"trial"' "$db")
  [ "$before" -ge 4 ] || { fail "resume: the first run wrote $before trials before it was killed"; return; }
  grep -q '"type":"record"' "$db" && { fail "resume: the run finished before it could be killed"; return; }
  "$tuner" "${args[@]}" > "$work/resume2.log" 2>&1 || { fail "resume: the second run failed"; tail "$work/resume2.log"; return; }
  grep -q "resuming after $before trials" "$work/resume2.log" || fail "resume: the second run did not resume: $(head -3 "$work/resume2.log")"
  "$py" - "$db" <<'PY' || fail "resume: trials after the resume are not one continuous search"
import json, sys
t = [json.loads(l) for l in open(sys.argv[1])]
trials = [j for j in t if j["type"] == "trial"]
idx = sorted(j["index"] for j in trials)
assert idx == list(range(len(idx))), idx
points = [(j["source"], j["point"]) for j in trials]
assert len(points) == len(set(points)), "a point was tried twice"
assert sorted({j["generation"] for j in trials}) == [0, 1, 2], "generations"
assert sum(j["type"] == "record" for j in t) == 1, "records"
PY
}

case_shards() {
  local list=$work/problems.txt
  cat > "$list" <<'P'
# three tiny problems
dense: --op=gconv --x=1x8x9x9 --w=16x8x3x3 --pad=1
batched: --op=bwconv --x=2x1x4x7x7 --w=2x16x4x3x3
broadcast: --op=biconv --x=1x4x6x6 --w=2x8x4x1x1 --layout=batched
P
  local args=(--problems="$list" "${fast[@]}" --population=1 --generations=1 --seed=3)
  "$tuner" --db="$work/all.jsonl" --work-dir="$work/all.work" "${args[@]}" > "$work/all.log" 2>&1 || { fail "shards: unsharded run failed"; tail "$work/all.log"; return; }
  "$tuner" --db="$work/s0.jsonl" --shard=0/2 "${args[@]}" > "$work/s0.log" 2>&1 &
  local p0=$!
  SLURM_ARRAY_TASK_ID=1 "$tuner" --db="$work/s1.jsonl" --shard=auto/2 "${args[@]}" > "$work/s1.log" 2>&1
  local r1=$?
  wait $p0
  local r0=$?
  [ $r0 -eq 0 ] && [ $r1 -eq 0 ] || { fail "shards: a shard failed ($r0, $r1)"; tail "$work/s0.log" "$work/s1.log"; return; }
  grep -q "shard 1/2: 1 of 3 jobs" "$work/s1.log" || fail "shards: SLURM_ARRAY_TASK_ID was not used: $(head -2 "$work/s1.log")"
  "$tuner" merge --out="$work/merged.jsonl" "$work/s0.jsonl" "$work/s1.jsonl" > /dev/null 2>&1 || { fail "shards: merge failed"; return; }
  diff <(trials "$work/all.jsonl") <(trials "$work/merged.jsonl") || fail "shards: merged trials differ from the unsharded run"
  diff <(records "$work/all.jsonl") <(records "$work/merged.jsonl") || fail "shards: merged records differ"
  [ "$(records "$work/merged.jsonl" | wc -l)" = 3 ] || fail "shards: expected 3 records"
  "$tuner" report --db="$work/merged.jsonl" --plot="$work/plot.svg" > "$work/report.md" 2>&1 || fail "report failed: $(cat "$work/report.md")"
  grep -q "| dense | grouped_conv |" "$work/report.md" || fail "report: no row for 'dense'"
  if command -v gnuplot > /dev/null; then
    grep -q "<svg" "$work/plot.svg" || fail "report: no SVG plot"
  fi
}

case_targets() {
  local db=$work/targets.jsonl avx2=x86-64-linux-avx2-fma-f16c-sse41
  grep -q avx2 /proc/cpuinfo || { echo "skipped: no AVX2 here"; return; }
  "$tuner" --db="$db" "${problem[@]}" "${fast[@]}" --population=1 --generations=1 --targets=$avx2 \
    > "$work/targets.log" 2>&1 || { fail "targets: the tuner failed"; tail "$work/targets.log"; return; }
  "$py" - "$db" "$avx2" <<'PY' || fail "targets: records or trials not for $avx2"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert all(j["target"] == sys.argv[2] for j in lines), "a line for another target"
recs = [j for j in lines if j["type"] == "record"]
assert len(recs) == 1
# AVX2 has 16 registers: its channels default is 2 vectors wide, not AVX-512's 4.
if "family=channels" in recs[0]["default_point"]:
    assert "ch_vectors=2" in recs[0]["default_point"], recs[0]["default_point"]
PY
}

case_model() {
  local db=$work/model.jsonl
  "$tuner" --db="$db" --model="$MODEL" "${fast[@]}" --population=1 --generations=1 > "$work/model.log" 2>&1 \
    || { fail "model: the tuner failed"; tail "$work/model.log"; return; }
  local list=$db.work/model-problems.txt
  [ -f "$list" ] || { fail "model: no problem list"; return; }
  local convs
  convs=$(grep -vc '^#' "$list")
  [ "$convs" -ge 1 ] || fail "model: no conv listed"
  [ "$(records "$db" | wc -l)" = "$convs" ] || fail "model: $convs convs listed but $(records "$db" | wc -l) records"
  # The compiler finds the records it was tuned for: every conv reports a record ("tuned" or "default won").
  local compile_out
  compile_out=$("$COMPILE" "$MODEL" -o "$work" --tuning="$db" 2>&1) || { fail "model: compile --tuning failed: $compile_out"; return; }
  if grep -q "no tuning record" <<< "$compile_out"; then fail "model: a conv found no record: $compile_out"; fi
  grep -q "^  conv " <<< "$compile_out" || fail "model: compile --tuning reported no conv: $compile_out"
}

for c in "${cases[@]}"; do
  echo "== $c"
  "case_$c"
done
[ $fails -eq 0 ] && echo "all passed" || echo "$fails failure(s)"
exit $((fails > 0))
