// The files of a checkpoint directory (docs/CHECKPOINT.md): one file per rank with that
// rank's entities, each under its global id, and a manifest written last that names
// them with their sizes and checksums, the run's counters, and what the run was.
//
//   DIR/manifest                      text, "key value" lines (below)
//   DIR/ckpt-<sequence>-rank-<r>.bin  records: kind, global id, length-prefixed bytes
//
// Every file is written to `<name>.tmp` and renamed into place; the manifest is renamed
// last, so a run killed at any moment leaves the previous checkpoint whole (its files are
// removed only after the new manifest is in place). Reading checks the manifest's format
// and each rank file's size and checksum before a byte of it is parsed: a missing,
// truncated or corrupt checkpoint is one located InputError.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/sim_time.h"

namespace fleetsim {

// Bumped whenever any part's Save changes what it writes, or what its Load may assume.
inline constexpr int kCheckpointFormat = 16;

// What a rank file's record holds.
enum class CheckpointRecord : uint64_t {
  kInstance = 1,
  kGateway = 2,
  kLedger = 3,
  kTimeseries = 4
};

struct CheckpointRankFile {
  uint64_t bytes = 0;
  uint64_t checksum = 0;  // HashBytes of the whole file
};

struct CheckpointManifest {
  int format = kCheckpointFormat;
  std::string build;    // the fleetsim version that wrote it
  uint64_t inputs = 0;  // the run's inputs fingerprint (app/run_job.cc)
  int64_t sequence = 0;
  int ranks = 0;
  // The fleet loop's state at the window boundary, and its counters summed over the ranks.
  SimTime window_end = 0;
  int64_t snapshot_epoch = -1;
  SimTime last_decision = -1;
  int64_t decisions = 0;
  int64_t windows = 0;
  int64_t snapshots = 0;
  int64_t out_of_grid = 0;
  int64_t workload_taken = 0;  // requests the reader had handed on
  SimTime next_checkpoint = 0;
  std::vector<CheckpointRankFile> files;  // by rank
  std::string command_line;               // of the run that began it
};

std::string CheckpointManifestPath(const std::string& dir);
std::string CheckpointRankPath(const std::string& dir, int64_t sequence, int rank);

// Writes `text` to `path` atomically (a .tmp beside it, renamed); an InputError naming
// `path` when it cannot.
void WriteFileAtomically(const std::string& path, std::string_view text);
// The manifest's text form, and the manifest read back (InputError: missing, unreadable,
// another format, a bad or missing key -- located by line).
std::string ManifestText(const CheckpointManifest& manifest);
CheckpointManifest ReadCheckpointManifest(const std::string& dir);
// Rank file `rank` of the checkpoint, checked against its manifest entry.
std::string ReadCheckpointRankFile(const std::string& dir, const CheckpointManifest& manifest,
                                   int rank);
// Removes the rank files of every other sequence than `keep` (older checkpoints).
void RemoveOtherCheckpoints(const std::string& dir, int64_t keep);

}  // namespace fleetsim
