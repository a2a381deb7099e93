// plan_plots() and render_plots() (report_plots.h): one function per plot turns the inputs into a
// data file and a gnuplot script; render_plots() writes them and runs gnuplot. Labels that come
// from the data (implementation ids, shapes, case names) go through gp_label(), never raw.
#include "reports/plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include "bench/format/shapes.h"
#include "reports/bench_tables.h"
#include "reports/gnuplot.h"
#include "core/errors.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;

// Distinguishable on white and for the common colour-vision deficiencies (Tableau 10, with the
// yellow darkened so that a thin line on white is still seen, then indigo and olive).
constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                   "#e377c2", "#7f7f7f", "#b5b520", "#17becf", "#393b79", "#8c6d31"};

std::string num(double x) { return fmt::format("{:.6g}", x); }

// One colour per implementation in every plot, in the order the registry lists them (which is
// the order of accuracy.json's curves and of bench.json's cases).
class Palette {
 public:
  explicit Palette(const ReportInputs& inputs) {
    if (inputs.accuracy) {
      for (const auto& c : inputs.accuracy->error_vs_position) add(c.implementation);
    }
    if (inputs.bench) {
      for (const CaseRecord& c : inputs.bench->records) {
        if (c.rope) add(c.rope->impl);
      }
    }
  }
  std::string color(const std::string& impl) const {
    const auto it = std::find(order_.begin(), order_.end(), impl);
    const auto index = static_cast<std::size_t>(it - order_.begin());
    return kColors[index % std::size(kColors)];
  }
  // A second lap through the colours gets a dash pattern, so that 11 implementations stay apart.
  int dash(const std::string& impl) const {
    const auto it = std::find(order_.begin(), order_.end(), impl);
    return static_cast<std::size_t>(it - order_.begin()) < std::size(kColors) ? 1 : 4;
  }

 private:
  void add(const std::string& impl) {
    if (std::find(order_.begin(), order_.end(), impl) == order_.end()) order_.push_back(impl);
  }
  std::vector<std::string> order_;
};

// Labelled tics 1, 2, 5, 10, 20, ... spanning [low, high] on a log axis: gnuplot's own log tics
// label only the decades, which leaves a one-decade axis with two numbers.
std::string log_tics_125(double low, double high) {
  std::string tics;
  for (double decade = std::pow(10.0, std::floor(std::log10(low))); decade <= high; decade *= 10) {
    for (const double m : {1.0, 2.0, 5.0}) {
      const double t = m * decade;
      if (t >= low * 0.999 && t <= high * 1.001) tics += (tics.empty() ? "" : ", ") + num(t);
    }
  }
  return "(" + tics + ")";
}

