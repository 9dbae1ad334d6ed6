// What NVIDIA's nccl-tests print (`all_reduce_perf -b 1K -e 256M -f 2 -g 8 > out.txt`), read
// as measured collectives (measured_collectives.h), so `fleetsim bundle compare-collectives
// --nccl-tests out.txt --op all_reduce --hardware H` can hold the collective model against
// a user's own node. The tool's output:
//
//   # nccl-tests version 2.13.11 nccl-headers=22304 nccl-library=22304
//   # nThread 1 nGpus 8 minBytes 1024 maxBytes 268435456 step: 2(factor) ...
//   #  Rank  0 Group  0 Pid 4242 on node0 device  0 [0x18] NVIDIA H100 80GB HBM3
//   ...
//   #       size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong
//          1024    256  float   sum     -1  10.2   0.10   0.18       0  10.1   0.10   0.18      0
//
// One "# Rank" line per GPU gives the group size; a result row's out-of-place time (us) is
// the measurement, its size the bytes as nccl-tests counts them (what the model takes).
// Rows of 0 bytes are skipped. The output does not name its collective, so the caller
// does; a reduction's rows carry a reduction operator (sum, prod, ...) and the others
// "none", which is checked. Older versions without the root column are read too.
#pragma once

#include <string>

#include "perf/kernel_db/measured_collectives.h"

namespace fleetsim {

// `operation`: all_reduce, all_gather, reduce_scatter, alltoall, broadcast or reduce. Bad
// input (no such file, no result rows, a row that does not parse, an operator that does
// not fit the operation, a second group size) is an InputError naming the file and line.
MeasuredCollectives LoadNcclTestsOutput(const std::string& path, const std::string& operation);

}  // namespace fleetsim
