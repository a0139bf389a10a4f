// What a tuning database says, for people: a Markdown table (one row per
// record: default, tuned, the autoschedulers, oneDNN, trials, time) and a
// plot of the best time so far against trials (SVG, drawn by gnuplot from
// Debian's gnuplot-nox).
#pragma once

#include <string>

#include "tuning_db.h"

namespace batchconv_tune {

std::string markdown_report(const Database& db);

// Writes the plot to `svg_path`; throws std::runtime_error when gnuplot is
// missing or fails (naming it).
void plot_best_so_far(const Database& db, const std::string& svg_path);

// Merges databases (trials deduplicated by key and index, the last record of
// a key wins) into one, sorted: what shards' outputs become.
Database merge_dbs(const std::vector<Database>& dbs);

}  // namespace batchconv_tune