void append_unique(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// (a) GB/s against tokens for the 32 x 128 (Llama 7B) shapes: decode, prefill 512, prefill 4096.
std::optional<PlotSpec> throughput_plot(const BenchData& bench, const Palette& palette) {
  // The shapes of this plot, by name; their token counts come from bench/format/shapes.h.
  constexpr const char* kShapes[] = {"llama7b_decode_at4095", "llama7b_prefill512", "llama7b_prefill4096"};
  std::map<std::string, int> tokens_of;
  for (const char* shape : kShapes) {
    if (const auto* s = bench::find_rope_shape(shape)) tokens_of[shape] = static_cast<int>(s->tokens);
  }
  std::vector<std::string> impls;
  std::map<std::string, std::map<int, double>> rate;
  std::map<int, std::vector<double>> probe;
  for (const CaseRecord& c : bench.records) {
    const auto& rope = c.rope;
    if (!rope || rope->layout != "interleaved" || rope->threads != 1) continue;
    const auto tokens = tokens_of.find(rope->shape);
    if (tokens == tokens_of.end()) continue;
    const CaseRate& r = c.rate;
    if (r.unit != "GB/s" || !r.rate) continue;
    append_unique(impls, rope->impl);
    rate[rope->impl][tokens->second] = *r.rate;
    if (r.probe_rate) probe[tokens->second].push_back(*r.probe_rate);
  }
  if (impls.empty()) return std::nullopt;
  double low = 1e300, high = 0;
  for (const auto& [impl, by_tokens] : rate) {
    for (const auto& [t, gbs] : by_tokens) low = std::min(low, gbs), high = std::max(high, gbs);
  }
  for (const auto& [t, rates] : probe) high = std::max(high, median(rates));
  low /= 1.5;
  high *= 1.5;
  PlotSpec p;
  p.id = kPlotThroughput;
  p.title = "RoPE throughput vs tokens (Llama-7B heads, 32 x 128, interleaved, 1 thread)";
  p.caption =
      "Median GB/s of q and k read and written per implementation, with the same-run in-place "
      "streaming probe (dashed) as the machine's limit: the SIMD kernels should sit near or above "
      "the probe line, the scalar references far below it.";
  std::ostringstream data, plot;
  data << "# tokens  GB/s (median over repetitions); GB = 1e9 bytes\n";
  int index = 0;
  for (const auto& impl : impls) {
    data << "# [" << index << "] " << impl << '\n';
    for (const auto& [t, gbs] : rate[impl]) data << t << ' ' << num(gbs) << '\n';
    data << "\n\n";
    plot << (index == 0 ? "plot " : ", \\\n     ")
         << fmt::format("'{}.dat' index {} using 1:2 with linespoints lw 2 dt {} pt 7 ps 0.8 "
                        "lc rgb '{}' title {}",
                        p.id, index, palette.dash(impl), palette.color(impl), gp_label(impl));
    ++index;
  }
  if (!probe.empty()) {
    data << "# [" << index << "] same-run probe: median probe_rate over the cases of each shape\n";
    for (const auto& [t, rates] : probe) data << t << ' ' << num(median(rates)) << '\n';
    plot << fmt::format(", \\\n     '{}.dat' index {} using 1:2 with linespoints lw 2.5 dt 2 pt 6 "
                        "ps 1 lc rgb '#222222' title 'same-run probe (in-place x *= s)'",
                        p.id, index);
  }
  p.data = data.str();
  p.script = fmt::format(R"(set title {}
set xlabel 'tokens per call (1 = decode at position 4095; log scale)'
set ylabel 'throughput (GB/s, median; log scale)'
set logscale xy
set xrange [0.6:7000]
set yrange [{}:{}]
set xtics ('1 (decode)' 1, '512' 512, '4096' 4096)
set ytics {}
set key outside right top
{}
)",
                         gp_label(p.title), num(low), num(high), log_tics_125(low, high), plot.str());
  return p;
}

