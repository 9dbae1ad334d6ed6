// How long one memory read takes when the next address depends on it (a pointer chase
// through one cycle over every 64-byte line of a buffer), with 4 KiB pages and with
// transparent huge pages asked for (madvise): the latency fleetsim's cache misses pay on
// this machine (bench/RESULTS.md, "What the day's remaining time is made of").
//
//   g++ -O2 -std=c++20 bench/probes/memory_latency.cc -o /tmp/memory_latency
//   /tmp/memory_latency 16 256 1024     # MiB per buffer; prints ns per read for each
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sys/mman.h>
#include <utility>

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kLine = 64;
constexpr int kReads = 3'000'000;

double NanosecondsPerRead(std::size_t mib, bool huge) {
  const std::size_t bytes = mib << 20;
  const std::size_t lines = bytes / kLine;
  void* mapped =
      mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  // 2 MiB-aligned, so that every huge page the kernel may use lies inside the buffer.
  auto* base = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(mapped) + kHugePage - 1) & ~(kHugePage - 1));
  madvise(base, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  const auto next = [&](std::size_t line) -> uint32_t& {
    return *reinterpret_cast<uint32_t*>(base + line * kLine);
  };
  // Sattolo's shuffle: one cycle through every line, so no read is served by a short loop
  // that stays in cache.
  for (std::size_t i = 0; i < lines; ++i)
    next(i) = static_cast<uint32_t>(i);
  std::mt19937_64 rng(1);
  for (std::size_t i = lines - 1; i > 0; --i)
    std::swap(next(i), next(rng() % i));
  const auto start = std::chrono::steady_clock::now();
  uint32_t at = 0;
  for (int i = 0; i < kReads; ++i)
    at = next(at);
  const auto end = std::chrono::steady_clock::now();
  munmap(mapped, bytes + kHugePage);
  if (at == UINT32_MAX) std::puts("");  // keeps the chase
  return std::chrono::duration<double, std::nano>(end - start).count() / kReads;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MIB [MIB...]\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    const auto mib = static_cast<std::size_t>(std::atol(argv[i]));
    if (mib == 0 || (mib << 20) / kLine > UINT32_MAX) {
      std::fprintf(stderr, "memory_latency: MIB must be 1 to 262143\n");
      return 2;
    }
    const double small_pages = NanosecondsPerRead(mib, false);
    const double huge_pages = NanosecondsPerRead(mib, true);
    std::printf("%zu MiB: %.1f ns per read (4 KiB pages), %.1f ns (huge pages asked for)\n", mib,
                small_pages, huge_pages);
  }
}
