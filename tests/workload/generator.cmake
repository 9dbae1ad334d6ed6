# Included from tests/CMakeLists.txt (after fleetsim_test is defined): the seeded workload
# generator (sim/workload/generator*.cc and length_sample.cc, built into fleetsim_workload).
fleetsim_test(generator_test
  SOURCES workload/generator_test.cc workload/length_sample_test.cc
  LIBS fleetsim_workload)