// (b) limit_fraction median per implementation (rows) and shape (columns): a heat map with values.
std::optional<PlotSpec> limit_fraction_plot(const BenchData& bench) {
  std::vector<std::string> impls, shapes;
  std::map<std::pair<std::string, std::string>, double> cell;
  for (const CaseRecord& c : bench.records) {
    const auto& rope = c.rope;
    if (!rope || rope->layout != "interleaved" || rope->threads != 1) continue;
    const CaseRate& r = c.rate;
    if (!r.limit_fraction) continue;
    append_unique(impls, rope->impl);
    append_unique(shapes, rope->shape);
    cell[{rope->impl, rope->shape}] = *r.limit_fraction;
  }
  if (cell.empty()) return std::nullopt;
  PlotSpec p;
  p.id = kPlotLimitFraction;
  p.title = "RoPE: fraction of the same-run limit (median; interleaved, 1 thread)";
  p.caption =
      "Each cell is the case's throughput over its same-run streaming probe (1.00: as fast as a "
      "plain in-place pass over the same bytes); blue is above the limit (cache-resident data), "
      "red well below it; empty cells were not benchmarked.";
  p.width = std::max(900, 260 + 110 * static_cast<int>(shapes.size()));
  p.height = std::max(320, 190 + 34 * static_cast<int>(impls.size()));
  std::ostringstream data, xtics, ytics;
  data << "# shape_index impl_index limit_fraction_median  (shape, implementation)\n";
  for (std::size_t i = 0; i < impls.size(); ++i) {
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      const auto it = cell.find({impls[i], shapes[s]});
      if (it == cell.end()) continue;
      data << s << ' ' << i << ' ' << num(it->second) << "  # " << shapes[s] << ", " << impls[i] << '\n';
    }
    ytics << (i == 0 ? "" : ", ") << gp_label(impls[i]) << ' ' << i;
  }
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    xtics << (s == 0 ? "" : ", ") << gp_label(shapes[s]) << ' ' << s;
  }
  p.data = data.str();
  p.script = fmt::format(R"(set title {}
set xlabel 'shape (model, tokens, position)'
set ylabel 'implementation'
set xrange [-0.5:{}]
set yrange [{}:-0.5]
set xtics ({}) rotate by 20 right scale 0
set ytics ({}) scale 0
set grid noxtics noytics
set border 0
set cbrange [0:2]
set cblabel 'limit\_fraction (1 = same-run limit; clamped at 2)'
set palette defined (0 '#d6604d', 0.5 '#f4a582', 1 '#f7f7f7', 1.5 '#92c5de', 2 '#4393c3')
set cbtics 0.5
set key off
plot '{}.dat' using 1:2:(0.48):(0.48):($3 > 2 ? 2 : $3) with boxxyerror fs solid 1.0 noborder lc palette notitle, \
     '' using 1:2:(sprintf($3 < 0.1 ? '%.3f' : '%.2f', $3)) with labels font 'sans,10' notitle
)",
                         gp_label(p.title), num(static_cast<double>(shapes.size()) - 0.5),
                         num(static_cast<double>(impls.size()) - 0.5), xtics.str(), ytics.str(), p.id);
  return p;
}

