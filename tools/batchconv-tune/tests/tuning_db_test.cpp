// The tuning database: every field survives a write and a read, the last
// record of a key wins, a corrupt line is an error naming FILE:LINE, and a
// record made on another machine or for another target is refused unless
// forced.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "tuning_db.h"

namespace batchconv_tune {
namespace {

std::string temp_path(const char* name) {
  return std::string(::testing::TempDir()) + "/" + name + "." + std::to_string(getpid()) + ".jsonl";
}

Key key(const std::string& shape, const std::string& machine = "cpu A", const std::string& target = "t1") {
  return Key{"grouped_conv", shape, target, machine, "14.0.0", "0.1.0"};
}

Record record(const Key& k, double ms) {
  Record r;
  r.key = k;
  r.generator = "grouped_conv";
  r.family = "channels";
  r.point = "family=channels,ch_vectors=2,ch_columns=6";
  r.source = "search";
  r.time_ms = ms;
  r.default_ms = 2 * ms;
  r.default_point = "family=channels";
  r.baselines_ms = {{"Adams2019", 3.5}, {"Li2018", 9.25}};
  r.trials = 17;
  r.tuning_s = 601.5;
  r.seed = 42;
  r.label = "W2 G=1";
  r.peer = "onednn:direct";
  r.peer_ms = 1.25;
  return r;
}

TEST(TuningDb, RoundTripKeepsEveryField) {
  const std::string path = temp_path("roundtrip");
  std::remove(path.c_str());
  Trial t;
  t.key = key("b=1 n=2");
  t.index = 3;
  t.generation = 1;
  t.source = "search";
  t.point = "family=rows,row_rows=2";
  t.status = "ok";
  t.time_ms = 1.5;
  t.default_ms = 2.5;
  t.ratio = 0.6;
  t.compile_s = 3.25;
  t.elapsed_s = 40;
  t.message = "line \"quoted\"\nsecond";
  append_line(path, to_json_line(t));
  Trial bad = t;
  bad.index = 4;
  bad.status = "crash";
  bad.message = "killed by signal 11";
  append_line(path, to_json_line(bad));
  const Record r = record(t.key, 1.5);
  append_line(path, to_json_line(r));

  const Database db = read_db(path);
  ASSERT_EQ(db.trials.size(), 2u);
  const Trial& u = db.trials[0];
  EXPECT_TRUE(u.key == t.key);
  EXPECT_EQ(u.index, 3);
  EXPECT_EQ(u.generation, 1);
  EXPECT_EQ(u.point, t.point);
  EXPECT_EQ(u.status, "ok");
  EXPECT_DOUBLE_EQ(u.time_ms, 1.5);
  EXPECT_DOUBLE_EQ(u.ratio, 0.6);
  EXPECT_DOUBLE_EQ(u.elapsed_s, 40);
  EXPECT_EQ(u.message, t.message);
  EXPECT_EQ(db.trials[1].status, "crash");
  ASSERT_EQ(db.records.size(), 1u);
  const Record& s = db.records[0];
  EXPECT_EQ(to_json_line(s), to_json_line(r));
  EXPECT_EQ(s.baselines_ms.at("Li2018"), 9.25);
  EXPECT_EQ(s.peer, "onednn:direct");
  EXPECT_EQ(db.trials_of(t.key).size(), 2u);
  ASSERT_NE(db.find(t.key), nullptr);
  EXPECT_EQ(db.find(key("b=1 n=3")), nullptr);
  std::remove(path.c_str());
}

TEST(TuningDb, LastRecordOfAKeyWinsAndWriteSorts) {
  const std::string path = temp_path("last");
  std::remove(path.c_str());
  append_line(path, to_json_line(record(key("b=2"), 5)));
  append_line(path, to_json_line(record(key("b=1"), 4)));
  append_line(path, to_json_line(record(key("b=2"), 3)));
  Database db = read_db(path);
  ASSERT_EQ(db.records.size(), 2u);
  EXPECT_DOUBLE_EQ(db.find(key("b=2"))->time_ms, 3);
  write_db(path, db);
  const Database again = read_db(path);
  ASSERT_EQ(again.records.size(), 2u);
  EXPECT_EQ(again.records[0].key.shape, "b=1");  // sorted by key
  std::remove(path.c_str());
}

TEST(TuningDb, CorruptLinesNameTheLine) {
  const std::string path = temp_path("corrupt");
  auto error_of = [&](const std::string& third_line) {
    {
      std::ofstream f(path, std::ios::trunc);
      f << to_json_line(record(key("b=1"), 1)) << "\n\n" << third_line << "\n";
    }
    try {
      read_db(path);
    } catch (const DbError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("{\"type\":\"record\",\"op\":").find(path + ":3: not a JSON object"), std::string::npos);
  EXPECT_NE(error_of("[1,2]").find(path + ":3: not a JSON object"), std::string::npos);
  EXPECT_NE(error_of("{\"type\":\"cake\"}").find(path + ":3: unknown type \"cake\""), std::string::npos);
  std::string no_shape = to_json_line(record(key("b=1"), 1));
  no_shape.replace(no_shape.find("\"shape\""), 7, "\"shapes\"");
  EXPECT_NE(error_of(no_shape).find(path + ":3: missing field \"shape\""), std::string::npos);
  std::string bad_ms = to_json_line(record(key("b=1"), 1));
  const size_t at = bad_ms.find("\"time_ms\":");
  bad_ms.replace(at, bad_ms.find(',', at) - at, "\"time_ms\":\"x\"");
  EXPECT_NE(error_of(bad_ms).find(path + ":3: field \"time_ms\" is not a number"), std::string::npos);
  std::remove(path.c_str());
  EXPECT_TRUE(read_db(path).records.empty());  // a missing file is an empty database
}

TEST(TuningDb, OtherMachinesAndTargetsAreRefusedUnlessForced) {
  Database db;
  db.records.push_back(record(key("b=1", "cpu A", "t1"), 1));
  EXPECT_NE(lookup(db, "grouped_conv", "b=1", "t1", "cpu A", false), nullptr);
  EXPECT_EQ(lookup(db, "grouped_conv", "b=9", "t1", "cpu A", false), nullptr);
  try {
    lookup(db, "grouped_conv", "b=1", "t1", "cpu B", false);
    ADD_FAILURE() << "another machine's record was used";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("tuned on \"cpu A\", this machine is \"cpu B\""), std::string::npos)
        << e.what();
  }
  try {
    lookup(db, "grouped_conv", "b=1", "t2", "cpu A", false);
    ADD_FAILURE() << "another target's record was used";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("tuned for target t1, not t2"), std::string::npos) << e.what();
  }
  EXPECT_NE(lookup(db, "grouped_conv", "b=1", "t2", "cpu B", true), nullptr);
}

}  // namespace
}  // namespace batchconv_tune
