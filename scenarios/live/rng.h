// The seeded generator of the lab's background profiles (profile.h, large_profile.h).
//
//   Rng rng(seed);
//   int n = rng.Between(4, 6);          // each of 4, 5, 6 equally likely
//   const std::string& who = rng.Pick(names);
//
// splitmix64 (Steele, Lea, Flood 2014): its output is fixed by its definition, so that a seed gives
// the same trace with every standard library (never std::uniform_*_distribution).
#ifndef SLURM_RCA_SCENARIOS_LIVE_RNG_H_
#define SLURM_RCA_SCENARIOS_LIVE_RNG_H_

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace slurm_rca::live {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // An integer in [lo, hi], each equally likely (rejection of the last partial span).
  int Between(int lo, int hi) {
    const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t limit = max - (max % span + 1) % span;
    std::uint64_t x = Next();
    while (x > limit) x = Next();
    return lo + static_cast<int>(x % span);
  }

  bool Chance(int percent) { return Between(1, 100) <= percent; }

  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Between(0, static_cast<int>(v.size()) - 1))];
  }

  // Fisher-Yates, with Between().
  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (int i = static_cast<int>(v.size()) - 1; i > 0; --i) {
      std::swap(v[static_cast<size_t>(i)], v[static_cast<size_t>(Between(0, i))]);
    }
  }

 private:
  std::uint64_t state_;
};

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_RNG_H_