// (c) attention GFLOP/s against T per (head_dim, BLAS threads), with the sgemm probe dashed.
std::optional<PlotSpec> attention_plot(const BenchData& bench) {
  struct Point {
    long tokens;
    double gflops;
    std::optional<double> probe;
  };
  // (implementation, head_dim, threads): attention_blas and each attention peer, its own lines
  std::map<std::tuple<std::string, int, int>, std::vector<Point>> groups;
  for (const CaseRecord& c : bench.records) {
    const auto& a = c.attention;
    // attention alone here, one kv head a q head (a GQA problem is a single point)
    if (!a || a->rope != bench::AttentionRope::none || a->kv() != a->heads) continue;
    const CaseRate& r = c.rate;
    if (r.unit != "GFLOP/s" || !r.rate) continue;
    groups[{a->impl(), a->head_dim, a->blas_threads}].push_back({a->tokens, *r.rate, r.probe_rate});
  }
  if (groups.empty()) return std::nullopt;
  long shortest = groups.begin()->second.front().tokens, longest = shortest;
  for (const auto& [key, points] : groups) {
    for (const auto& pt : points) shortest = std::min(shortest, pt.tokens), longest = std::max(longest, pt.tokens);
  }
  std::string xtics;  // the powers of two in range: gnuplot's log tics would start at the edge
  for (long t = 1; t <= longest; t *= 2) {
    if (t >= shortest) xtics += (xtics.empty() ? "(" : ", ") + std::to_string(t);
  }
  xtics += ")";
  PlotSpec p;
  p.id = kPlotAttention;
  p.title = "Causal attention (8 heads: attention_blas and the peers) vs the sgemm probe";
  p.caption =
      "Median GFLOP/s of attention (causal half of the T x T products counted; solid) and of the "
      "same-run sgemm T x T x d probe (dashed, same colour): the gap is softmax, masking and the "
      "causal half left unexploited by plain sgemm. An attention peer (plugin/..., llama.cpp's "
      "flash attention) has lines of its own, its threads its own.";
  std::ostringstream data, plot;
  data << "# tokens  attention_GFLOP/s  sgemm_probe_GFLOP/s (medians)\n";
  int index = 0;
  for (auto& [key, points] : groups) {
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.tokens < b.tokens; });
    const auto& [impl, head_dim, threads] = key;
    const std::string color = kColors[static_cast<std::size_t>(index) % std::size(kColors)];
    data << "# [" << index << "] " << impl << ", head_dim " << head_dim << ", " << threads << " thread(s)\n";
    for (const auto& pt : points) {
      data << pt.tokens << ' ' << num(pt.gflops) << ' ' << (pt.probe ? num(*pt.probe) : "NaN") << '\n';
    }
    data << "\n\n";
    const std::string what = fmt::format("d = {}, {} thread{}", head_dim, threads, threads == 1 ? "" : "s");
    const bool own = impl == "attention_blas";
    plot << (index == 0 ? "plot " : ", \\\n     ")
         << fmt::format("'{0}.dat' index {1} using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '{2}' title {3}",
                        p.id, index, color, gp_label(fmt::format("{}, {}", own ? "attention" : impl, what)));
    // A peer's probe is the same sgemm on the same machine: drawn once, with attention_blas's.
    if (own) {
      plot << fmt::format(", \\\n     '{0}.dat' index {1} using 1:3 with linespoints lw 1.5 dt 2 pt 6 ps 0.8 "
                          "lc rgb '{2}' title {3}",
                          p.id, index, color, gp_label("sgemm probe, " + what));
    }
    ++index;
  }
  p.data = data.str();
  p.script = fmt::format(R"(set title {}
set xlabel 'sequence length T (tokens; log scale)'
set ylabel 'GFLOP/s (median; GFLOP = 1e9 flop)'
set logscale x 2
set xrange [{}:{}]
set xtics {}
set yrange [0:*]
set key outside right top
{}
)",
                         gp_label(p.title), num(static_cast<double>(shortest) / 1.4),
                         num(static_cast<double>(longest) * 1.4), xtics, plot.str());
  return p;
}

