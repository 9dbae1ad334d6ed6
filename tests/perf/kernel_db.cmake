# Included from tests/CMakeLists.txt (after fleetsim_test is defined): the measured
# kernel tables test. It reads ../shared/data in place and skips without it (fails under CI).
fleetsim_test(kernel_db_test
  SOURCES perf/kernel_db_test.cc
  LIBS fleetsim_kernel_db
  # The fit against the measured tables, run in full: seconds each.
  SLOW [[KernelDb\.(FittedModelIsWithinTwentyPercentOnEachGpu|CalibrationIsDeterministic)]]
       [[KernelDb\.ShippedDefaultsAreTheCalibratedConstants]])

# The collective model against the measured nccl-tests and vLLM all-reduce tables: the
# fit on H200 and the held-out H100 and A100 (docs/COLLECTIVES.md).
fleetsim_test(collective_tables_test
  SOURCES perf/kernel_db/collective_error_test.cc
  LIBS fleetsim_kernel_db
  SLOW [[CollectiveTables\..*]])

# The fit of an empty FlashAttention 2 tile's cost, on a synthetic table and on the
# measured LLMServingSim tables (the analytic constant and the held-out ones).
fleetsim_test(empty_tile_fit_test
  SOURCES perf/kernel_db/empty_tile_fit_test.cc
  LIBS fleetsim_kernel_db)
