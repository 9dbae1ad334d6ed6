// Writes a small bundle whose tables follow simple formulas, so that tests can compute
// every expected cost by hand. Each kernel costs `base + per_token * x` microseconds.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fleetsim::testing {

class SyntheticBundle {
 public:
  SyntheticBundle() {
    dir_ = std::filesystem::temp_directory_path() /
           ("fleetsim-bundle-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~SyntheticBundle() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  SyntheticBundle(const SyntheticBundle&) = delete;
  SyntheticBundle& operator=(const SyntheticBundle&) = delete;

  std::string dir() const { return dir_.string(); }

  void Meta(const std::string& text) { std::ofstream(dir_ / "meta.yaml") << text; }
  // Adds `line` to the end of `file` (relative to the bundle, e.g. "tp1/dense.csv").
  void Append(const std::string& file, const std::string& line) {
    std::ofstream(dir_ / file, std::ios::app) << line << '\n';
  }

  // Dense kernels: 1 + 0.01 * tokens us at tokens 1, 1024, 8192 (or at `tokens`, appended
  // to the kernels written before when `tokens` is given).
  void Dense(int tp, const std::vector<std::string>& kernels, const std::vector<int>& tokens = {}) {
    const bool append = !tokens.empty();
    std::ofstream out(Tp(tp) / "dense.csv", append ? std::ios::app : std::ios::trunc);
    if (!append) out << "layer,tokens,time_us\n";
    for (const std::string& k : kernels) {
      for (int t : append ? tokens : std::vector<int>{1, 1024, 8192})
        out << k << ',' << t << ',' << 1 + 0.01 * t << '\n';
    }
  }
  // lm_head and sampler: 5 + 0.5 * sequences us.
  void PerSequence(int tp) {
    std::ofstream out(Tp(tp) / "per_sequence.csv");
    out << "layer,sequences,time_us\n";
    for (const char* k : {"lm_head", "sampler"}) {
      for (int s : {1, 256})
        out << k << ',' << s << ',' << 5 + 0.5 * s << '\n';
    }
  }
  // Legacy attention: prefill 0.01 * chunk + 0.001 * kv_prefill; decode 0.1 * n +
  // 0.0001 * n * kv; mixed the sum.
  void Attention(int tp) {
    std::ofstream out(Tp(tp) / "attention.csv");
    out << "prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n";
    const int chunks[] = {0, 16, 8192}, kvs[] = {0, 16, 65536}, ns[] = {0, 1, 1024};
    for (int c : chunks) {
      for (int kp : kvs) {
        for (int n : ns) {
          for (int kd : kvs) {
            if ((c == 0 && kp != 0) || (n == 0 && kd != 0) || (c == 0 && n == 0)) continue;
            if (n > 0 && kd == 0) continue;
            out << c << ',' << kp << ',' << n << ',' << kd << ','
                << PrefillUs(c, kp) + DecodeUs(n, kd) << '\n';
          }
        }
      }
    }
  }
  static double PrefillUs(double chunk, double kv) {
    return chunk == 0 ? 0 : 0.01 * chunk + 0.001 * kv;
  }
  static double DecodeUs(double n, double kv) { return n == 0 ? 0 : 0.1 * n + 0.0001 * n * kv; }

  // GDN regime kernels: gdn_prefill costs 10 us per started 64-token scan chunk (rows at
  // 1, 64, 65, 128, 8192 tokens); gdn_decode 2 + 0.1 * n; gdn_decode_mixed only mixed.
  void LinearAttention(int tp) {
    std::ofstream out(Tp(tp) / "linear_attention.csv");
    out << "layer,prefill_tokens,n_decode,time_us\n";
    for (int t : {1, 64, 65, 128, 8192})
      out << "gdn_prefill," << t << ",0," << 10 * ((t + 63) / 64) << '\n';
    for (int t : {1, 64, 65, 128, 8192}) {
      for (int n : {1, 1024})
        out << "gdn_prefill," << t << ',' << n << ',' << 10 * ((t + 63) / 64) << '\n';
    }
    for (int n : {1, 1024})
      out << "gdn_decode,0," << n << ',' << 2 + 0.1 * n << '\n';
    for (int t : {1, 8192}) {
      for (int n : {1, 1024})
        out << "gdn_decode_mixed," << t << ',' << n << ",7\n";
    }
  }

 private:
  std::filesystem::path Tp(int tp) {
    std::filesystem::path p = dir_ / ("tp" + std::to_string(tp));
    std::filesystem::create_directories(p);
    return p;
  }
  std::filesystem::path dir_;
};

// A complete bundle for the 27B hybrid at the given TP degrees (with its MTP module's fc).
inline void WriteHybridBundle(SyntheticBundle& bundle, std::vector<int> tps) {
  bundle.Meta(
      "model: qwen3.8-27b\nhardware: H200-SXM\nsource: {kind: analytic}\nengine_resolved:\n"
      "  per_tp:\n    1: {block_size: 784}\n    2: {block_size: 784}\n");
  for (int tp : tps) {
    bundle.Dense(tp, {"embedding", "final_layernorm", "layernorm", "qkv_proj", "qk_norm",
                      "rotary_emb", "o_proj", "gdn_in_proj", "gdn_glue", "gdn_norm", "gdn_out_proj",
                      "gate_up_proj", "act_fn", "down_proj", "mtp_fc"});
    bundle.PerSequence(tp);
    bundle.Attention(tp);
    bundle.LinearAttention(tp);
  }
}

// The same kernels for a dense model (no engine_resolved: the block size is the card's).
inline void WriteDenseBundle(SyntheticBundle& bundle) {
  bundle.Meta("model: llama-3.1-8b\nhardware: H100-SXM\nsource: {kind: analytic}\n");
  bundle.Dense(1, {"embedding", "final_layernorm", "layernorm", "qkv_proj", "rotary_emb", "o_proj",
                   "gate_up_proj", "act_fn", "down_proj"});
  bundle.PerSequence(1);
  bundle.Attention(1);
}

}  // namespace fleetsim::testing