// (d) worst error against position; curves that coincide exactly share one line and one legend
// entry (the three fp32 references perform the same roundings in the same order). Colours go by
// line, not by implementation: with every storage and angle formation there are more
// implementations than colours, but few enough distinct lines for each to get its own.
std::optional<PlotSpec> error_plot(const AccuracyData& accuracy) {
  struct Line {
    std::vector<std::string> impls;
    const ErrorCurve* curve;
  };
  std::vector<Line> lines;
  for (const auto& c : accuracy.error_vs_position) {
    const auto same = std::find_if(lines.begin(), lines.end(), [&](const Line& l) {
      const auto& o = *l.curve;
      if (o.angles != c.angles || o.storage != c.storage || o.points.size() != c.points.size()) return false;
      for (std::size_t i = 0; i < c.points.size(); ++i) {
        if (o.points[i].log2_position != c.points[i].log2_position ||
            o.points[i].worst_error != c.points[i].worst_error)
          return false;
      }
      return true;
    });
    if (same != lines.end()) {
      same->impls.push_back(c.implementation);
    } else {
      lines.push_back({{c.implementation}, &c});
    }
  }
  if (lines.empty()) return std::nullopt;
  PlotSpec p;
  p.id = kPlotErrorVsPosition;
  p.title = "Worst RoPE error against the float64 oracle vs position (4 heads x 128, base 10000)";
  p.caption =
      "Angles formed in double (solid) stay flat near the accurate-angle bound of 2 units at every "
      "position; angles formed in fp32 (dashed) grow with |m theta| as the tolerance model says; "
      "bf16 and fp16 storage sit at their own rounding level, under which fp32 angles' error hides "
      "until it outgrows it.";
  p.width = 1000;
  p.height = 560;
  std::ostringstream data, plot;
  data << "# log2(position)  worst_error (eps32*|pair|)  worst_ratio (of its own bound)\n";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& c = *lines[i].curve;
    std::string names;
    for (const auto& impl : lines[i].impls) names += (names.empty() ? "" : " = ") + impl;
    data << "# [" << i << "] " << names << ", angles " << c.angles << ", storage " << c.storage << '\n';
    for (const auto& pt : c.points) {
      // A log axis has no place for an exact zero; such points are left out of the line.
      if (pt.worst_error > 0) data << pt.log2_position << ' ' << num(pt.worst_error) << ' ' << num(pt.worst_ratio) << '\n';
    }
    data << "\n\n";
    const bool fp32 = c.angles == "fp32";
    std::string title = names + (fp32 ? ", fp32 angles" : ", fp64 angles");
    if (c.storage != "fp32") title += ", " + c.storage + " storage";
    plot << (i == 0 ? "plot " : ", \\\n     ")
         << fmt::format("'{}.dat' index {} using 1:2 with linespoints lw 2 dt {} pt {} ps 0.7 "
                        "lc rgb '{}' title {}",
                        p.id, i, fp32 ? 2 : (i < std::size(kColors) ? 1 : 4), fp32 ? 6 : 7,
                        kColors[i % std::size(kColors)], gp_label(title));
  }
  plot << ", \\\n     2 with lines lw 2 dt 3 lc rgb '#000000' title 'accurate-angle bound: 2 units'";
  p.data = data.str();
  p.script = fmt::format(R"(set title {}
set xlabel 'position m (tokens; log scale)'
set ylabel 'worst error (ε_{{32}} · |pair|; log scale)'
set logscale y
set format y '10^{{%L}}'
set xrange [0:24]
set xtics 0, 2, 24 format '2^{{%g}}'
set key outside below left Left reverse maxcols 2 samplen 3
{}
)",
                         gp_label(p.title), plot.str());
  return p;
}

// (e) seed 004's ones-vector score envelope for each d, the bound of the decaying range marked.
std::optional<PlotSpec> decay_plot(const AccuracyData& accuracy) {
  if (accuracy.decay.empty()) return std::nullopt;
  double low = 1e300, high = 0, x_max = 1;
  for (const auto& c : accuracy.decay) {
    for (const double x : c.x) x_max = std::max(x_max, x);
    for (const double e : c.envelope) {
      if (e > 0) low = std::min(low, e), high = std::max(high, e);
    }
  }
  if (!(high > 0)) return std::nullopt;
  low *= 0.7;
  high *= 1.6;
  PlotSpec p;
  p.id = kPlotDecay;
  p.title = "Long-range decay: envelope of the ones-vector score (seed 004, base 10000)";
  p.caption =
      "max |2 sum cos(x theta_i)| over log-spaced bins of the relative distance x: the envelope "
      "decays until the seed's bound x < (pi/2) 10^(4 - 8/d) (dotted verticals, same colour) and "
      "only wobbles beyond it.";
  p.width = 1000;
  std::ostringstream data, plot;
  data << "# x (relative distance n - m)  envelope (max |score| over the bin ending at x)\n";
  int index = 0;
  for (std::size_t i = 0; i < accuracy.decay.size(); ++i) {
    const auto& c = accuracy.decay[i];
    const std::string color = kColors[i % std::size(kColors)];
    data << "# [" << index << "] d = " << c.d << " envelope\n";
    for (std::size_t j = 0; j < c.x.size(); ++j) {
      if (c.envelope[j] > 0) data << num(c.x[j]) << ' ' << num(c.envelope[j]) << '\n';
    }
    data << "\n\n# [" << index + 1 << "] d = " << c.d << " bound (a vertical line)\n"
         << num(c.bound) << ' ' << num(low) << '\n' << num(c.bound) << ' ' << num(high) << "\n\n\n";
    plot << (i == 0 ? "plot " : ", \\\n     ")
         << fmt::format("'{0}.dat' index {1} using 1:2 with lines lw 2 lc rgb '{2}' title "
                        "'envelope, d = {3}{4}', \\\n     '{0}.dat' index {5} using 1:2 with lines "
                        "lw 1.5 dt 3 lc rgb '{2}' title 'bound, d = {3}: x < {6:.0f}'",
                        p.id, index, color, c.d, c.holds ? "" : " (property FAILED)", index + 1,
                        c.bound);
    index += 2;
  }
  p.data = data.str();
  p.script = fmt::format(R"(set title {}
set xlabel 'relative distance x = n - m (tokens; log scale)'
set ylabel 'max |score| over the bin (log scale)'
set logscale xy
set xrange [1:{}]
set yrange [{}:{}]
set ytics {}
set format x '10^{{%L}}'
set key outside right top
{}
)",
                         gp_label(p.title), num(x_max), num(low), num(high), log_tics_125(low, high),
                         plot.str());
  return p;
}

