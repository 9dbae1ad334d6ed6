// How long a thread sleeping in a futex (std::atomic::wait) takes to run again after
// another thread wakes it (notify_one): the price a thread pool pays when its workers
// sleep between two parallel loops (bench/RESULTS.md, "--threads 2 on this VM").
//
//   g++ -O2 -std=c++20 -pthread bench/probes/wake_latency.cc -o /tmp/wake_latency
//   /tmp/wake_latency          # prints the mean over 2,000 wakes
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

int main() {
  using Clock = std::chrono::steady_clock;
  constexpr int kWakes = 2000;
  std::atomic<int> generation{0};
  std::atomic<int> woken{0};
  std::atomic<Clock::rep> sent{0};
  std::atomic<long long> total_ns{0};
  std::thread sleeper([&] {
    int seen = 0;
    for (int i = 0; i < kWakes; ++i) {
      generation.wait(seen);  // sleeps: the waker gives it time to get there first
      seen = generation.load();
      const Clock::rep now = Clock::now().time_since_epoch().count();
      total_ns +=
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::duration(now - sent.load()))
              .count();
      woken.fetch_add(1);
    }
  });
  for (int i = 0; i < kWakes; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    const int before = woken.load();
    sent = Clock::now().time_since_epoch().count();
    generation.fetch_add(1);
    generation.notify_one();
    while (woken.load() == before) {
    }
  }
  sleeper.join();
  std::printf("mean wake latency over %d wakes: %.1f us\n", kWakes,
              static_cast<double>(total_ns.load()) / kWakes / 1000.0);
}
