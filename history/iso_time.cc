// parse_iso8601(), format_utc() and compact_utc() (iso_time.h), on std::chrono's civil calendar.
#include "history/iso_time.h"

#include <fmt/format.h>

#include <chrono>
#include <charconv>

namespace ropecheck::history {
namespace {

// Exactly `digits` decimal digits at text[at..]; advances `at`.
std::optional<int> take_digits(std::string_view text, std::size_t& at, std::size_t digits) {
  if (at + digits > text.size()) return std::nullopt;
  int value = 0;
  const char* first = text.data() + at;
  const auto [end, error] = std::from_chars(first, first + digits, value);
  if (error != std::errc() || end != first + digits) return std::nullopt;
  at += digits;
  return value;
}

bool take_char(std::string_view text, std::size_t& at, char c) {
  if (at >= text.size() || text[at] != c) return false;
  ++at;
  return true;
}

struct CivilTime {
  int year, month, day, hour, minute, second;
};

CivilTime civil_of(std::int64_t seconds) {
  using namespace std::chrono;
  const sys_seconds instant{std::chrono::seconds(seconds)};
  const auto day = floor<days>(instant);
  const year_month_day ymd{day};
  const hh_mm_ss time{instant - day};
  return {static_cast<int>(ymd.year()), static_cast<int>(static_cast<unsigned>(ymd.month())),
          static_cast<int>(static_cast<unsigned>(ymd.day())), static_cast<int>(time.hours().count()),
          static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count())};
}

}  // namespace

std::optional<std::int64_t> parse_iso8601(std::string_view text) {
  std::size_t at = 0;
  const auto year = take_digits(text, at, 4);
  if (!year || !take_char(text, at, '-')) return std::nullopt;
  const auto month = take_digits(text, at, 2);
  if (!month || !take_char(text, at, '-')) return std::nullopt;
  const auto day = take_digits(text, at, 2);
  if (!day || !take_char(text, at, 'T')) return std::nullopt;
  const auto hour = take_digits(text, at, 2);
  if (!hour || !take_char(text, at, ':')) return std::nullopt;
  const auto minute = take_digits(text, at, 2);
  if (!minute || !take_char(text, at, ':')) return std::nullopt;
  const auto second = take_digits(text, at, 2);
  if (!second) return std::nullopt;
  if (take_char(text, at, '.')) {
    const std::size_t from = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    if (at == from) return std::nullopt;
  }
  int offset_minutes = 0;
  if (!take_char(text, at, 'Z')) {
    if (at >= text.size() || (text[at] != '+' && text[at] != '-')) return std::nullopt;
    const int sign = text[at++] == '-' ? -1 : 1;
    const auto offset_hours = take_digits(text, at, 2);
    take_char(text, at, ':');  // "+01:00" and "+0100" alike
    const auto offset_mins = take_digits(text, at, 2);
    if (!offset_hours || !offset_mins || *offset_hours > 23 || *offset_mins > 59) return std::nullopt;
    offset_minutes = sign * (*offset_hours * 60 + *offset_mins);
  }
  if (at != text.size()) return std::nullopt;
  using namespace std::chrono;
  const year_month_day ymd{std::chrono::year(*year), std::chrono::month(static_cast<unsigned>(*month)),
                           std::chrono::day(static_cast<unsigned>(*day))};
  if (!ymd.ok() || *hour > 23 || *minute > 59 || *second > 60) return std::nullopt;
  const std::int64_t days_since_epoch = sys_days(ymd).time_since_epoch().count();
  // The local time minus its offset from UTC is UTC.
  return days_since_epoch * 86400 + *hour * 3600 + *minute * 60 + *second - offset_minutes * 60;
}

std::string format_utc(std::int64_t seconds) {
  const CivilTime t = civil_of(seconds);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", t.year, t.month, t.day, t.hour,
                     t.minute, t.second);
}

std::string compact_utc(std::int64_t seconds) {
  const CivilTime t = civil_of(seconds);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", t.year, t.month, t.day, t.hour, t.minute,
                     t.second);
}

}  // namespace ropecheck::history