// (f) current / baseline ratio of limit_fraction medians per case, with 95% bootstrap intervals.
std::optional<PlotSpec> baseline_plot(const BenchData& current, const BenchData& baseline) {
  // In the current run's order: cases of one shape stay together.
  const auto rows = compare_to_baseline(current, baseline);
  if (rows.empty()) return std::nullopt;
  PlotSpec p;
  p.id = kPlotBaseline;
  p.title = "limit_fraction against the baseline run (ratio of medians, current / baseline)";
  p.caption = fmt::format(
      "Points are ratios of the limit_fraction medians, bars their 95% percentile-bootstrap "
      "intervals ({} resamples of each run's repetitions, fixed seed); red: the interval lies "
      "below 1 (slower relative to the machine), green: above 1, grey: no clear change.",
      kBootstrapResamples);
  p.width = 1300;
  p.height = std::max(320, 170 + 17 * static_cast<int>(rows.size()));
  // Three blocks: slower, unclear, faster, so that each gets its colour and legend entry.
  const char* kNames[] = {"interval below 1 (slower)", "interval contains 1", "interval above 1 (faster)"};
  const char* kGroupColors[] = {"#d62728", "#7f7f7f", "#2ca02c"};
  std::ostringstream blocks[3], ytics;
  double low = 1, high = 1;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const int group = r.interval.high < 1 ? 0 : r.interval.low > 1 ? 2 : 1;
    blocks[group] << i << ' ' << num(r.interval.ratio) << ' ' << num(r.interval.low) << ' '
                  << num(r.interval.high) << "  # " << r.name << '\n';
    ytics << (i == 0 ? "" : ", ") << gp_label(r.name) << ' ' << i;
    low = std::min(low, r.interval.low);
    high = std::max(high, r.interval.high);
  }
  std::ostringstream data, plot;
  data << "# row  ratio  ci_low  ci_high  # case   (blocks: slower, unclear, faster)\n";
  bool first = true;
  for (int g = 0; g < 3; ++g) {
    data << "# [" << g << "] " << kNames[g] << '\n';
    const std::string block = blocks[g].str();
    // gnuplot cannot plot an empty block; a row off-screen keeps the index numbering.
    data << (block.empty() ? "-1 NaN NaN NaN\n" : block) << "\n\n";
    if (block.empty()) continue;
    plot << (first ? "plot " : ", \\\n     ")
         << fmt::format("'{}.dat' index {} using 2:1:3:4 with xerrorbars pt 7 ps 0.6 lw 1.5 "
                        "lc rgb '{}' title '{}'",
                        p.id, g, kGroupColors[g], kNames[g]);
    first = false;
  }
  // Ratios are multiplicative: on a log axis 0.5 and 2 sit equally far from 1. Labelled tics
  // from a fine set for a narrow range, a coarse one otherwise (gnuplot's would be decades only).
  const double x_low = low / 1.08, x_high = high * 1.08;
  const bool narrow = x_high / x_low < 1.8;
  const std::vector<double> fine = {0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1, 1.05, 1.1, 1.25, 1.5, 2};
  const std::vector<double> coarse = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100};
  std::string xtics;
  for (const double t : narrow ? fine : coarse) {
    if (t >= x_low && t <= x_high) xtics += (xtics.empty() ? "(" : ", ") + num(t);
  }
  xtics += ")";
  p.data = data.str();
  p.script = fmt::format(R"(set title {}
set xlabel 'ratio of limit\_fraction medians, current / baseline (1 = unchanged; log scale)'
set ylabel 'benchmark case'
set yrange [{}:-1]
set logscale x
set xrange [{}:{}]
set xtics {}
set ytics ({}) font 'sans,9' scale 0
set grid xtics noytics
set arrow from 1, graph 0 to 1, graph 1 nohead lw 1.5 dt 2 lc rgb '#000000'
set key outside bottom center horizontal
{}
)",
                         gp_label(p.title), rows.size(), num(x_low), num(x_high), xtics, ytics.str(),
                         plot.str());
  return p;
}

// Applied to every plot: quiet borders and grid, so the data carries the ink.
constexpr const char* kCommonStyle = R"(set encoding utf8
set border 3 lw 1 lc rgb '#555555'
set tics nomirror out scale 0.6 textcolor rgb '#333333'
set grid xtics ytics lw 1 lc rgb '#e4e4e4'
set title font 'sans,13'
set key textcolor rgb '#222222' noautotitle
)";

}  // namespace

std::map<std::string, PlotSpec> plan_plots(const ReportInputs& inputs) {
  const Palette palette(inputs);
  std::map<std::string, PlotSpec> specs;
  const auto add = [&](std::optional<PlotSpec> spec) {
    if (spec) specs.emplace(spec->id, std::move(*spec));
  };
  if (inputs.bench) {
    add(throughput_plot(*inputs.bench, palette));
    add(limit_fraction_plot(*inputs.bench));
    add(attention_plot(*inputs.bench));
    if (inputs.baseline) add(baseline_plot(*inputs.bench, *inputs.baseline));
  }
  if (inputs.accuracy) {
    add(error_plot(*inputs.accuracy));
    add(decay_plot(*inputs.accuracy));
  }
  return specs;
}

std::map<std::string, Figure> render_plots(const std::map<std::string, PlotSpec>& specs,
                                           const fs::path& plots_dir, const fs::path& gnuplot) {
  std::map<std::string, Figure> figures;
  for (const auto& [id, spec] : specs) {
    const std::string svg = id + ".svg", script = id + ".gp";
    {
      std::ofstream dat(plots_dir / (id + ".dat"));
      dat << spec.data;
      std::ofstream gp(plots_dir / script);
      gp << "# " << spec.title << "\n# Re-render: cd into this directory, then `gnuplot " << script
         << "` (reads " << id << ".dat, writes " << svg << ").\n"
         << fmt::format("set terminal svg size {},{} dynamic enhanced font 'sans,11'\n", spec.width,
                        spec.height)
         << "set output '" << svg << "'\n"
         << kCommonStyle << spec.script;
      if (!dat.flush() || !gp.flush()) {
        throw InvalidInput(fmt::format("cannot write the plot files in '{}'", plots_dir.string()));
      }
    }
    run_gnuplot(gnuplot, plots_dir, script, svg);
    std::ifstream in(plots_dir / svg);
    std::ostringstream text;
    text << in.rdbuf();
    figures[id] = Figure{id, spec.title, spec.caption, "plots/" + svg, text.str()};
  }
  return figures;
}

}  // namespace ropecheck
